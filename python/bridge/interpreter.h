#pragma once
// The interpreter the bridge runs symbolics in: the calling process's when Python is running
// (the Python package), else one embedded on first use (the command line), kept for the process.
#include <pybind11/pybind11.h>

#include <string>

namespace onnxport::python_bridge {

// The first line of an exception's text (pybind11's carry Python's traceback after it).
inline std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// Starts Python if needed and returns onnxport._bridge (python/onnxport/_bridge.py, compiled into
// this library). Call with the GIL held. Throws std::runtime_error with one line when Python or
// torch cannot be started on this machine.
pybind11::module_ bridge_module();

// Holds the GIL for a scope, after making sure an interpreter exists.
class PythonScope {
 public:
  PythonScope();
  ~PythonScope();
  PythonScope(const PythonScope&) = delete;
  PythonScope& operator=(const PythonScope&) = delete;

 private:
  int state_;
};

}  // namespace onnxport::python_bridge
