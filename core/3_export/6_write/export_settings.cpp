#include "3_export/6_write/export_settings.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "onnxport/errors.h"

namespace onnxport::core {

std::vector<std::pair<std::string, std::string>> recorded_export_settings(const ExportOptions& options) {
  std::vector<std::pair<std::string, std::string>> properties;
  const bool folded = std::any_of(options.inputs.begin(), options.inputs.end(),
                                  [](const InputSpec& spec) { return !spec.is_tensor(); });
  if (folded) {
    nlohmann::json texts = nlohmann::json::array();
    for (const auto& spec : options.inputs) texts.push_back(spec.text());
    properties.emplace_back(kRecordedInputs, texts.dump());
  }
  if (options.method != "forward") properties.emplace_back(kRecordedMethod, options.method);
  if (!options.submodule.empty()) properties.emplace_back(kRecordedSubmodule, options.submodule);
  return properties;
}

std::vector<std::string> take_recorded_export_settings(const onnx::ModelProto& model, std::vector<InputSpec>& inputs,
                                                       ExportOptions& options) {
  std::vector<std::string> taken;
  for (const auto& property : model.metadata_props()) {
    if (property.key() == kRecordedInputs && inputs.empty()) {
      const auto texts = nlohmann::json::parse(property.value(), nullptr, /*allow_exceptions=*/false);
      if (!texts.is_array())
        throw ModelError("the ONNX file's " + std::string(kRecordedInputs) + " is not a JSON list of --input specs",
                         ErrorContext::with_hint("give the export's --input again"));
      for (const auto& text : texts) {
        if (!text.is_string())
          throw ModelError("the ONNX file's " + std::string(kRecordedInputs) + " holds " + text.dump() +
                               ", not an --input spec",
                           ErrorContext::with_hint("give the export's --input again"));
        inputs.push_back(InputSpec::parse(text.get<std::string>()));
        taken.push_back("--input " + text.get<std::string>());
      }
    } else if (property.key() == kRecordedMethod && options.method == "forward") {
      options.method = property.value();
      taken.push_back("--method " + property.value());
    } else if (property.key() == kRecordedSubmodule && options.submodule.empty()) {
      options.submodule = property.value();
      taken.push_back("--submodule " + property.value());
    }
  }
  return taken;
}

}  // namespace onnxport::core
