#pragma once
// do_constant_folding: evaluates nodes whose inputs are all constants (initializers, Constant
// nodes, or Shape of a value whose shape is fully static) with ATen, and replaces them with
// initializers. Folded values are named after the node output they replace.
#include <optional>
#include <vector>

#include "onnx_ir.h"

namespace onnxport::core {

struct FoldStats {
  size_t folded_nodes = 0;
};

// parameters_are_constant: false with export_params=false (parameters are then graph inputs).
// Eval-mode peephole (as torch.onnx does): Conv whose only consumer is an inference
// BatchNormalization with constant statistics becomes one Conv with folded weight and bias.
// Returns the number of fused pairs.
size_t fuse_conv_batchnorm(OnnxModel& model);

FoldStats fold_constants(OnnxModel& model, int opset, bool parameters_are_constant);

// Evaluates one node whose inputs are the given constants (nullopt if its op has no folder or
// ATen cannot evaluate it). The graph builder uses it on small constants as nodes are made, so
// that sizes, ranks and flags computed from constants stay constants (and a branch on them is
// decided at export time).
std::optional<Tensor> fold_node(const onnx::NodeProto& node, const std::vector<Tensor>& inputs, int opset);

}  // namespace onnxport::core
