#pragma once
// The check stage: ONNX's checker and strict shape inference on a written file (also `onnxport check`).
#include <string>

#include "1_base/onnx_ir.h"

namespace onnxport::core {

struct CheckResult {
  size_t nodes = 0;
  std::string summary;  // "ok: 24 nodes, opset 17, ir 8"
};
// ONNX checker + strict shape inference on a written file. Throws ExportError with the checker's words.
CheckResult check_model_file(const std::string& path);
// The same on a model's structure: initializers are headers whose data the proto places in
// files of `model_dir` (external data, or the payload offsets of the model file itself), so no
// parameter byte is read or copied. `what` names the model in messages.
CheckResult check_model_structure(onnx::ModelProto proto, const std::string& model_dir, const std::string& what);
// libonnx's shape inference divides by some attributes unchecked (a zero Conv stride: SIGFPE)
// and reads a Conv weight's dims past a lower-rank input's (SIGSEGV).
// Throws std::invalid_argument naming the node when the graph (or a sub-graph) has one; run it
// before any InferShapes on a file onnxport did not write.
void refuse_attributes_inference_cannot_take(const onnx::GraphProto& graph);

// Parses an .onnx file (external data stays in its files); a file protobuf cannot parse is a ModelError.
onnx::ModelProto read_model_file(const std::string& path);

}  // namespace onnxport::core
