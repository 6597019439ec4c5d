#pragma once
// The Python op-pack bridge (libonnxport_pybridge.so): runs torch.onnx symbolic functions written
// in Python as onnxport symbolics. The op-pack loader reaches it through the C entry point of
// registry/python_packs.h when a plugin directory holds a .py file; the Python package links it
// and calls the function below before each export.
#include <pybind11/pybind11.h>

#include "onnxport/registry/python_packs.h"

namespace onnxport::python_bridge {

// The custom symbolics registered in the calling process (torch.onnx.register_custom_op_symbolic),
// other than those of .py packs the loader ran, each for the target opsets torch.onnx dispatches
// it at. Must be called with Python running (from the Python package).
__attribute__((visibility("default"))) PythonPackContents process_symbolics();

// The bridge's Python module (python/onnxport/_bridge.py), for the Python package to hand it the
// module being exported (register_python_ops). Call with the GIL held.
__attribute__((visibility("default"))) pybind11::object bridge_runtime();

}  // namespace onnxport::python_bridge
