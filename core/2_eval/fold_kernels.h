#pragma once
// Constant folding with the ONNX evaluator's kernels (2_eval/kernel.h): one standard-domain node
// of the foldable ops, on constant inputs. The graph builder uses it on small constants as nodes
// are made (so sizes, ranks and flags computed from constants stay constants, and branches on
// them are decided at export time), and the fold_constants pass uses it on whatever is constant
// after conversion. Whole models run through 2_eval/evaluator.h.
#include <ATen/ATen.h>

#include <optional>
#include <vector>

#include "1_base/onnx_ir.h"
#include "1_base/torch_tensors.h"

namespace onnxport::core {

// Whether the node's op is one the folder computes (standard domain only).
bool has_evaluator(const onnx::NodeProto& node);
// The node's single output, or nullopt when the op is unknown or ATen cannot evaluate it.
std::optional<at::Tensor> evaluate_node(const onnx::NodeProto& node, const std::vector<at::Tensor>& inputs, int opset);
// The same on SDK tensors, for the graph builder (nullopt for nodes with several outputs).
std::optional<Tensor> evaluate_constant_node(const onnx::NodeProto& node, const std::vector<Tensor>& inputs, int opset);

}  // namespace onnxport::core
