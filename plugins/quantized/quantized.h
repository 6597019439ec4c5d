#pragma once
// The quantized pack: PyTorch's quantized tensors and quantized:: ops as ONNX QuantizeLinear /
// DequantizeLinear around float ops (QDQ form), like torch.onnx's opset-10/13 symbolics.
//
// A quantized tensor travels between symbolics as a list value
//   [q, scale, zero_point]          per tensor
//   [q, scale, zero_point, axis]    per channel (axis: a constant int)
// where q is the uint8/int8 ONNX tensor, scale float32 (0-d, or 1-d per channel) and
// zero_point of q's dtype with scale's shape: the counterpart of torch.onnx's
// (tensor, scale, zero_point[, axis]) tuples. quantized:: symbolics take and return such lists;
// aten::dequantize turns one back into a float tensor.
#include <optional>

#include "onnxport/sdk.h"

namespace onnxport::quantized {

struct QTensor {
  Value* q = nullptr;
  Value* scale = nullptr;
  Value* zero_point = nullptr;
  std::optional<int64_t> axis;  // per-channel quantization axis
};

// Argument i as a quantized tensor; ArgumentError (naming the op) when it is not one.
QTensor qtensor_arg(const Args& a, size_t i);
QTensor as_qtensor(const Value* v, const std::string& what);
Value* pack(Graph& g, const QTensor& t);

// float tensor -> QTensor (QuantizeLinear) and back (DequantizeLinear). Per-channel needs the
// axis attribute of opset 13; below it dequantization is spelled out with Sub/Mul.
QTensor quantize(Graph& g, Value* x, Value* scale, Value* zero_point, std::optional<int64_t> axis = {});
Value* dequantize(Graph& g, const QTensor& t);

// The quantized dtype (UInt8/Int8) of a c10 ScalarType number (12 qint8, 13 quint8), or an
// ArgumentError naming `op` for the others (qint32, quint4x2: no ONNX QuantizeLinear type).
DType qdtype_from_scalar_type(int64_t scalar_type, const std::string& op);

// A quantized op's output: y quantized with the op's output scale/zero-point arguments
// (constants or tensors), in the quantized dtype `like` uses.
Value* quantize_output(Graph& g, Value* y, const Args& a, size_t scale_index, size_t zero_point_index, DType qdtype);

// Registration.
void add_quantize(Registrar& r);  // aten::quantize_per_tensor/_channel, dequantize, fake_quantize_*,
                                  // _make_per_tensor/_channel_quantized_tensor
void add_ops(Registrar& r);       // quantized::add, mul, cat, sigmoid, hardswish, leaky_relu, norms
void add_weighted(Registrar& r);  // quantized::conv1d/2d/3d(_relu), conv_transpose1d/2d/3d, linear(_relu)
                                  // and their prepack ops (packed weights)

}  // namespace onnxport::quantized
