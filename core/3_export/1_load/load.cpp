#include "3_export/1_load/load.h"

#include <glob.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/frontend/tracer.h>

#include <optional>

#include "1_base/input_file.h"
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

// Where torchvision's op library is found when torchvision is installed: Debian's python3-
// torchvision, a pip install, or a C++ libtorchvision.
const char* kTorchvisionLibraries[] = {
    "/usr/lib/python3/dist-packages/torchvision/_C*.so", "/usr/local/lib/python3*/dist-packages/torchvision/_C*.so",
    "/usr/local/lib/python3*/site-packages/torchvision/_C*.so", "/usr/lib/x86_64-linux-gnu/libtorchvision.so*",
    "/usr/local/lib/libtorchvision.so*"};

std::optional<std::string> find_torchvision_library() {
  for (const char* pattern : kTorchvisionLibraries) {
    glob_t found{};
    const bool any = ::glob(pattern, 0, nullptr, &found) == 0 && found.gl_pathc > 0;
    std::optional<std::string> first = any ? std::optional<std::string>(found.gl_pathv[0]) : std::nullopt;
    ::globfree(&found);
    if (first) return first;
  }
  return std::nullopt;
}

torch::jit::Module load_torchscript(const std::string& path) {
  try {
    return torch::jit::load(path);
  } catch (const c10::Error&) {
    throw;
  } catch (const std::exception& e) {
    // A model that calls torchvision's ops (nms, roi_align) needs torchvision's op library.
    if (std::string(e.what()).find("Unknown builtin op: torchvision::") == std::string::npos) throw;
    auto library = find_torchvision_library();
    if (!library) {
      std::string searched;
      for (const char* pattern : kTorchvisionLibraries) searched += std::string(searched.empty() ? "" : ", ") + pattern;
      throw ModelError("cannot load TorchScript model '" + path + "': it calls torchvision ops (" +
                           first_line(e.what()) + ") and torchvision's op library is not in " + searched,
                       ErrorContext::for_file(path,
                                              "install python3-torchvision, or pass its library with "
                                              "--load-op-library PATH"));
    }
    load_op_library(*library);
    return torch::jit::load(path);
  }
}

}  // namespace

torch::jit::Module load_torchscript_file(const std::string& path) {
  require_regular_file(path, "the model", "give the path of a TorchScript file saved with torch.jit.save");
  try {
    return load_torchscript(path);
  } catch (const Error&) {
    throw;
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
}

void define_forward_from_overload(torch::jit::Module& module) {
  if (module.find_method("forward")) return;
  std::string overloads;
  for (const auto& method : module.get_methods()) {
    const std::string& name = method.name();
    if (name.rfind("forward__", 0) != 0) continue;
    const auto& schema = method.function().getSchema();
    overloads += (overloads.empty() ? "" : ", ") + c10::toString(schema);
    if (schema.arguments().size() < 2 || !schema.arguments()[1].type()->cast<c10::TensorType>()) continue;
    auto& overload = torch::jit::toGraphFunction(method.function());
    auto* unit = module._ivalue()->compilation_unit().get();
    auto* forward = unit->create_function(c10::QualifiedName(*module.type()->name(), "forward"),
                                          overload.graph()->copy(), /*shouldMangle=*/true);
    forward->setSchema(schema.cloneWithName("forward", ""));
    module.type()->addMethod(forward);
    return;
  }
  throw ModelError(
      "the module has no forward method" +
          (overloads.empty() ? std::string() : " and no overload of it takes a tensor (" + overloads + ")"),
      ErrorContext::with_hint("export a module whose forward takes the example inputs"));
}

LoadedModel load_model_file(const std::string& path, const ExportOptions& options,
                            std::vector<torch::jit::IValue> inputs) {
  LoadedModel loaded;
  loaded.module = load_torchscript_file(path);
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
