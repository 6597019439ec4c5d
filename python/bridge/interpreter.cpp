#include "interpreter.h"

#include <dlfcn.h>
#include <pybind11/eval.h>

#include <mutex>
#include <stdexcept>

#include "bridge_source.h"  // generated from python/onnxport/_torch_release.py and _bridge.py: kBridgeSources

namespace py = pybind11;

namespace onnxport::python_bridge {

namespace {

void ensure_interpreter() {
  static std::once_flag started;
  std::call_once(started, [] {
    if (Py_IsInitialized()) return;  // the Python package: the process's own interpreter
    // Extension modules (torch._C, numpy) take the C API from the global symbol namespace, but
    // this library was opened RTLD_LOCAL, and libpython with it: make libpython global first.
    if (!::dlopen(ONNXPORT_PYTHON_SONAME, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD))
      throw std::runtime_error(std::string("cannot make ") + ONNXPORT_PYTHON_SONAME + " global: " + ::dlerror());
    // Not pybind11's initialize_interpreter: a Python that cannot start (a broken PYTHONHOME)
    // must fail this pack, not abort the exporter.
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;
    config.parse_argv = 0;
    const PyStatus status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status))
      throw std::runtime_error(std::string("Python cannot start: ") + (status.err_msg ? status.err_msg : "unknown error") +
                               (status.func ? std::string(" (") + status.func + ")" : ""));
    PyEval_SaveThread();  // every use takes the GIL through PythonScope, from any thread
  });
}

}  // namespace

PythonScope::PythonScope() {
  ensure_interpreter();
  state_ = static_cast<int>(PyGILState_Ensure());
}

PythonScope::~PythonScope() { PyGILState_Release(static_cast<PyGILState_STATE>(state_)); }

py::module_ bridge_module() {
  static py::module_* module = nullptr;  // never freed: the interpreter outlives every export
  if (module) return *module;
  auto m = py::reinterpret_borrow<py::module_>(py::module_::import("types").attr("ModuleType")("onnxport._bridge"));
  m.attr("__file__") = "onnxport/_bridge.py";
  try {
    // each compiled under its own name, so that tracebacks (and the frames errors name) say which file
    const py::module_ builtins = py::module_::import("builtins");
    for (const BridgeSource& source : kBridgeSources)
      builtins.attr("exec")(builtins.attr("compile")(source.text, source.file, "exec"), m.attr("__dict__"));
  } catch (py::error_already_set& e) {
    throw std::runtime_error("Python op packs need torch (Debian's python3-torch) importable by " ONNXPORT_PYTHON_SONAME
                             ": " + first_line(e.what()) + " — install python3-torch, or remove the .py pack");
  }
  module = new py::module_(std::move(m));
  return *module;
}

}  // namespace onnxport::python_bridge
