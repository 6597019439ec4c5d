#pragma once
// A torch.export program (.pt2) described for export: its schema version and PyTorch, user inputs
// and outputs with their sizes (symbols where the program keeps a dim symbolic) and the symbols'
// ranges, how many parameters, buffers and constants it holds, and its operators by count, with
// any higher-order operator named (`onnxport inspect MODEL.pt2`).
#include <string>

namespace onnxport {

// Whether `path` is a torch.export archive (not a TorchScript file or an ONNX model).
bool is_program_file(const std::string& path);

// Throws ModelError naming the file when it cannot be read.
std::string inspect_program_file(const std::string& path);

}  // namespace onnxport
