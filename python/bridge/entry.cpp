// The bridge's entry points: the C one the op-pack loader finds (registry/python_packs.h) and
// process_symbolics for the Python package.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <exception>
#include <string>

#include "interpreter.h"
#include "onnxport/python_bridge.h"
#include "symbolic_call.h"

namespace py = pybind11;

namespace onnxport::python_bridge {

namespace {

// [(name, registered opset, key, [target opsets])] from onnxport._bridge.
std::vector<PythonSymbolic> symbolics_from(const py::list& registrations, const std::string& file) {
  std::vector<PythonSymbolic> out;
  for (auto r : registrations) {
    auto t = r.cast<py::tuple>();
    PythonSymbolic s;
    s.torch_op = t[0].cast<std::string>();
    s.registered_opset = t[1].cast<int>();
    s.fn = python_symbolic(t[2].cast<int>(), file);
    s.opsets = t[3].cast<std::vector<int>>();
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

PythonPackContents process_symbolics() {
  PythonScope scope;
  PythonPackContents contents;
  contents.id = "python:process";
  contents.symbolics = symbolics_from(bridge_module().attr("process_symbolics")(), "");
  return contents;
}

pybind11::object bridge_runtime() {
  PythonScope scope;
  return bridge_module();
}

}  // namespace onnxport::python_bridge

extern "C" __attribute__((visibility("default"))) bool onnxport_python_pack_load(const std::string& file,
                                                                                 onnxport::PythonPackContents& out,
                                                                                 std::string& error) {
  using namespace onnxport::python_bridge;
  try {
    PythonScope scope;
    py::tuple answer = bridge_module().attr("load_pack")(file);
    if (answer[0].cast<std::string>() != "ok") {
      error = answer[1].cast<std::string>();
      return false;
    }
    out.symbolics = symbolics_from(answer[1], file);
    return true;
  } catch (const py::error_already_set& e) {
    error = "the Python bridge failed: " + first_line(e.what());
  } catch (const std::exception& e) {
    error = first_line(e.what());
  }
  return false;
}
