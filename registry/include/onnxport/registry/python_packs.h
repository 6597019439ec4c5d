#pragma once
// What a Python op pack (a .py file of torch.onnx symbolics) brings to the registry, and the entry
// points of the library that runs them (libonnxport_pybridge.so, python/bridge/). The registry
// and the loader never link Python: the loader opens the bridge only when a plugin directory holds
// a .py file, and the Python package calls it directly.
#include <string>
#include <vector>

#include "onnxport/registrar.h"

namespace onnxport {

// torch.onnx dispatches a symbolic per target opset (torch/onnx/_internal/registration.py): the
// registration with the greatest opset <= target from opset 9 on, the smallest in [target, 9]
// below it, and a custom registration replaces a built-in only at its own opset. The bridge asks
// torch's registry which function each target opset reaches and registers a custom one for exactly
// those opsets; where torch.onnx would use its built-in, onnxport's own mapping stays.
struct PythonSymbolic {
  std::string torch_op;     // "aten::gelu", "mylib::op"
  std::vector<int> opsets;  // the target opsets this symbolic serves
  int registered_opset = 1; // the opset it was registered at (register_custom_op_symbolic)
  Symbolic fn;
};

struct PythonPackContents {
  std::string id;  // "python:contrib_ops" (the file's stem), "python:process" for the Python package
  std::vector<PythonSymbolic> symbolics;
};

// extern "C" bool onnxport_python_pack_load(const std::string& file, PythonPackContents& out,
//                                           std::string& error);
// Runs the file once in the bridge's interpreter and returns the symbolics it registered with
// torch.onnx.register_custom_op_symbolic; false (and error: one line, naming the file) when it
// cannot: no Python or torch on the machine, an exception while importing the file.
using PythonPackLoadFn = bool (*)(const std::string& file, PythonPackContents& out, std::string& error);
constexpr const char* kPythonPackLoadSymbol = "onnxport_python_pack_load";
constexpr const char* kPythonBridgeLibrary = "libonnxport_pybridge.so";

}  // namespace onnxport
