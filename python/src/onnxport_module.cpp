// _onnxport: the C++ half of the Python package (python/onnxport/__init__.py). It takes
// torch's own objects (a ScriptModule's C++ module, tensors) from the same libtorch that
// Debian's python3-torch uses, and runs the C++ API's Exporter on them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/jit/python/pybind_utils.h>  // the caster for torch::jit::Module

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onnxport/errors.h"
#include "onnxport/export.h"
#include "onnxport/listings.h"
#include "onnxport/option_table.h"
#include "onnxport/python_bridge.h"
#include "onnxport/report.h"
#include "1_base/intra_op_threads.h"
#include "trace_sources.h"

namespace py = pybind11;

namespace onnxport::python {

namespace {

const char* const kOrigin = "onnxport.export()";

// An example input: tensors, and tuples, lists, dicts, numbers and None holding them.
torch::jit::IValue to_ivalue(py::handle h) {
  if (THPVariable_Check(h.ptr())) return THPVariable_Unpack(h.ptr());
  if (h.is_none()) return {};
  if (py::isinstance<py::bool_>(h)) return h.cast<bool>();
  if (py::isinstance<py::int_>(h)) return h.cast<int64_t>();
  if (py::isinstance<py::float_>(h)) return h.cast<double>();
  if (py::isinstance<py::tuple>(h)) {
    std::vector<torch::jit::IValue> items;
    for (auto item : h) items.push_back(to_ivalue(item));
    return c10::ivalue::Tuple::create(std::move(items));
  }
  if (py::isinstance<py::list>(h)) {
    c10::List<at::Tensor> tensors;
    for (auto item : h) {
      if (!THPVariable_Check(item.ptr()))
        throw ConfigError(std::string(kOrigin) + ": a list in `args` holds a " +
                              py::str(item.get_type().attr("__name__")).cast<std::string>(),
                          ErrorContext::with_hint("lists of example inputs may hold tensors only; use a tuple"));
      tensors.push_back(THPVariable_Unpack(item.ptr()));
    }
    return tensors;
  }
  if (py::isinstance<py::dict>(h)) {
    c10::Dict<std::string, at::Tensor> entries;
    for (auto [key, value] : h.cast<py::dict>()) {
      if (!py::isinstance<py::str>(key) || !THPVariable_Check(value.ptr()))
        throw ConfigError(std::string(kOrigin) + ": a dict in `args` must map strings to tensors",
                          ErrorContext::with_hint("a trailing dict passes keyword arguments; put others in a tuple"));
      entries.insert(key.cast<std::string>(), THPVariable_Unpack(value.ptr()));
    }
    return entries;
  }
  throw ConfigError(std::string(kOrigin) + ": an argument of type " +
                        py::str(h.get_type().attr("__name__")).cast<std::string>() + " cannot be an example input",
                    ErrorContext::with_hint("pass tensors, numbers, None, or tuples/lists of them"));
}

// One Exporter per list of plugin directories, kept for the process: packs load once.
std::shared_ptr<Exporter> exporter_for(const std::vector<std::string>& plugin_dirs) {
  static std::map<std::vector<std::string>, std::shared_ptr<Exporter>> exporters;
  auto& slot = exporters[plugin_dirs];
  if (!slot) slot = std::make_shared<Exporter>(plugin_dirs);
  return slot;
}

// The symbolics registered in this process with torch.onnx.register_custom_op_symbolic, as they are
// now (registrations come and go between exports), replace the ones the exporter had.
void use_process_symbolics(Exporter& exporter) {
  PythonPackContents contents = python_bridge::process_symbolics();
  exporter.registry().remove_python_pack(contents.id);
  exporter.registry().add_python_pack(PackRef{contents.id, ""}, contents);
}

// The TorchScript module torch.jit.trace makes of an nn.Module before recording its forward
// (TracedModule): the parameters, buffers and submodules, each module of a class of its own, the
// training flag, and what else the tracer reads through the module: tensors and TorchScript
// objects (a quantized layer's packed weights) kept as plain attributes. TracedModule infers every
// class from the Python object (0.056 s of a resnet50 trace of 0.144 s, and each class stays in
// torch's global compilation unit for the life of the process); here the classes go into `cu`,
// which the module holds. A ScriptModule inside is taken as it is, as torch.jit.trace takes it.
struct TracedModuleBuilder {
  py::object script_module_class = py::module::import("torch.jit").attr("ScriptModule");
  py::object qualified_name = py::module::import("torch._jit_internal").attr("_qualified_name");
  py::object script_object_class = py::module::import("torch").attr("ScriptObject");
  std::shared_ptr<torch::jit::CompilationUnit> cu = std::make_shared<torch::jit::CompilationUnit>();

