#include <unordered_map>
#include <unordered_set>

#include "3_export/5_passes/passes.h"

namespace onnxport::core {

namespace {

bool is_identity_permutation(const onnx::NodeProto& p, const std::optional<TensorType>& in) {
  const auto* perm = find_attribute(p, "perm");
  if (!perm) return in && in->shape && in->shape->size() <= 1;  // no perm reverses the dims
  for (int i = 0; i < perm->ints_size(); ++i)
    if (perm->ints(i) != i) return false;
  return true;
}

// Reshape, Expand, Flatten and Squeeze leave a value alone when its static shape comes out equal.
bool keeps_static_shape(const std::optional<TensorType>& in, const std::optional<TensorType>& out) {
  if (!in || !out) return false;
  auto a = in->static_shape(), b = out->static_shape();
  return a && b && *a == *b;
}

// Dropout computes its input unchanged in inference: its mask output unread, and (from opset 12)
// no training_mode input.
bool is_inference_dropout(const onnx::NodeProto& p, const std::unordered_map<std::string, int>& readers,
                          int opset) {
  if (opset < 7) return false;  // Dropout-6 and older take an is_test attribute
  if (p.input_size() > 2 && !p.input(2).empty()) return false;
  return p.output_size() < 2 || p.output(1).empty() || !readers.count(p.output(1));
}

}  // namespace

std::map<std::string, size_t> remove_noops(OnnxModel& model, int opset, bool inference) {
  const auto types = known_types(model);
  auto type_of = [&](const std::string& name) -> std::optional<TensorType> {
    auto t = types.find(name);
    return t == types.end() ? std::nullopt : std::optional<TensorType>(t->second);
  };
  const auto readers = ValueUses(model).readers;
  std::unordered_set<std::string> graph_outputs;
  for (const auto& out : model.outputs) graph_outputs.insert(out.name);

  std::map<std::string, size_t> removed;
  std::unordered_map<std::string, std::string> renames;  // a no-op's output -> its input
  std::vector<OnnxNode> kept;
  kept.reserve(model.nodes.size());
  for (auto& node : model.nodes) {
    auto& p = node.proto;
    replace_uses(p, renames);
    bool noop = false;
    if (is_standard_domain(p) && p.input_size() >= 1 && !p.input(0).empty() && p.output_size() >= 1 &&
        !graph_outputs.count(p.output(0))) {
      const std::string& op = p.op_type();
      const auto in = type_of(p.input(0));
      if (op == "Identity") {
        noop = true;
      } else if (op == "Cast") {
        const auto* to = find_attribute(p, "to");
        noop = to && in && in->dtype != DType::Undefined && static_cast<int64_t>(in->dtype) == to->i();
      } else if (op == "Transpose") {
        noop = is_identity_permutation(p, in);
      } else if (op == "Reshape" || op == "Expand" || op == "Flatten" || op == "Squeeze") {
        noop = keeps_static_shape(in, type_of(p.output(0)));
      } else if (op == "Dropout") {
        noop = inference && is_inference_dropout(p, readers, opset);
      }
    }
    if (!noop) {
      kept.push_back(std::move(node));
      continue;
    }
    renames[p.output(0)] = p.input(0);
    ++removed[p.op_type()];
  }
  model.nodes = std::move(kept);
  return removed;
}

}  // namespace onnxport::core
