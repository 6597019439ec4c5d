#pragma once
// Facts that are fixed when a model is exported, folded into the TorchScript graph so that the
// branches that test them are decided at export (scripted torch.nn layers test them to pick
// fused fast paths, to format warnings and to refuse unsupported setups).
#include <torch/csrc/jit/ir/ir.h>

namespace onnxport::core {

// onnxport runs the model on the CPU, with autograd and autocast off, on dense non-nested
// tensors that do not require grad. Replaces prim::is_cuda (and the other backend tests),
// prim::device, prim::requires_grad, aten::is_grad_enabled and aten::is_autocast_enabled by
// constants, and formats constant strings (aten::format). Also decides `x is None` for values whose type cannot be None (given Optional
// arguments) and `x is y` for a value and itself or two different graph inputs, and drops `with torch.no_grad():`
// scopes (keeping their body), and decides `isinstance(x, T)` where x's static type does.
// Returns how many nodes it replaced.
size_t fold_export_time_facts(torch::jit::Block* block);

// prim::dtype and aten::dim of a top-level tensor whose type the graph's run recorded
// (record_types): the exported graph's inputs have fixed dtypes and ranks, so these are fixed
// too (sizes are not: an axis may be dynamic). Returns how many it folded.
size_t fold_recorded_types(torch::jit::Graph& graph);

}  // namespace onnxport::core
