// The public face of onnx_io.h for files already written (onnxport inspect / check).
#include "onnxport/model_file.h"

#include "onnx_io.h"

namespace onnxport {

std::string inspect_onnx_file(const std::string& path) { return core::print_graph(core::read_model_file(path)); }

std::string check_onnx_file(const std::string& path) { return core::check_model_file(path).summary; }

}  // namespace onnxport
