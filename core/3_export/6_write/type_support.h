#pragma once
// Before anything is written: element types a model has that ONNX's op cannot take at the target
// opset. bfloat16 models meet this first (ONNX's Conv, MaxPool, Softmax... take no bfloat16 in
// the opsets onnxport writes); without this check the checker would reject the written file.
#include <string>

#include "1_base/onnx_ir.h"

namespace onnxport::core {

// Throws ExportError naming the node's op, its torch op and module path, the input, the type
// constraint and what it allows, with what to do, when a standard-domain node reads a bfloat16
// tensor where its ONNX schema allows none.
void refuse_bfloat16_where_onnx_has_none(const OnnxModel& model, const std::string& model_file);

}  // namespace onnxport::core
