#pragma once
// A module that assigns its own attributes in forward (`self.scale = self.scale * 2`): after
// freezing, the graph still reads and writes those attributes through `self`. The export
// computes one call: each read takes the attribute's value at that point of the call (its value
// when the model was loaded, or the last value assigned before it, on the path taken: an
// assignment inside a branch or loop makes the value an If output or loop-carried value), and the
// writes go. The new value is not kept between calls of the exported model (ONNX graphs have no
// state).
#include <torch/csrc/jit/ir/ir.h>
#include <torch/script.h>

namespace onnxport::core {

// Rewrites prim::GetAttr/prim::SetAttr on `self` (graph input 0) and its submodules, for every
// attribute that forward assigns. Throws ModelError when an assignment sits inside another kind of
// block. Returns how many attributes it resolved.
size_t fold_attribute_writes(torch::jit::Graph& graph, const torch::jit::Module& self);

}  // namespace onnxport::core
