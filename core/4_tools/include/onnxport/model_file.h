#pragma once
// Reading back an ONNX file that an export (or anything else) wrote.
#include <string>

namespace onnxport {

// The file's graph in torch.onnx's readable form: one line per node with types and
// provenance. Throws ExportError when the file cannot be read as an ONNX model.
std::string inspect_onnx_file(const std::string& path);

// Runs the ONNX checker and strict shape inference on the file and returns a one-line verdict
// ("ok: 24 nodes, opset 17, ir 8"). Throws ExportError with the checker's words when it fails.
std::string check_onnx_file(const std::string& path);

}  // namespace onnxport
