#include "3_export/1_load/load.h"

#include <glob.h>

#include <algorithm>
#include <c10/core/DefaultDtype.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "1_base/input_file.h"
#include "1_base/libtorch_message.h"
#include "1_base/torch_release.h"
#include "3_export/1_load/example_arguments.h"
#include "3_export/1_load/newer_operators.h"
#include "onnxport/errors.h"
#include "onnxport/export.h"

namespace onnxport::core {

namespace {

const char* kGiveInputs = "give --input NAME:1x3x224x224:float32 (or NAME=FILE.npy) for each forward argument";

// Op libraries that models call by namespace (torchvision::nms, torchaudio::_lfilter), and where
// each is found when installed: its Debian package, a pip install, or a C++ build.
struct OpLibrary {
  std::string ns;       // "torchvision": its ops are "torchvision::..."
  std::string package;  // the Debian package that installs it
  std::vector<std::string> patterns;
};

const std::vector<OpLibrary>& known_op_libraries() {
  static const std::vector<OpLibrary> libraries = {
      {"torchvision",
       "python3-torchvision",
       {"/usr/lib/python3/dist-packages/torchvision/_C*.so", "/usr/local/lib/python3*/dist-packages/torchvision/_C*.so",
        "/usr/local/lib/python3*/site-packages/torchvision/_C*.so", "/usr/lib/x86_64-linux-gnu/libtorchvision.so*",
        "/usr/local/lib/libtorchvision.so*"}},
      {"torchaudio",
       "python3-torchaudio",
       {"/usr/lib/python3/dist-packages/torchaudio/lib/libtorchaudio.so",
        "/usr/local/lib/python3*/dist-packages/torchaudio/lib/libtorchaudio.so",
        "/usr/local/lib/python3*/site-packages/torchaudio/lib/libtorchaudio.so",
        "/usr/lib/x86_64-linux-gnu/libtorchaudio.so*", "/usr/local/lib/libtorchaudio.so*"}},
  };
  return libraries;
}

// The op the TorchScript compiler's error names as unknown ("Unknown builtin op: vendor::fancy."), if any.
std::optional<std::string> unknown_operator(const std::string& error) {
  const std::string marker = "Unknown builtin op: ";
  const auto at = error.find(marker);
  if (at == std::string::npos) return std::nullopt;
  const auto start = at + marker.size();
  std::string op = error.substr(start, error.find_first_of(" \n", start) - start);
  while (!op.empty() && op.back() == '.') op.pop_back();
  return op.empty() ? std::nullopt : std::optional<std::string>(op);
}

// The known library whose ops the TorchScript compiler's error says are unknown, if any.
const OpLibrary* library_missing_from(const std::string& error) {
  const auto op = unknown_operator(error);
  if (!op) return nullptr;
  for (const OpLibrary& library : known_op_libraries())
    if (op->rfind(library.ns + "::", 0) == 0) return &library;
  return nullptr;
}

std::optional<std::string> find_first(const std::vector<std::string>& patterns) {
  for (const std::string& pattern : patterns) {
    glob_t found{};
    const bool any = ::glob(pattern.c_str(), 0, nullptr, &found) == 0 && found.gl_pathc > 0;
    std::optional<std::string> first = any ? std::optional<std::string>(found.gl_pathv[0]) : std::nullopt;
    ::globfree(&found);
    if (first) return first;
  }
  return std::nullopt;
}

void load_known_library(const OpLibrary& library, const std::string& model, const std::string& error) {
  auto file = find_first(library.patterns);
  if (!file) {
    std::string searched;
    for (const std::string& pattern : library.patterns) searched += (searched.empty() ? "" : ", ") + pattern;
    throw ModelError("cannot load TorchScript model '" + model + "': it calls " + library.ns + " ops (" +
                         libtorch_error_line(error) + ") and " + library.ns + "'s op library is not in " + searched,
                     ErrorContext::for_file(
                         model, "install " + library.package + ", or pass its library with --load-op-library PATH"));
  }
  load_op_library(*file);
}

// One line instead of the compiler's report: the op, the file, and what would make the op known. An
// aten/prim op is usually one of a newer PyTorch that newer_operators.cpp does not register (yet).
ModelError unknown_operator_error(const std::string& path, const std::string& op) {
  const std::string ns = op.substr(0, op.find("::"));
  const bool pytorch_op = ns == "aten" || ns == "prim";
  const std::string registering =
      pytorch_op ? std::string("save the model with PyTorch ") + torch_release::kVersion +
                       ", or load a library that registers " + op
                 : "load the library that registers " + ns + " ops";
  return ModelError(
      "cannot load TorchScript model '" + path + "': it calls " + op + operator_release_note(op) +
          ", which neither libtorch " + torch_release::kVersion + " nor onnxport knows",
      ErrorContext::for_file(path, registering + " with --load-op-library LIB.so, and an op pack that maps " + op +
                                       " with --plugin-dir DIR"));
}

torch::jit::Module load_torchscript(const std::string& path) {
  // A model may call the ops of several known libraries: the compiler names one unknown op at a
  // time. A library that was loaded and still leaves its ops unknown is not retried.
  std::set<const OpLibrary*> loaded;
  while (true) {
    try {
      return torch::jit::load(path);
    } catch (const c10::Error&) {
      throw;
    } catch (const std::exception& e) {
      const OpLibrary* library = library_missing_from(e.what());
      if (!library || !loaded.insert(library).second) throw;
      load_known_library(*library, path, e.what());
    }
  }
}

// What to do when libtorch stops reading a file: a custom class or type it does not know comes
// from a library that registers it; anything else failed in compiling or running the file's own
// code at load (a __setstate__ repacking weights, which a quantized engine this libtorch lacks
// may refuse), where a library would not help.
std::string load_failure_hint(const std::string& report) {
  if (report.find("torch.classes") != std::string::npos || report.find("Unknown type name") != std::string::npos ||
      report.find("Unknown builtin op") != std::string::npos)
    return "the model uses custom torch classes or ops: load the library that registers them with "
           "--load-op-library";
  return std::string("libtorch ") + torch_release::kVersion +
         " could not compile or run the file's code while loading it: check that it loads with torch.jit.load "
         "in the PyTorch that saved it; a file from a newer PyTorch may need onnxport built on that release";
}

}  // namespace

torch::jit::Module load_torchscript_file(const std::string& path) {
  require_regular_file(path, "the model",
                       "give the path of a TorchScript file (torch.jit.save) or a torch.export program (torch.export.save)");
  register_newer_operators_once();  // a newer PyTorch's file may call them
  try {
    return load_torchscript(path);
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {
    throw ModelError(
        "cannot load TorchScript model '" + path + "': " + libtorch_error_line(e.what_without_backtrace()),
        ErrorContext::for_file(path, "save it with torch.jit.trace(...).save() or torch.jit.script(...).save()"));
  } catch (const std::exception& e) {
    if (auto op = unknown_operator(e.what())) throw unknown_operator_error(path, *op);
    throw ModelError("cannot load TorchScript model '" + path + "': " + libtorch_error_line(e.what()),
                     ErrorContext::for_file(path, load_failure_hint(e.what())));
  }
}

void define_forward(torch::jit::Module& module, const std::shared_ptr<torch::jit::Graph>& graph,
                    const c10::FunctionSchema& schema) {
  if (module.find_method("forward")) module.type()->unsafeRemoveMethod("forward");
  auto* unit = module._ivalue()->compilation_unit().get();
  auto* forward = unit->create_function(c10::QualifiedName(*module.type()->name(), "forward"), graph,
                                        /*shouldMangle=*/true);
  forward->setSchema(schema.cloneWithName("forward", ""));
  module.type()->addMethod(forward);
}

namespace {

std::string names_of(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text.empty() ? "none" : text;
}

}  // namespace

void define_forward_from_overload(torch::jit::Module& module) {
  if (module.find_method("forward")) return;
  std::string overloads;
  for (const auto& method : module.get_methods()) {
    const std::string& name = method.name();
    if (name.rfind("forward__", 0) != 0) continue;
    const auto& schema = method.function().getSchema();
    overloads += (overloads.empty() ? "" : ", ") + c10::toString(schema);
    if (schema.arguments().size() < 2 || !schema.arguments()[1].type()->cast<c10::TensorType>()) continue;
    define_forward(module, torch::jit::toGraphFunction(method.function()).graph()->copy(), schema);
    return;
  }
  throw ModelError(
      "the module has no forward method" +
          (overloads.empty() ? std::string() : " and no overload of it takes a tensor (" + overloads + ")"),
      ErrorContext::with_hint("export a module whose forward takes the example inputs"));
}

std::string export_target_name(const ExportOptions& options) {
  return (options.submodule.empty() ? "" : options.submodule + ".") + options.method;
}

torch::jit::Module select_export_target(const torch::jit::Module& loaded, const ExportOptions& options,
                                        const std::string& path) {
  torch::jit::Module module = loaded;
  std::string walked;
  for (size_t start = 0; !options.submodule.empty() && start <= options.submodule.size();) {
    const size_t dot = options.submodule.find('.', start);
    const std::string part = options.submodule.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    std::vector<std::string> children;
    for (const auto& child : module.named_children()) children.push_back(child.name);
    if (std::find(children.begin(), children.end(), part) == children.end())
      throw ConfigError("--submodule '" + options.submodule + "': " +
                            (walked.empty() ? std::string("the model") : "'" + walked + "'") + " has no submodule '" +
                            part + "' (it has: " + names_of(children) + ")",
                        ErrorContext::for_file(path, "list the file's submodules with onnxport inspect " + path));
    module = module.attr(part).toModule();
    walked += (walked.empty() ? "" : ".") + part;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (options.method == "forward") return module;
  auto method = module.find_method(options.method);
  if (!method) {
    std::vector<std::string> methods;
    for (const auto& m : module.get_methods()) methods.push_back(m.name());
    throw ConfigError("--method '" + options.method + "': " +
                          (walked.empty() ? std::string("the model") : "submodule '" + walked + "'") +
                          " has no method '" + options.method + "' (it has: " + names_of(methods) + ")",
                      ErrorContext::for_file(path, "list the file's methods with onnxport inspect " + path));
  }
  // Calls the method makes (to forward, to submodules) are inlined while they still resolve.
  auto graph = torch::jit::toGraphFunction(method->function()).graph()->copy();
  torch::jit::Inline(*graph);
  define_forward(module, graph, method->function().getSchema());
  return module;
}

bool tuple_elements_one_by_one(const std::vector<InputSpec>& specs, const c10::FunctionSchema& schema) {
  for (const auto& spec : specs)
    if (!spec.is_tensor()) return false;
  const auto& args = schema.arguments();
  for (size_t i = 1; i < args.size() && i <= specs.size(); ++i) {
    c10::TypePtr type = args[i].type();
    if (auto optional = type->cast<c10::OptionalType>()) type = optional->getElementType();
    if (type->kind() == c10::TypeKind::TupleType) return true;
  }
  return false;
}

namespace {

// A forward that takes no arguments (or only ones with defaults) runs without example inputs.
bool forward_takes_arguments(const torch::jit::Module& module) {
  auto forward = module.find_method("forward");
  if (!forward) return true;
  const auto& args = forward->function().getSchema().arguments();
  for (size_t i = 1; i < args.size(); ++i)
    if (!args[i].default_value()) return true;
  return false;
}

}  // namespace

DefaultDtypeScope::DefaultDtypeScope(DefaultDtype dtype) : before_(c10::get_default_dtype()) {
  c10::set_default_dtype(dtype == DefaultDtype::Float64 ? caffe2::TypeMeta::Make<double>()
                                                        : caffe2::TypeMeta::Make<float>());
}

DefaultDtypeScope::~DefaultDtypeScope() { c10::set_default_dtype(before_); }

LoadedModel load_model_file(const std::string& path, const ExportOptions& options,
                            std::vector<torch::jit::IValue> inputs, bool whole_arguments) {
  LoadedModel loaded;
  loaded.module = select_export_target(load_torchscript_file(path), options, path);
  loaded.module_owned = true;
  loaded.parameters_private = true;
  if (inputs.empty()) {
    define_forward_from_overload(*loaded.module);
    const auto& schema = loaded.module->get_method("forward").function().getSchema();
    if (tuple_elements_one_by_one(options.inputs, schema)) {
      loaded.inputs = make_example_inputs(options.inputs, options.seed);
    } else {
      loaded.inputs = make_example_arguments(options.inputs, options.seed, schema, export_target_name(options));
      loaded.whole_arguments = true;
    }
  } else {
    loaded.inputs = std::move(inputs);
    loaded.whole_arguments = whole_arguments;
  }
  if (loaded.inputs.empty() && forward_takes_arguments(*loaded.module))
    throw ConfigError("no example inputs", ErrorContext::for_file(path, kGiveInputs));
  return loaded;
}

LoadedModel load_module(const torch::jit::Module& module, std::vector<torch::jit::IValue> inputs, bool handed_over) {
  if (inputs.empty() && forward_takes_arguments(module))
    throw ConfigError("no example inputs", ErrorContext::with_hint(kGiveInputs));
  LoadedModel loaded;
  loaded.module = module;
  loaded.module_owned = handed_over;
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
    throw ModelError("tracing the function failed: " + libtorch_error_line(e.what()),
                     ErrorContext::with_hint("pass every parameter the function reads in named_parameters"));
  }
  loaded.inputs = std::move(inputs);
  return loaded;
}

}  // namespace onnxport::core
