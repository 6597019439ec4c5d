// quantized::conv2d(_relu) and quantized::linear(_relu): float Conv/MatMul between
// DequantizeLinear and QuantizeLinear, with the bias rounded to int32 in units of
// input_scale * weight_scale as PyTorch's quantized kernels do.
//
// PyTorch keeps these ops' weights prepacked in a TorchScript custom-class object
// (Conv2dPackedParamsBase / LinearPackedParamsBase). Two spellings reach this pack:
//   unpacked (torch.onnx's form):  conv2d(x, w, bias, stride, padding, dilation, groups, scale, zp)
//                                  linear(x, w, bias, scale, zp)
//   packed, the object as a list:  conv2d(x, [w, bias, stride, padding, dilation, groups], scale, zp)
//                                  linear(x, [w, bias], scale, zp)
// where w is a quantized tensor (see quantized.h) and bias a float tensor or None.
#include "onnxport/helpers.h"
#include "quantized.h"

namespace onnxport::quantized {
namespace {

using namespace helpers;

struct Weights {
  QTensor w;
  Value* bias = nullptr;  // float, or nullptr
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
};

Value* optional_tensor(Value* v) { return v->is_none() ? nullptr : v; }

std::vector<int64_t> ints_of(Value* v, const std::string& what) {
  auto is = v->maybe_ints();
  if (!is) throw ArgumentError(what + " is not a constant int list (" + v->describe() + ")");
  return *is;
}

// The packed-params argument as a list, or an error saying what the host must provide.
const std::vector<Value*>& packed(const Args& a, size_t expected) {
  Value* p = a.at(1);
  if (!p->is_list() || p->elements().size() != expected)
    throw ArgumentError(a.node().kind + ": the prepacked weights (argument 1) did not arrive as a list of " +
                        std::to_string(expected) + " values (got " + p->describe() +
                        "); the host must unpack TorchScript quantized packed-params objects");
  return p->elements();
}

Weights conv_weights(const Args& a) {
  const std::string& op = a.node().kind;
  Weights k;
  if (a.size() == 9) {  // unpacked
    k.w = qtensor_arg(a, 1);
    k.bias = a.optional_tensor(2);
    k.stride = a.is(3), k.padding = a.is(4), k.dilation = a.is(5), k.groups = a.i(6);
    return k;
  }
  const auto& p = packed(a, 6);
  k.w = as_qtensor(p[0], op + " packed weight");
  k.bias = optional_tensor(p[1]);
  k.stride = ints_of(p[2], op + " stride"), k.padding = ints_of(p[3], op + " padding");
  k.dilation = ints_of(p[4], op + " dilation");
  k.groups = p[5]->maybe_int().value_or(1);
  return k;
}

Weights linear_weights(const Args& a) {
  Weights k;
  if (a.size() == 5) {
    k.w = qtensor_arg(a, 1);
    k.bias = a.optional_tensor(2);
    return k;
  }
  const auto& p = packed(a, 2);
  k.w = as_qtensor(p[0], a.node().kind + " packed weight");
  k.bias = optional_tensor(p[1]);
  return k;
}

// bias quantized to int32 with scale input_scale * weight_scale, back in float.
Value* requantized_bias(Graph& g, Value* bias, const QTensor& x, const QTensor& w) {
  if (!bias) return nullptr;
  bias = cast(g, bias, DType::Float);
  if (g.opset() < 11) return bias;  // no Round: keep the float bias
  Value* bias_scale = g.op("Mul", {cast(g, x.scale, DType::Float), cast(g, w.scale, DType::Float)});
  Value* steps = g.op("Round", {g.op("Div", {bias, bias_scale})});
  return g.op("Mul", {cast(g, cast(g, steps, DType::Int32), DType::Float), bias_scale});
}

Symbolic conv2d(bool relu) {
  return [relu](Graph& g, const TorchNode& n, const Args& a) {
    const QTensor x = qtensor_arg(a, 0);
    const Weights k = conv_weights(a);
    Value* w = dequantize(g, k.w);
    const auto w_shape = static_shape(w);
    if (!w_shape || w_shape->size() != 4) throw ArgumentError(n.kind + ": weight shape must be static and 4-d");
    std::vector<int64_t> pads = k.padding;
    pads.insert(pads.end(), k.padding.begin(), k.padding.end());
    std::vector<Value*> inputs{dequantize(g, x), w};
    if (Value* b = requantized_bias(g, k.bias, x, k.w)) inputs.push_back(b);
    Value* y = g.op("Conv", inputs,
                    {{"kernel_shape_i", std::vector<int64_t>(w_shape->begin() + 2, w_shape->end())},
                     {"strides_i", k.stride}, {"pads_i", pads}, {"dilations_i", k.dilation}, {"group_i", k.groups}});
    if (relu) y = g.op("Relu", {y});
    return std::vector<Value*>{quantize_output(g, y, a, a.size() - 2, a.size() - 1, dtype_of(x.q))};
  };
}

Symbolic linear(bool relu) {
  return [relu](Graph& g, const TorchNode&, const Args& a) {
    const QTensor x = qtensor_arg(a, 0);
    const Weights k = linear_weights(a);
    Value* y = g.op("MatMul", {dequantize(g, x), transpose(g, dequantize(g, k.w), {1, 0})});
    if (Value* b = requantized_bias(g, k.bias, x, k.w)) y = g.op("Add", {y, b});
    if (relu) y = g.op("Relu", {y});
    return std::vector<Value*>{quantize_output(g, y, a, a.size() - 2, a.size() - 1, dtype_of(x.q))};
  };
}

}  // namespace

void add_weighted(Registrar& r) {
  r.add("quantized::conv2d", 10, conv2d(false));
  r.add("quantized::conv2d_relu", 10, conv2d(true));
  r.add("quantized::linear", 10, linear(false));
  r.add("quantized::linear_relu", 10, linear(true));
}

}  // namespace onnxport::quantized
