#include <unordered_set>

#include "3_export/5_passes/passes.h"

namespace onnxport::core {

void eliminate_dead_code(OnnxModel& model) {
  std::unordered_set<std::string> live;
  for (const auto& out : model.outputs) live.insert(out.name);
  std::vector<bool> keep(model.nodes.size(), false);
  for (size_t i = model.nodes.size(); i-- > 0;) {
    const auto& p = model.nodes[i].proto;
    bool used = false;
    for (const auto& o : p.output()) used |= live.count(o) > 0;
    if (!used) continue;
    keep[i] = true;
    for (const auto& in : p.input())
      if (!in.empty()) live.insert(in);
    for (const auto& in : captured_names(p)) live.insert(in);
  }
  std::vector<OnnxNode> nodes;
  nodes.reserve(model.nodes.size());
  for (size_t i = 0; i < model.nodes.size(); ++i)
    if (keep[i]) nodes.push_back(std::move(model.nodes[i]));
  model.nodes = std::move(nodes);
  std::vector<Initializer> inits;
  std::unordered_set<std::string> seen;
  for (auto& init : model.initializers)
    if (live.count(init.name) && seen.insert(init.name).second) inits.push_back(std::move(init));
  model.initializers = std::move(inits);
}

}  // namespace onnxport::core
