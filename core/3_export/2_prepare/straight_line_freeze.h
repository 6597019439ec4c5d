#pragma once
// Freezing for a forward without control flow (every traced model) in less time than libtorch's
// freeze_module (swin_t: 0.042-0.050 s against 0.057-0.066 s): the module attributes the forward
// reads through `self` become constants, then the passes freeze_module runs next, except
// constant pooling. Pooling merges equal tensors of different modules, which ModuleTensorReads
// then has to give back their own; here there is nothing to give back.
#include <torch/script.h>

#include <memory>

namespace onnxport::core {

// `forward`: the module's forward, inlined; its input 0 is `module` itself. Only a forward whose
// nodes have no blocks (no prim::If, prim::Loop), whose module objects are only read by
// prim::GetAttr, and whose attributes read are tensors not needing grad or plain values (number,
// bool, string, None) is frozen here: then each read becomes a constant (a tensor the module's
// own, not a copy), constants propagate, common subexpressions merge, the peephole pass runs, no-ops
// (aten::detach) and simple tuples go, then dead code, and the function returns true. Otherwise it returns false and
// leaves the graph as it was, for freeze_module.
bool freeze_straight_line_forward(std::shared_ptr<torch::jit::Graph>& forward, const torch::jit::Module& module);

}  // namespace onnxport::core
