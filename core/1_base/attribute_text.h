#pragma once
// One ONNX attribute as text, shared by the readable graph (graph_printer.cpp) and the graph
// picture's tooltips (graph_picture.cpp).
#include <onnx/onnx_pb.h>

#include <string>

namespace onnxport::core {

// "kernel_shape=[3, 3]", "alpha=0.1", "value=<Tensor float32[2] {1, 2}>", "body=<GRAPH>"
std::string attribute_text(const onnx::AttributeProto& a);

}  // namespace onnxport::core
