// quantized:: ops without weights: dequantize the inputs, run the float op, quantize the
// result with the op's output scale and zero point (the QDQ pattern ONNX runtimes fuse).
#include "onnxport/helpers.h"
#include "quantized.h"

namespace onnxport::quantized {
namespace {

using namespace helpers;

DType qdtype_of(const QTensor& t) { return dtype_of(t.q); }

// quantized::add/add_relu/mul(qa, qb, scale, zero_point)
Symbolic binary(const std::string& onnx_op, bool relu) {
  return [onnx_op, relu](Graph& g, const TorchNode& n, const Args& a) {
    if (a.size() != 4)
      throw ArgumentError(n.kind +
                          " with a Scalar operand is not supported (its output scale is implicit); "
                          "use the Tensor form (FloatFunctional.add/mul)");
    const QTensor x = qtensor_arg(a, 0), y = qtensor_arg(a, 1);
    Value* out = g.op(onnx_op, {dequantize(g, x), dequantize(g, y)});
    if (relu) out = g.op("Relu", {out});
    return std::vector<Value*>{quantize_output(g, out, a, 2, 3, qdtype_of(x))};
  };
}

// A unary float op f wrapped in dequantize/quantize; the output qparams are args scale_i, zp_i.
using FloatFn = Value* (*)(Graph&, Value*, const Args&);

template <FloatFn f, size_t scale_i, size_t zp_i>
Value* unary(Graph& g, const TorchNode&, const Args& a) {
  const QTensor x = qtensor_arg(a, 0);
  return quantize_output(g, f(g, dequantize(g, x), a), a, scale_i, zp_i, qdtype_of(x));
}

Value* sigmoid_f(Graph& g, Value* x, const Args&) { return g.op("Sigmoid", {x}); }

Value* hardswish_f(Graph& g, Value* x, const Args&) {
  if (g.opset() >= 14) return g.op("HardSwish", {x});
  return g.op("Mul", {x, g.op("HardSigmoid", {x}, {{"alpha_f", 1.0 / 6.0}, {"beta_f", 0.5}})});
}

Value* leaky_relu_f(Graph& g, Value* x, const Args& a) { return g.op("LeakyRelu", {x}, {{"alpha_f", a.f(1)}}); }

// (x - mean) / sqrt(var + eps) over `axes` (biased variance, like PyTorch's norms).
Value* normalize(Graph& g, Value* x, const std::vector<int64_t>& axes, double eps) {
  Value* centered = g.op("Sub", {x, reduce(g, "ReduceMean", x, axes, true)});
  Value* var = reduce(g, "ReduceMean", g.op("Mul", {centered, centered}), axes, true);
  return g.op("Div", {centered, g.op("Sqrt", {g.op("Add", {var, g.constant_float(static_cast<float>(eps))})})});
}

// y * weight + bias, with weight/bias of the channel dim (1) broadcast over the later dims.
Value* affine_channels(Graph& g, Value* y, Value* weight, Value* bias, int64_t rank) {
  std::vector<int64_t> trailing;
  for (int64_t d = 1; d < rank - 1; ++d) trailing.push_back(d);
  auto shaped = [&](Value* v) { return trailing.empty() ? v : unsqueeze(g, v, trailing); };
  if (weight) y = g.op("Mul", {y, shaped(cast(g, weight, DType::Float))});
  if (bias) y = g.op("Add", {y, shaped(cast(g, bias, DType::Float))});
  return y;
}

// layer_norm(x, normalized_shape, weight, bias, eps, scale, zero_point)
Value* layer_norm_f(Graph& g, Value* x, const Args& a) {
  const int64_t rank = rank_of(x, a.node().kind + " input");
  const auto shape = a.is(1);
  std::vector<int64_t> axes;
  for (int64_t d = rank - static_cast<int64_t>(shape.size()); d < rank; ++d) axes.push_back(d);
  Value* y = normalize(g, x, axes, a.f(4));
  if (Value* w = a.optional_tensor(2)) y = g.op("Mul", {y, cast(g, w, DType::Float)});
  if (Value* b = a.optional_tensor(3)) y = g.op("Add", {y, cast(g, b, DType::Float)});
  return y;
}

// group_norm(x, num_groups, weight, bias, eps, scale, zero_point): normalize [N, G, rest].
Value* group_norm_f(Graph& g, Value* x, const Args& a) {
  const int64_t rank = rank_of(x, a.node().kind + " input");
  Value* grouped = reshape(g, x, std::vector<int64_t>{0, a.i(1), -1});
  Value* y = reshape(g, normalize(g, grouped, {2}, a.f(4)), shape_of(g, x));
  return affine_channels(g, y, a.optional_tensor(2), a.optional_tensor(3), rank);
}

// instance_norm(x, weight, bias, eps, scale, zero_point): normalize each (n, c) over space.
Value* instance_norm_f(Graph& g, Value* x, const Args& a) {
  const int64_t rank = rank_of(x, a.node().kind + " input");
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  return affine_channels(g, normalize(g, x, axes, a.f(3)), a.optional_tensor(1), a.optional_tensor(2), rank);
}

// cat(qx[], dim, scale?, zero_point?): without output qparams, the first input's are kept.
Value* cat(Graph& g, const TorchNode& n, const Args& a) {
  std::vector<Value*> parts;
  std::optional<QTensor> first;
  for (Value* e : a.list(0)) {
    QTensor t = as_qtensor(e, n.kind + " input");
    if (!first) first = t;
    parts.push_back(dequantize(g, t));
  }
  if (!first) throw ArgumentError(n.kind + ": empty tensor list");
  int64_t dim = a.i(1);
  if (dim < 0 && g.opset() < 11) dim = normalize_dim(dim, rank_of(parts[0], n.kind + " input"));
  Value* out = g.op("Concat", parts, {{"axis_i", dim}});
  if (a.is_none(2) || a.is_none(3)) return pack(g, quantize(g, out, first->scale, first->zero_point));
  return quantize_output(g, out, a, 2, 3, qdtype_of(*first));
}

}  // namespace

void add_ops(Registrar& r) {
  r.add("quantized::add", 10, binary("Add", false));
  r.add("quantized::add_relu", 10, binary("Add", true));
  r.add("quantized::mul", 10, binary("Mul", false));
  r.add("quantized::cat", 10, cat);
  r.add("quantized::sigmoid", 10, unary<sigmoid_f, 1, 2>);
  r.add("quantized::hardswish", 10, unary<hardswish_f, 1, 2>);
  r.add("quantized::leaky_relu", 10, unary<leaky_relu_f, 3, 4>);
  r.add("quantized::layer_norm", 10, unary<layer_norm_f, 5, 6>);
  r.add("quantized::group_norm", 10, unary<group_norm_f, 5, 6>);
  r.add("quantized::instance_norm", 10, unary<instance_norm_f, 4, 5>);
}

}  // namespace onnxport::quantized
