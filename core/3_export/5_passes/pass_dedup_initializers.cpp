#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "3_export/5_passes/passes.h"

namespace onnxport::core {

namespace {

bool same_bytes(const Tensor& a, const Tensor& b) {
  if (a.nbytes() != b.nbytes()) return false;
  return a.data() == b.data() || a.nbytes() == 0 || std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

std::string dtype_and_shape(const Tensor& t) {
  std::string key = std::to_string(static_cast<int>(t.dtype()));
  for (int64_t d : t.shape()) key += "," + std::to_string(d);
  return key;
}

}  // namespace

size_t deduplicate_initializers(OnnxModel& model) {
  std::unordered_set<std::string> graph_outputs;
  for (const auto& out : model.outputs) graph_outputs.insert(out.name);
  // Candidates share dtype and shape; their bytes are compared only then (random weights differ
  // in the first bytes, so memcmp stops early), so no parameter is hashed or copied.
  std::unordered_map<std::string, std::vector<size_t>> kept_by_shape;
  std::unordered_map<std::string, std::string> renames;  // a duplicate -> the first of its kind
  std::vector<bool> drop(model.initializers.size(), false);
  for (size_t i = 0; i < model.initializers.size(); ++i) {
    const Initializer& init = model.initializers[i];
    if (graph_outputs.count(init.name) || !init.tensor.defined()) continue;
    auto& same_shape = kept_by_shape[dtype_and_shape(init.tensor)];
    const Initializer* first = nullptr;
    for (size_t j : same_shape)
      if (same_bytes(model.initializers[j].tensor, init.tensor)) {
        first = &model.initializers[j];
        break;
      }
    if (!first) {
      same_shape.push_back(i);
      continue;
    }
    if (first->name == init.name) continue;  // a repeated name is dead-code elimination's to drop
    renames[init.name] = first->name;
    drop[i] = true;
  }
  replace_uses(model.nodes, renames);
  std::vector<Initializer> kept;
  for (size_t i = 0; i < model.initializers.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(model.initializers[i]));
  model.initializers = std::move(kept);
  return renames.size();
}

}  // namespace onnxport::core
