#include <vector>

#include "3_export/5_passes/passes.h"

namespace onnxport::core {

namespace {

// The node's perm, or nothing when it has none (the reversed dims, which need the rank).
std::optional<std::vector<int64_t>> perm_of(const onnx::NodeProto& transpose) {
  const auto* attr = find_attribute(transpose, "perm");
  if (!attr) return std::nullopt;
  return std::vector<int64_t>(attr->ints().begin(), attr->ints().end());
}

}  // namespace

size_t merge_transposes(OnnxModel& model) {
  const ValueUses uses(model);
  std::vector<bool> drop(model.nodes.size(), false);
  size_t merged = 0;
  for (size_t k = 0; k < model.nodes.size(); ++k) {
    auto& second = model.nodes[k].proto;
    if (!is_standard_domain(second) || second.op_type() != "Transpose" || second.input_size() != 1) continue;
    const auto made = uses.producer.find(second.input(0));
    if (made == uses.producer.end() || drop[made->second] || uses.count(second.input(0)) != 1) continue;
    const auto& first = model.nodes[made->second].proto;
    if (!is_standard_domain(first) || first.op_type() != "Transpose") continue;
    const auto p1 = perm_of(first), p2 = perm_of(second);
    if (!p1 || !p2 || p1->size() != p2->size()) continue;
    // second's dim i is first's dim p2[i], which is the input's dim p1[p2[i]].
    std::vector<int64_t> composed;
    for (int64_t i : *p2) composed.push_back((*p1)[static_cast<size_t>(i)]);
    second.set_input(0, first.input(0));
    for (auto& attr : *second.mutable_attribute())
      if (attr.name() == "perm") {
        attr.clear_ints();
        for (int64_t p : composed) attr.add_ints(p);
      }
    drop[made->second] = true;
    ++merged;
  }
  apply_rewrite(model, drop, {}, {});
  return merged;
}

}  // namespace onnxport::core
