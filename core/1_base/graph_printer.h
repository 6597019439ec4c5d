#pragma once
// The readable graph (`onnxport inspect`, `export --verbose`): one line per node with types and provenance.
#include <string>

#include "1_base/onnx_ir.h"

namespace onnxport::core {

// `provenance`: the in-memory model the file was built from (its nodes' origins and value types).
std::string print_graph(const onnx::ModelProto& model, const OnnxModel* provenance = nullptr);

}  // namespace onnxport::core
