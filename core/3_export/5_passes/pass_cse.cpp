#include <unordered_map>
#include <unordered_set>

#include "3_export/5_passes/passes.h"

namespace onnxport::core {

namespace {

// Ops whose every run draws new values: two of them with the same inputs are not the same value.
bool is_random(const std::string& op) {
  static const std::unordered_set<std::string> random{"RandomNormal", "RandomNormalLike", "RandomUniform",
                                                      "RandomUniformLike", "Multinomial", "Bernoulli", "Dropout"};
  return random.count(op) > 0;
}

// Standard-domain ops without sub-graphs: their outputs depend only on inputs and attributes.
// Custom-domain ops are left alone (an op pack's op may have effects onnxport cannot see).
bool is_pure(const onnx::NodeProto& p) {
  if (!is_standard_domain(p) || is_random(p.op_type()) || p.output_size() == 0) return false;
  for (const auto& a : p.attribute())
    if (a.has_g() || a.graphs_size() > 0) return false;
  return true;
}

}  // namespace

size_t eliminate_common_subexpressions(OnnxModel& model) {
  std::unordered_set<std::string> graph_outputs;
  for (const auto& out : model.outputs) graph_outputs.insert(out.name);
  std::unordered_map<std::string, size_t> first_with_key;  // key -> index in `kept`
  std::unordered_map<std::string, std::string> renames;     // a repeat's output -> the first's
  std::vector<OnnxNode> kept;
  kept.reserve(model.nodes.size());
  size_t removed = 0;
  for (auto& node : model.nodes) {
    auto& p = node.proto;
    replace_uses(p, renames);
    if (!is_pure(p)) {
      kept.push_back(std::move(node));
      continue;
    }
    const std::string key = node_key(p);
    auto first = first_with_key.find(key);
    bool repeat = first != first_with_key.end();
    if (repeat) {  // the repeat's outputs must map onto outputs the first node has, none a graph output
      const auto& q = kept[first->second].proto;
      for (int i = 0; i < p.output_size() && repeat; ++i)
        repeat = p.output(i).empty() || (!q.output(i).empty() && !graph_outputs.count(p.output(i)));
    }
    if (!repeat) {
      first_with_key.emplace(key, kept.size());
      kept.push_back(std::move(node));
      continue;
    }
    const auto& q = kept[first->second].proto;
    for (int i = 0; i < p.output_size(); ++i)
      if (!p.output(i).empty()) renames[p.output(i)] = q.output(i);
    ++removed;
  }
  model.nodes = std::move(kept);
  return removed;
}

}  // namespace onnxport::core
