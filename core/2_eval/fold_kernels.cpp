#include "2_eval/fold_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <unordered_set>

#include "2_eval/kernel.h"
#include "1_base/torch_tensors.h"

namespace onnxport::core {

namespace {

// The ops the constant folder computes: those that turn sizes, ranks, indices and flags made
// of constants into constants. Kernels for other ops (Conv, random ops, ...) serve `onnxport run`
// and verification, not folding: a folded Conv would only trade a node for a large initializer.
const std::unordered_set<std::string>& foldable_ops() {
  static const std::unordered_set<std::string> ops = {
      "Identity", "Cast",   "Transpose", "Unsqueeze", "Squeeze", "Concat",      "Reshape",
      "Slice",    "Gather", "Range",     "Add",       "Sub",     "Mul",         "Div",
      "Sqrt",     "Neg",    "Equal",     "Less",      "Greater", "LessOrEqual", "GreaterOrEqual",
      "Max",      "Min",    "Not",       "And",       "Or",      "Shape",
      // the coefficient design of scripted filters (torchaudio's biquads) from constant frequencies
      "Sin",      "Cos",    "Tan",       "Pow",       "Exp"};
  return ops;
}

// A folded constant must stay small: a Range of 2^40 values would exhaust memory (and a delta
// of 0 never ends); the runtime computes such a node, if it ever runs.
bool too_large_to_fold(const onnx::NodeProto& node, const std::vector<at::Tensor>& inputs) {
  if (node.op_type() != "Range" || inputs.size() < 3) return false;
  for (const auto& t : inputs)
    if (!t.defined() || t.numel() != 1) return true;
  const double start = inputs[0].item().toDouble(), limit = inputs[1].item().toDouble(),
               delta = inputs[2].item().toDouble();
  return delta == 0 || !(std::ceil((limit - start) / delta) <= double(1 << 24));
}

}  // namespace

bool has_evaluator(const onnx::NodeProto& node) {
  return node.domain().empty() && foldable_ops().count(node.op_type()) > 0;
}

std::optional<at::Tensor> evaluate_node(const onnx::NodeProto& node, const std::vector<at::Tensor>& inputs, int opset) {
  if (!has_evaluator(node) || too_large_to_fold(node, inputs)) return std::nullopt;
  const auto& entry = eval::standard_kernels().at(node.op_type());
  if (opset < entry.since_opset || !eval::implements_version_at(node.op_type(), entry, opset)) return std::nullopt;
  const std::vector<eval::EvalValue> values(inputs.begin(), inputs.end());
  try {
    auto outputs = entry.run(eval::KernelContext(node, opset, values));
    if (outputs.empty() || outputs[0].is_sequence() || !outputs[0].tensor.defined()) return std::nullopt;
    return outputs[0].tensor;
  } catch (const std::exception&) {
    return std::nullopt;  // what a kernel refuses is left to the runtime
  }
}

std::optional<Tensor> evaluate_constant_node(const onnx::NodeProto& node, const std::vector<Tensor>& inputs,
                                             int opset) {
  if (node.output_size() > 1) return std::nullopt;
  std::vector<at::Tensor> in;
  for (const auto& t : inputs) in.push_back(to_aten(t));
  if (auto r = evaluate_node(node, in, opset)) return borrow_tensor(*r);
  return std::nullopt;
}

}  // namespace onnxport::core
