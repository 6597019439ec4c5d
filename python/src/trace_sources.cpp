#include "trace_sources.h"

#include <Python.h>
#include <frameobject.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/jit/frontend/source_range.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/utils/object_ptr.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/csrc/jit/python/python_tracer.h>

#include <memory>
#include <string>
#include <unordered_map>

namespace onnxport::python {

namespace {

// Keyed by "file:line:function"; emptied when the trace ends.
std::unordered_map<std::string, std::shared_ptr<torch::jit::Source>>& sources() {
  static std::unordered_map<std::string, std::shared_ptr<torch::jit::Source>> known;
  return known;
}

std::string text_of(PyObject* unicode) {
  Py_ssize_t size = 0;
  const char* text = unicode ? PyUnicode_AsUTF8AndSize(unicode, &size) : nullptr;
  if (!text) {
    PyErr_Clear();
    return "";
  }
  return std::string(text, static_cast<size_t>(size));
}

void record_innermost_frame(torch::jit::Node* node) {
  pybind11::gil_scoped_acquire gil;  // torch's operator bindings release it while an op runs
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  if (!frame) return;
  PyCodeObject* code = PyFrame_GetCode(frame);
  const int line = PyFrame_GetLineNumber(frame);
  std::string file = text_of(code->co_filename);
  std::string function = text_of(code->co_name);
  Py_DECREF(code);
  std::string key = file + ":" + std::to_string(line) + ":" + function;
  auto& known = sources();
  auto it = known.find(key);
  if (it == known.end())
    it = known.emplace(std::move(key), std::make_shared<torch::jit::Source>(function, file, line)).first;
  node->setSourceRange(torch::jit::SourceRange(it->second, 0, function.size()));
}

// What torch's python_tracer.cpp sets at import (pythonRecordSourceLocation, not in its header).
void record_python_call_stack(torch::jit::Node* node) {
  node->setSourceRange(torch::jit::tracer::getPythonInterpreterSourceRange());
}

}  // namespace

InnermostFrameSources::InnermostFrameSources() {
  torch::jit::tracer::setRecordSourceLocation(record_innermost_frame);
}

InnermostFrameSources::~InnermostFrameSources() {
  torch::jit::tracer::setRecordSourceLocation(record_python_call_stack);
  sources().clear();
}

}  // namespace onnxport::python