  torch::jit::Module build(py::handle nn_module) {
    if (py::isinstance(nn_module, script_module_class)) return nn_module.attr("_c").cast<torch::jit::Module>();
    torch::jit::Module module(qualified_name(nn_module.get_type()).cast<std::string>(), cu, /*shouldMangle=*/true);
    for (auto [name, tensor] : nn_module.attr("_parameters").cast<py::dict>())
      if (!tensor.is_none())
        module.register_parameter(name.cast<std::string>(), THPVariable_Unpack(tensor.ptr()), false);
    for (auto [name, tensor] : nn_module.attr("_buffers").cast<py::dict>())
      if (!tensor.is_none()) module.register_buffer(name.cast<std::string>(), THPVariable_Unpack(tensor.ptr()));
    for (auto [name, child] : nn_module.attr("_modules").cast<py::dict>())
      if (!child.is_none()) module.register_module(name.cast<std::string>(), build(child));
    module.register_attribute("training", c10::BoolType::get(), nn_module.attr("training").cast<bool>());
    for (auto [name, value] : nn_module.attr("__dict__").cast<py::dict>()) {
      if (THPVariable_Check(value.ptr())) {
        module.register_attribute(name.cast<std::string>(), c10::TensorType::get(), THPVariable_Unpack(value.ptr()));
      } else if (py::isinstance(value, script_object_class)) {
        const c10::intrusive_ptr<c10::ivalue::Object> object = value.cast<torch::jit::Object>()._ivalue();
        module.register_attribute(name.cast<std::string>(), object->type(), object);
      }
    }
    return module;
  }
};

// The graph of every method of the module and its submodules.
std::vector<std::shared_ptr<torch::jit::Graph>> method_graphs(const torch::jit::Module& module) {
  std::vector<std::shared_ptr<torch::jit::Graph>> graphs;
  for (const auto& submodule : module.modules())
    for (const auto& method : submodule.get_methods()) graphs.push_back(method.graph());
  return graphs;
}

// Runs `run(options)` without the GIL and returns the report (docs/export-report.md) as JSON text;
// with `report_path`, also writes it there, for a failed export too (as `onnxport export --report`
// does). `model` names the model in the report.
template <class Run>
std::string export_reported(Exporter& exporter, const std::string& model, const std::string& output_path,
                            const std::string& options_json, const std::string& report_path, Run run) {
  ExportOptions options;
  apply_options_json(options_json, kOrigin, options);
  options.validate();
  if (!report_path.empty()) check_report_path(report_path, {}, {output_path, options.external_data_file});
  use_process_symbolics(exporter);
  py::gil_scoped_release released;
  ReportInput in{model, output_path, nullptr, &options, std::nullopt};
  ExportReport report;
  try {
    report = run(options);
  } catch (const Error& e) {
    if (!report_path.empty()) {
      in.report = &exporter.last_report();
      in.failure = ReportFailure::from(e);
      write_export_report(report_path, in);
    }
    throw;
  }
  in.report = &report;
  if (!report_path.empty()) write_export_report(report_path, in);
  return export_report_json(in);
}

std::vector<torch::jit::IValue> ivalues(const py::list& args) {
  std::vector<torch::jit::IValue> inputs;
  for (auto arg : args) inputs.push_back(to_ivalue(arg));
  return inputs;
}

// `hand_over`: the module was traced for this export and is not used again, so it is frozen in
// place; never for a module whose graphs hold Python objects (prim::PythonOp nodes): freezing
// destroys nodes without the GIL.
std::string export_module(Exporter& exporter, const torch::jit::Module& module, const py::list& args,
                          const std::string& output_path, const std::string& options_json,
                          const std::string& report_path, bool hand_over) {
  std::vector<torch::jit::IValue> inputs = ivalues(args);
  return export_reported(exporter, "<python module>", output_path, options_json, report_path,
                         [&](const ExportOptions& options) {
                           return hand_over ? exporter.export_module(torch::jit::Module(module), std::move(inputs),
                                                                     output_path, options)
                                            : exporter.export_module(module, std::move(inputs), output_path, options);
                         });
}

// A model file (a torch.export program saved by the package: onnxport.export of an ExportedProgram);
// `args` empty: the example inputs the file holds.
std::string export_file(Exporter& exporter, const std::string& model_path, const py::list& args,
                        const std::string& output_path, const std::string& options_json,
                        const std::string& report_path) {
  std::vector<torch::jit::IValue> inputs = ivalues(args);
  return export_reported(exporter, model_path, output_path, options_json, report_path,
                         [&](const ExportOptions& options) {
                           return exporter.export_file(model_path, output_path, options, std::move(inputs));
                         });
}

}  // namespace

PYBIND11_MODULE(_onnxport, m) {
  m.doc() = "onnxport's C++ exporter; use the onnxport package's functions";
  // A torch.onnx.errors.OnnxExporterError (a RuntimeError; in PyTorch 1.13 and 2.x alike), so that code
  // catching torch.onnx's export errors catches onnxport's too.
  static py::exception<Error> export_error(m, "ExportError",
                                           py::module_::import("torch.onnx.errors").attr("OnnxExporterError"));
  // The message is the line the CLI prints after "onnxport: ". Local: torch's own bindings keep
  // translating their errors (pybind11's global translators are shared with them).
  py::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(export_error.ptr(), (std::string(e.kind()) + ": " + e.what()).c_str());
    } catch (const c10::Error& e) {
      const std::string what = e.what_without_backtrace();
      PyErr_SetString(export_error.ptr(), ("internal error: " + what.substr(0, what.find('\n')) +
                                           " — this is an onnxport bug; please report it")
                                              .c_str());
    }
  });
  py::class_<Exporter, std::shared_ptr<Exporter>>(m, "Exporter")
      .def("export", &export_module, py::arg("module"), py::arg("args"), py::arg("output_path"),
           py::arg("options_json"), py::arg("report_path"), py::arg("hand_over") = false)
      .def("export_file", &export_file, py::arg("model_path"), py::arg("args"), py::arg("output_path"),
           py::arg("options_json"), py::arg("report_path"));
  m.def("exporter", &exporter_for, py::arg("plugin_dirs"));
  m.def(
      "traced_module_skeleton", [](py::handle nn_module) { return TracedModuleBuilder().build(nn_module); },
      "the torch._C.ScriptModule torch.jit.trace records an nn.Module's forward into, without TracedModule");
  // The trace runs on the threads the export runs the model on (option threads): None takes the
  // option's default, 0 leaves torch's setting.
  struct TraceThreads {
    explicit TraceThreads(int w) : wanted(w) {}
    int wanted;
    std::optional<core::IntraOpThreads> guard;
  };
  py::class_<TraceThreads>(m, "intra_op_threads")
      .def(py::init([](std::optional<int> wanted) {
             return std::make_unique<TraceThreads>(wanted.value_or(ExportOptions{}.threads));
           }),
           py::arg("wanted"))
      .def("__enter__", [](TraceThreads& t) { t.guard.emplace(t.wanted); })
      .def("__exit__", [](TraceThreads& t, py::args) { t.guard.reset(); });
  m.def(
      "record_innermost_frame_sources",
      [](bool on) {
        static std::unique_ptr<InnermostFrameSources> recording;
        if (on && !recording) recording = std::make_unique<InnermostFrameSources>();
        if (!on) recording.reset();
      },
      py::arg("on"), "while on, traced nodes record only the innermost Python frame as their source (trace_sources.h)");
  m.def("method_graphs", &method_graphs, "the graphs of every method of a torch._C.ScriptModule and its submodules");
  m.def("bridge", &python_bridge::bridge_runtime, "the Python op-pack bridge's module (onnxport/_bridge.py)");
  m.def(
      "ops_json",
      [](const std::vector<std::string>& plugin_dirs, int opset, const std::string& pack) {
        Exporter& exporter = *exporter_for(plugin_dirs);
        use_process_symbolics(exporter);
        return mappings_json(list_mappings(exporter, opset, pack));
      },
      py::arg("plugin_dirs"), py::arg("opset"), py::arg("pack"));
  m.def(
      "plugins_json",
      [](const std::vector<std::string>& plugin_dirs) { return packs_json(*exporter_for(plugin_dirs)); },
      py::arg("plugin_dirs"));
}

}  // namespace onnxport::python
