#include "load.h"

#include <torch/csrc/jit/frontend/tracer.h>

#include "onnxport/errors.h"
#include "onnxport/export.h"

namespace onnxport::core {

namespace {

const char* kGiveInputs = "give --input NAME:1x3x224x224:float32 (or NAME=FILE.npy) for each forward argument";

// The first line of an exception's text, without leading blank lines.
std::string first_line(const std::string& text) {
  const auto start = text.find_first_not_of("\n ");
  const std::string trimmed = text.substr(start == std::string::npos ? 0 : start);
  return trimmed.substr(0, trimmed.find('\n'));
}

}  // namespace

LoadedModel load_model_file(const std::string& path, const ExportOptions& options,
                            std::vector<torch::jit::IValue> inputs) {
  LoadedModel loaded;
  try {
    loaded.module = torch::jit::load(path);
  } catch (const c10::Error& e) {
    throw ModelError(
        "cannot load TorchScript model '" + path + "': " + first_line(e.what_without_backtrace()),
        ErrorContext::for_file(path, "save it with torch.jit.trace(...).save() or torch.jit.script(...).save()"));
  } catch (const std::exception& e) {
    // The TorchScript compiler reports unknown ops ("Unknown builtin op: vendor::fancy").
    throw ModelError("cannot load TorchScript model '" + path + "': " + first_line(e.what()),
                     ErrorContext::for_file(path,
                                            "if the model uses custom torch ops, load the library that registers "
                                            "them with --load-op-library"));
  }
  loaded.module_owned = true;
  loaded.inputs = inputs.empty() ? make_example_inputs(options.inputs, options.seed) : std::move(inputs);
  if (loaded.inputs.empty()) throw ConfigError("no example inputs", ErrorContext::for_file(path, kGiveInputs));
  return loaded;
}

LoadedModel load_module(const torch::jit::Module& module, std::vector<torch::jit::IValue> inputs) {
  if (inputs.empty()) throw ConfigError("no example inputs", ErrorContext::with_hint(kGiveInputs));
  LoadedModel loaded;
  loaded.module = module;
  loaded.inputs = std::move(inputs);
  return loaded;
}

LoadedModel load_traced_function(const std::function<torch::jit::IValue(std::vector<torch::jit::IValue>)>& fn,
                                 std::vector<torch::jit::IValue> inputs,
                                 const std::map<std::string, at::Tensor>& named_parameters) {
  // The tracer records parameters as constants, which it refuses for tensors that require
  // grad: switch that off for the duration of the trace and restore it afterwards.
  struct GradOff {
    std::vector<at::Tensor> tensors;
    ~GradOff() {
      for (auto& t : tensors) t.requires_grad_(true);
    }
  } grad_off;
  LoadedModel loaded;
  for (const auto& [name, t] : named_parameters) {
    loaded.traced_parameter_names.emplace(t.data_ptr(), name);
    if (!t.requires_grad()) continue;
    grad_off.tensors.push_back(t);
    grad_off.tensors.back().requires_grad_(false);
  }
  try {
    auto traced = torch::jit::tracer::trace(
        inputs,
        [&fn](torch::jit::Stack in) -> torch::jit::Stack {
          return {fn(std::vector<torch::jit::IValue>(in.begin(), in.end()))};
        },
        [](const at::Tensor&) { return std::string(); }, /*strict=*/false, /*force_outplace=*/false);
    loaded.traced_graph = std::get<0>(traced)->graph;
  } catch (const std::exception& e) {
    throw ModelError("tracing the function failed: " + first_line(e.what()),
                     ErrorContext::with_hint("pass every parameter the function reads in named_parameters"));
  }
  loaded.inputs = std::move(inputs);
  return loaded;
}

}  // namespace onnxport::core
