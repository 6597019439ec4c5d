#include <unordered_map>
#include <unordered_set>

#include "onnx_eval.h"
#include "passes.h"

namespace onnxport::core {

FoldStats fold_constants(OnnxModel& model, int opset, bool parameters_are_constant) {
  FoldStats stats;
  std::unordered_map<std::string, at::Tensor> consts;
  if (parameters_are_constant)
    for (const auto& init : model.initializers) consts[init.name] = to_aten(init.tensor);
  std::unordered_set<std::string> graph_outputs;
  for (const auto& out : model.outputs) graph_outputs.insert(out.name);

  std::vector<OnnxNode> kept;
  std::vector<Initializer> folded;
  kept.reserve(model.nodes.size());
  for (auto& node : model.nodes) {
    const auto& p = node.proto;
    if (p.domain().empty() && p.op_type() == "Constant" && p.attribute_size() == 1 && p.attribute(0).has_t()) {
      consts[p.output(0)] = to_aten(from_tensor_proto(p.attribute(0).t())).clone();
      kept.push_back(std::move(node));
      continue;
    }
    if (!has_evaluator(p) || p.output_size() != 1 || graph_outputs.count(p.output(0))) {
      kept.push_back(std::move(node));
      continue;
    }
    std::vector<at::Tensor> inputs;
    bool all_constant = true;
    for (const auto& name : p.input()) {
      if (name.empty()) {
        inputs.emplace_back();
        continue;
      }
      auto c = consts.find(name);
      if (c != consts.end()) {
        inputs.push_back(c->second);
        continue;
      }
      // Shape of a value whose shape is fully static folds without its data.
      if (p.op_type() == "Shape") {
        auto t = model.value_types.find(name);
        if (t != model.value_types.end()) {
          auto shape = from_type_proto(t->second).static_shape();
          if (shape && p.attribute_size() == 0) {
            inputs.push_back(at::empty(*shape, at::TensorOptions().dtype(at::kFloat)));
            continue;
          }
        }
      }
      all_constant = false;
      break;
    }
    std::optional<at::Tensor> result;
    if (all_constant) result = evaluate_node(p, inputs, opset);
    if (!result) {
      kept.push_back(std::move(node));
      continue;
    }
    const std::string& out = p.output(0);
    Tensor t = owned_tensor(*result);
    folded.push_back(Initializer{out, t});
    consts[out] = to_aten(folded.back().tensor);
    TensorType type;
    type.dtype = t.dtype();
    std::vector<Dim> dims;
    for (int64_t d : t.shape()) dims.push_back(Dim::fixed(d));
    type.shape = dims;
    model.value_types[out] = to_type_proto(type);
    ++stats.folded_nodes;
  }
  model.nodes = std::move(kept);
  for (auto& f : folded) model.initializers.push_back(std::move(f));
  // Small folded values read better (and are what ORT expects for shape inputs) as initializers;
  // Constant nodes that are now unused disappear in dead-code elimination.
  return stats;
}

}  // namespace onnxport::core
