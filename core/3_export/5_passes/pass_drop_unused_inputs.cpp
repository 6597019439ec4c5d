#include "3_export/5_passes/passes.h"

namespace onnxport::core {

std::vector<std::string> drop_unused_inputs(OnnxModel& model) {
  const ValueUses uses(model);
  std::vector<std::string> dropped;
  std::vector<GraphIO> kept;
  for (auto& input : model.inputs) {
    if (uses.count(input.name) > 0) {
      kept.push_back(std::move(input));
      continue;
    }
    dropped.push_back(input.name);
    model.value_types.erase(input.name);
  }
  model.inputs = std::move(kept);
  return dropped;
}

}  // namespace onnxport::core
