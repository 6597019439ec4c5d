// The public face of the printer and the checker for files already written (onnxport inspect / check).
#include "onnxport/model_file.h"

#include "1_base/graph_printer.h"
#include "3_export/6_write/model_check.h"

namespace onnxport {

std::string inspect_onnx_file(const std::string& path) { return core::print_graph(core::read_model_file(path)); }

std::string check_onnx_file(const std::string& path) { return core::check_model_file(path).summary; }

}  // namespace onnxport
