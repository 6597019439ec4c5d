#include "onnxport/options.h"

#include <algorithm>
#include <set>

#include "1_base/onnx_release.h"
#include "onnxport/errors.h"

namespace onnxport {

int max_opset() { return std::min(kMaxMappedOpset, core::onnx_release::newest_opset()); }

namespace {
ConfigError config_error(const std::string& message, const std::string& hint = "") {
  ErrorContext ctx;
  ctx.hint = hint;
  return ConfigError(message, ctx);
}

}  // namespace

const char* training_mode_name(TrainingMode m) {
  switch (m) {
    case TrainingMode::Eval: return "eval";
    case TrainingMode::Preserve: return "preserve";
    case TrainingMode::Train: return "train";
  }
  return "?";
}

const char* export_mode_name(ExportMode m) {
  switch (m) {
    case ExportMode::Trace: return "trace";
    case ExportMode::Script: return "script";
    case ExportMode::Auto: return "auto";
  }
  return "?";
}

ExportMode parse_export_mode(const std::string& s) {
  if (s == "trace") return ExportMode::Trace;
  if (s == "script") return ExportMode::Script;
  if (s == "auto") return ExportMode::Auto;
  throw config_error("mode must be trace, script or auto, got '" + s + "'");
}

const char* default_dtype_name(DefaultDtype d) { return d == DefaultDtype::Float64 ? "float64" : "float32"; }

DefaultDtype parse_default_dtype(const std::string& s) {
  if (s == "float32") return DefaultDtype::Float32;
  if (s == "float64") return DefaultDtype::Float64;
  throw config_error("default_dtype must be float32 or float64, got '" + s + "'",
                     "torch.set_default_dtype takes these two; give the one the model was written for");
}

TrainingMode parse_training_mode(const std::string& s) {
  if (s == "eval") return TrainingMode::Eval;
  if (s == "preserve") return TrainingMode::Preserve;
  if (s == "train") return TrainingMode::Train;
  throw config_error("training must be eval, preserve or train, got '" + s + "'");
}

const char* operator_export_type_name(OperatorExportType t) {
  switch (t) {
    case OperatorExportType::Onnx: return "onnx";
    case OperatorExportType::OnnxAten: return "onnx_aten";
    case OperatorExportType::OnnxAtenFallback: return "onnx_aten_fallback";
    case OperatorExportType::OnnxFallthrough: return "onnx_fallthrough";
  }
  return "?";
}

OperatorExportType parse_operator_export_type(const std::string& s) {
  for (auto t : {OperatorExportType::Onnx, OperatorExportType::OnnxAten, OperatorExportType::OnnxAtenFallback,
                 OperatorExportType::OnnxFallthrough})
    if (s == operator_export_type_name(t)) return t;
  throw config_error("operator_export_type '" + s + "' is unknown",
                     "use onnx, onnx_aten, onnx_aten_fallback or onnx_fallthrough");
}

void ExportOptions::validate() const {
  if (opset_version < kMinOpset || opset_version > kMaxMappedOpset)
    throw config_error("opset_version " + std::to_string(opset_version) + " is out of range",
                       "onnxport exports opsets " + std::to_string(kMinOpset) + " to " + std::to_string(max_opset()));
  if (opset_version > max_opset())
    throw config_error("opset_version " + std::to_string(opset_version) + " needs the operator schemas of ONNX " +
                           core::onnx_release::first_release_with_opset(opset_version) +
                           " or later; this build links an ONNX whose schemas end at opset " +
                           std::to_string(max_opset()),
                       "export at opset " + std::to_string(max_opset()) +
                           " or below, or use onnxport built on a newer ONNX (Debian 13's build links ONNX 1.17: "
                           "opsets up to " + std::to_string(kMaxMappedOpset) + ")");
  if (method.empty()) throw config_error("method is empty", "name the method to export, e.g. --method forward");
  if (optimize < 0 || optimize > 2)
    throw config_error("optimize level " + std::to_string(optimize) + " is out of range",
                       "use 0 (the passes torch.onnx runs), 1 (also no-ops, repeated nodes and initializers) or 2 "
                       "(also bias fusion)");
  if (threads < 0)
    throw config_error("threads " + std::to_string(threads) + " is negative",
                       "give a count of threads (1, the default) or 0 for libtorch's own setting");
  std::set<std::string> given;
  for (const auto& spec : inputs)
    if (!spec.name.empty() && !given.insert(spec.name).second)
      throw config_error("--input: name '" + spec.name + "' is given twice", "give each example input its own name");
  for (const auto* list : {&input_names, &output_names})
    for (size_t i = 0; i < list->size(); ++i)
      if ((*list)[i].empty())
        throw config_error(std::string(list == &input_names ? "--input-names" : "--output-names") + ": name " +
                               std::to_string(i + 1) + " is empty",
                           "give every graph input/output a name, e.g. --input-names image,mask");
  std::set<std::string> names;
  for (const auto& n : input_names)
    if (!names.insert(n).second)
      throw config_error("input name '" + n + "' is given twice", "give each graph input its own name");
  for (const auto& n : output_names)
    if (!names.insert(n).second)
      throw config_error("name '" + n + "' is used for two graph inputs/outputs",
                         "give each graph input and output its own name");
  if (!inputs.empty() && input_names.size() > inputs.size())
    throw config_error(std::to_string(input_names.size()) + " input names given (--input-names), but " +
                           std::to_string(inputs.size()) + " inputs (--input)",
                       "give one name per input");
  // --input NAME:... already names each graph input; a different name for it is a contradiction.
  for (size_t i = 0; i < input_names.size() && i < inputs.size(); ++i)
    if (!inputs[i].name.empty() && inputs[i].name != input_names[i])
      throw config_error("input " + std::to_string(i) + " is named '" + inputs[i].name + "' by --input and '" +
                             input_names[i] + "' by --input-names",
                         "name it in one place (--input NAME:... names the graph input)");
  std::set<std::string> extra;
  for (const auto& spec : extra_outputs) {
    if (spec.empty() || spec == "%")
      throw config_error("--extra-outputs: an empty name",
                         "give a module path (layer3.1), a TorchScript value name or an ONNX value name");
    if (!extra.insert(spec).second)
      throw config_error("--extra-outputs '" + spec + "' is given twice", "give each extra output once");
  }
  for (const auto& [domain, version] : custom_opsets)
    if (version < 1)
      throw config_error("custom opset " + domain + "=" + std::to_string(version) + " must be >= 1",
                         "opset versions start at 1");
}

}  // namespace onnxport
