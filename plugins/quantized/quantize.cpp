// Entering and leaving the quantized domain: quantize_per_tensor/_channel, dequantize, and the
// fake-quantize ops of quantization-aware training (QuantizeLinear + DequantizeLinear).
#include "onnxport/helpers.h"
#include "quantized.h"

namespace onnxport::quantized {
namespace {

using namespace helpers;

// quantize_per_tensor(x, scale, zero_point, dtype); scale/zero_point numbers or tensors.
Value* quantize_per_tensor(Graph& g, const TorchNode& n, const Args& a) {
  if (a.at(0)->is_list()) throw ArgumentError(n.kind + " of a tensor list is not supported; quantize each tensor");
  const DType qdtype = qdtype_from_scalar_type(a.i(3), n.kind);
  return pack(g, quantize(g, a.tensor(0), a.tensor(1), cast(g, a.tensor(2), qdtype)));
}

// quantize_per_channel(x, scales, zero_points, axis, dtype).
Value* quantize_per_channel(Graph& g, const TorchNode& n, const Args& a) {
  const DType qdtype = qdtype_from_scalar_type(a.i(4), n.kind);
  return pack(g, quantize(g, a.tensor(0), a.tensor(1), cast(g, a.tensor(2), qdtype), a.i(3)));
}

// The integer data of a quantized tensor, as core/3_export/2_prepare/quantized_weights.cpp rebuilds prepacked
// weights: _make_per_tensor_quantized_tensor(data, scale, zero_point) and
// _make_per_channel_quantized_tensor(data, scales, zero_points, axis). No ONNX node: the data
// stays an integer tensor (an int8 initializer for weights) read by DequantizeLinear.
QTensor integer_data(Graph& g, const TorchNode& n, const Args& a, std::optional<int64_t> axis) {
  Value* data = a.tensor(0);
  const DType qdtype = dtype_of(data);
  if (qdtype != DType::UInt8 && qdtype != DType::Int8)
    throw ArgumentError(n.kind + ": the data is " + dtype_name(qdtype) +
                        "; only uint8 and int8 have an ONNX DequantizeLinear type");
  return QTensor{data, cast(g, a.tensor(1), DType::Float), cast(g, a.tensor(2), qdtype), axis};
}

Value* make_per_tensor_quantized(Graph& g, const TorchNode& n, const Args& a) {
  return pack(g, integer_data(g, n, a, std::nullopt));
}

Value* make_per_channel_quantized(Graph& g, const TorchNode& n, const Args& a) {
  return pack(g, integer_data(g, n, a, a.i(3)));
}

// q_scale(q) / q_zero_point(q): the parameters of a per-tensor quantized tensor.
Value* q_scale(Graph&, const TorchNode&, const Args& a) { return qtensor_arg(a, 0).scale; }
Value* q_zero_point(Graph&, const TorchNode&, const Args& a) { return qtensor_arg(a, 0).zero_point; }

std::vector<Value*> dequantize_op(Graph& g, const TorchNode& n, const Args& a) {
  Value* v = a.at(0);
  // aten::dequantize.tensors: a list of quantized tensors (each itself a list).
  if (v->is_list() && !v->elements().empty() && v->elements()[0]->is_list()) {
    std::vector<Value*> out;
    for (Value* e : v->elements()) out.push_back(dequantize(g, as_qtensor(e, n.kind + " list element")));
    return {g.list(out)};
  }
  return {dequantize(g, qtensor_arg(a, 0))};
}

// The ONNX integer type of a fake-quantization range, and whether its top needs clamping
// (PyTorch's reduced-range activations use [0, 127] in a uint8).
struct QRange {
  DType qdtype;
  bool clamp_127;
};

QRange qrange(const TorchNode& n, int64_t qmin, int64_t qmax) {
  if (qmin == 0 && qmax == 255) return {DType::UInt8, false};
  if (qmin == -128 && qmax == 127) return {DType::Int8, false};
  if (qmin == 0 && qmax == 127) return {DType::UInt8, true};
  throw ArgumentError(n.kind + ": quant range (" + std::to_string(qmin) + ", " + std::to_string(qmax) +
                      ") has no ONNX equivalent; only (0, 255), (-128, 127) and (0, 127) do");
}

// x clamped so that it quantizes to at most 127: x <= (127 - zero_point) * scale. `shape`
// makes per-channel scale/zero_point broadcast along the channel axis.
Value* clamp_to_127(Graph& g, Value* x, Value* scale, Value* zero_point, const std::vector<int64_t>& trailing) {
  Value* top = g.op("Mul", {g.op("Sub", {g.constant_float(127.0f), cast(g, zero_point, DType::Float)}), scale});
  if (!trailing.empty()) top = unsqueeze(g, top, trailing);
  return g.op("Min", {x, top});
}

Value* fake_quantize(Graph& g, const TorchNode& n, Value* x, Value* scale, Value* zero_point, int64_t qmin,
                     int64_t qmax, std::optional<int64_t> axis) {
  const QRange range = qrange(n, qmin, qmax);
  x = cast(g, x, DType::Float);
  scale = cast(g, scale, DType::Float);
  if (range.clamp_127) {
    std::vector<int64_t> trailing;
    if (axis) {
      const int64_t rank = rank_of(x, n.kind + " input");
      for (int64_t d = 1; d < rank - normalize_dim(*axis, rank); ++d) trailing.push_back(d);
    }
    x = clamp_to_127(g, x, scale, zero_point, trailing);
  }
  return dequantize(g, quantize(g, x, scale, cast(g, zero_point, range.qdtype), axis));
}

// fake_quantize_per_tensor_affine(x, scale, zero_point, quant_min, quant_max)
Value* fake_quantize_per_tensor(Graph& g, const TorchNode& n, const Args& a) {
  return fake_quantize(g, n, a.tensor(0), a.tensor(1), a.tensor(2), a.i(3), a.i(4), std::nullopt);
}

// fake_quantize_per_channel_affine(x, scale, zero_point, axis, quant_min, quant_max)
Value* fake_quantize_per_channel(Graph& g, const TorchNode& n, const Args& a) {
  return fake_quantize(g, n, a.tensor(0), a.tensor(1), a.tensor(2), a.i(4), a.i(5), a.i(3));
}

}  // namespace

void add_quantize(Registrar& r) {
  r.add("aten::quantize_per_tensor", 10, quantize_per_tensor);
  r.add("aten::quantize_per_channel", 13, quantize_per_channel);
  r.add("aten::dequantize", 10, dequantize_op);
  r.add("aten::_make_per_tensor_quantized_tensor", 10, make_per_tensor_quantized);
  r.add("aten::_make_per_channel_quantized_tensor", 10, make_per_channel_quantized);
  r.add("aten::q_scale", 10, q_scale);
  r.add("aten::q_zero_point", 10, q_zero_point);
  r.add("aten::fake_quantize_per_tensor_affine", 10, fake_quantize_per_tensor);
  r.add("aten::fake_quantize_per_channel_affine", 13, fake_quantize_per_channel);
}

}  // namespace onnxport::quantized
