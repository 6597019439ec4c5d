// Quantized tensors as list values, QuantizeLinear/DequantizeLinear, output requantization.
#include "onnxport/helpers.h"
#include "quantized.h"

namespace onnxport::quantized {

using namespace helpers;

QTensor as_qtensor(const Value* v, const std::string& what) {
  const size_t n = v->is_list() ? v->elements().size() : 0;
  if (n != 3 && n != 4)
    throw ArgumentError(what + " is not a quantized tensor (got " + v->describe() +
                        "): quantized ops take the result of aten::quantize_per_tensor or of another quantized op");
  const auto& e = v->elements();
  QTensor t{e[0], e[1], e[2], {}};
  if (n == 4) {
    t.axis = e[3]->maybe_int();
    if (!t.axis) throw ArgumentError(what + ": the per-channel axis is not a constant int (" + e[3]->describe() + ")");
  }
  return t;
}

QTensor qtensor_arg(const Args& a, size_t i) {
  const auto& names = a.node().input_names;
  const std::string name = i < names.size() && !names[i].empty() ? " '" + names[i] + "'" : "";
  return as_qtensor(a.at(i), a.node().kind + " argument " + std::to_string(i) + name);
}

Value* pack(Graph& g, const QTensor& t) {
  std::vector<Value*> items{t.q, t.scale, t.zero_point};
  if (t.axis) items.push_back(g.constant_int(*t.axis));
  return g.list(items);
}

QTensor quantize(Graph& g, Value* x, Value* scale, Value* zero_point, std::optional<int64_t> axis) {
  if (axis && g.opset() < 13)
    throw ArgumentError("per-channel QuantizeLinear (axis " + std::to_string(*axis) + ") needs ONNX opset 13");
  scale = cast(g, scale, DType::Float);
  Attrs attrs;
  if (axis) attrs.emplace_back("axis_i", *axis);
  Value* q = g.op("QuantizeLinear", {cast(g, x, DType::Float), scale, zero_point}, attrs);
  return QTensor{q, scale, zero_point, axis};
}

// (q - zero_point) * scale with scale/zero_point shaped to broadcast along the channel axis.
Value* dequantize_per_channel_arithmetic(Graph& g, const QTensor& t) {
  const int64_t rank = rank_of(t.q, "per-channel DequantizeLinear below opset 13");
  const int64_t axis = normalize_dim(*t.axis, rank);
  std::vector<int64_t> trailing;
  for (int64_t d = 1; d < rank - axis; ++d) trailing.push_back(d);
  auto broadcastable = [&](Value* v) { return trailing.empty() ? v : unsqueeze(g, v, trailing); };
  Value* centered = g.op("Sub", {cast(g, t.q, DType::Float), broadcastable(cast(g, t.zero_point, DType::Float))});
  return g.op("Mul", {centered, broadcastable(cast(g, t.scale, DType::Float))});
}

Value* dequantize(Graph& g, const QTensor& t) {
  if (t.axis && g.opset() < 13) return dequantize_per_channel_arithmetic(g, t);
  Attrs attrs;
  if (t.axis) attrs.emplace_back("axis_i", *t.axis);
  return g.op("DequantizeLinear", {t.q, cast(g, t.scale, DType::Float), t.zero_point}, attrs);
}

DType qdtype_from_scalar_type(int64_t scalar_type, const std::string& op) {
  if (scalar_type == 12) return DType::Int8;   // torch.qint8
  if (scalar_type == 13) return DType::UInt8;  // torch.quint8
  throw ArgumentError(op + ": quantized dtype " + std::to_string(scalar_type) +
                      " has no ONNX QuantizeLinear type (only torch.quint8 and torch.qint8 do)");
}

Value* quantize_output(Graph& g, Value* y, const Args& a, size_t scale_index, size_t zero_point_index, DType qdtype) {
  if (qdtype != DType::UInt8 && qdtype != DType::Int8) qdtype = DType::UInt8;
  Value* zero_point = cast(g, a.tensor(zero_point_index), qdtype);
  return pack(g, quantize(g, y, a.tensor(scale_index), zero_point));
}

}  // namespace onnxport::quantized
