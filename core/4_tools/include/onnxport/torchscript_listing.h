#pragma once
// A TorchScript file described for export: its methods and their arguments, its submodules, the
// module attributes each method writes (state kept between calls) and the tensors it holds that
// are not parameters. What --method, --submodule and --input can name (`onnxport inspect MODEL.pt`).
#include <string>

namespace onnxport {

// Throws ModelError naming the file when it cannot be loaded.
std::string inspect_torchscript_file(const std::string& path);

// Whether the file is a TorchScript archive (a zip) rather than an ONNX model, by its first bytes.
bool is_torchscript_file(const std::string& path);

}  // namespace onnxport
