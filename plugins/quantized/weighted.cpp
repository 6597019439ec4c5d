// Quantized ops with prepacked weights: quantized::conv1d/2d/3d(_relu), conv_transpose1d/2d/3d
// and linear(_relu) as float Conv/ConvTranspose/MatMul between DequantizeLinear and
// QuantizeLinear, with the bias quantized to int32 in units of input_scale * weight_scale
// (DequantizeLinear of int32, the QDQ form runtimes fuse into integer kernels).
//
// PyTorch keeps these weights in TorchScript custom-class objects; the core rebuilds each one
// in the graph through the prepack op that makes it (core/3_export/2_prepare/quantized_weights.cpp), and a
// scripted model may call the prepack ops itself. Their symbolics return the unpacked weights
// as a list value that the quantized ops read:
//   conv:    [w, bias, stride, padding, output_padding, dilation, groups]
//   linear:  [w, bias]
// where w is a quantized tensor (see quantized.h) and bias a float tensor or None.
#include "onnxport/helpers.h"
#include "quantized.h"

namespace onnxport::quantized {
namespace {

using namespace helpers;

constexpr size_t kConvPacked = 7, kLinearPacked = 2;

struct ConvWeights {
  QTensor w;
  Value* bias = nullptr;  // float, or nullptr
  std::vector<int64_t> stride, padding, output_padding, dilation;
  int64_t groups = 1;
};

std::vector<int64_t> ints_of(Value* v, const std::string& what) {
  auto is = v->maybe_ints();
  if (!is) throw ArgumentError(what + " is not a constant int list (" + v->describe() + ")");
  return *is;
}

// ---------------------------------------------------------------- prepack ops

// conv{N}d_prepack(w, bias, stride, padding, dilation, groups) and
// conv_transpose{N}d_prepack(w, bias, stride, padding, output_padding, dilation, groups).
Symbolic conv_prepack(int64_t spatial, bool transposed) {
  return [spatial, transposed](Graph& g, const TorchNode& n, const Args& a) {
    const QTensor w = qtensor_arg(a, 0);
    const int64_t rank = rank_of(w.q, n.kind + " weight");
    if (rank != spatial + 2)
      throw ArgumentError(n.kind + ": the weight has rank " + std::to_string(rank) + ", expected " +
                          std::to_string(spatial + 2));
    auto checked = [&](size_t i, const char* what) {
      const auto v = a.is(i);
      if (static_cast<int64_t>(v.size()) != spatial)
        throw ArgumentError(n.kind + ": " + what + " has " + std::to_string(v.size()) + " values, expected " +
                            std::to_string(spatial));
      return g.constant_ints(v);
    };
    const size_t at = transposed ? 1 : 0;  // transposed prepacks take output_padding before dilation
    Value* output_padding =
        transposed ? checked(4, "output_padding") : g.constant_ints(std::vector<int64_t>(spatial, 0));
    return std::vector<Value*>{g.list({a.at(0), a.at(1), checked(2, "stride"), checked(3, "padding"), output_padding,
                                       checked(4 + at, "dilation"), g.constant_int(a.i(5 + at))})};
  };
}

Value* linear_prepack(Graph& g, const TorchNode& n, const Args& a) {
  const QTensor w = qtensor_arg(a, 0);
  if (rank_of(w.q, n.kind + " weight") != 2) throw ArgumentError(n.kind + ": the weight must be 2-d");
  return g.list({a.at(0), a.at(1)});
}

// ---------------------------------------------------------------- reading the packed list

// The packed-params argument (1) as a list, or an error naming where it has to come from.
const std::vector<Value*>& packed(const Args& a, size_t expected) {
  Value* p = a.at(1);
  if (!p->is_list() || p->elements().size() != expected)
    throw ArgumentError(a.node().kind +
                        ": the prepacked weights (argument 1) are not the result of a quantized "
                        "prepack op (got " +
                        p->describe() +
                        "); the core rebuilds frozen packed-params "
                        "constants that way, so they must come from a prepack op or such a constant");
  return p->elements();
}

Value* optional_tensor(Value* v) { return v->is_none() ? nullptr : v; }

ConvWeights conv_weights(const Args& a) {
  const std::string& op = a.node().kind;
  const auto& p = packed(a, kConvPacked);
  ConvWeights k;
  k.w = as_qtensor(p[0], op + " packed weight");
  k.bias = optional_tensor(p[1]);
  k.stride = ints_of(p[2], op + " stride"), k.padding = ints_of(p[3], op + " padding");
  k.output_padding = ints_of(p[4], op + " output_padding"), k.dilation = ints_of(p[5], op + " dilation");
  k.groups = p[6]->maybe_int().value_or(1);
  return k;
}

// ---------------------------------------------------------------- the float computation

// The bias quantized to int32 with scale input_scale * weight_scale (per channel when the
// weight is), as PyTorch's integer kernels add it; back in float through DequantizeLinear.
Value* quantized_bias(Graph& g, Value* bias, const QTensor& x, const QTensor& w) {
  if (!bias) return nullptr;
  bias = cast(g, bias, DType::Float);
  if (g.opset() < 11) return bias;  // no Round: keep the float bias
  Value* scale = g.op("Mul", {cast(g, x.scale, DType::Float), cast(g, w.scale, DType::Float)});
  Value* steps = cast(g, g.op("Round", {g.op("Div", {bias, scale})}), DType::Int32);
  if (w.axis && g.opset() < 13) return g.op("Mul", {cast(g, steps, DType::Float), scale});
  Attrs attrs;
  if (w.axis) attrs.emplace_back("axis_i", int64_t{0});
  return g.op("DequantizeLinear", {steps, scale}, attrs);
}

std::vector<int64_t> twice(const std::vector<int64_t>& v) {
  std::vector<int64_t> out = v;
  out.insert(out.end(), v.begin(), v.end());
  return out;
}

Value* convolution(Graph& g, const TorchNode& n, Value* x, Value* w, Value* bias, const ConvWeights& k, int64_t spatial,
                   bool transposed) {
  const auto w_shape = static_shape(w);
  if (!w_shape || static_cast<int64_t>(w_shape->size()) != spatial + 2)
    throw ArgumentError(n.kind + ": the packed weight must have a static shape of rank " + std::to_string(spatial + 2));
  std::vector<Value*> inputs{x, w};
  if (bias) inputs.push_back(bias);
  Attrs attrs{{"kernel_shape_i", std::vector<int64_t>(w_shape->begin() + 2, w_shape->end())},
              {"strides_i", k.stride},
              {"pads_i", twice(k.padding)},
              {"dilations_i", k.dilation},
              {"group_i", k.groups}};
  if (!transposed) return g.op("Conv", inputs, attrs);
  attrs.emplace_back("output_padding_i", k.output_padding);
  return g.op("ConvTranspose", inputs, attrs);
}

// ---------------------------------------------------------------- the quantized ops

// conv(qx, packed, scale, zero_point); the deprecated conv2d/conv3d overload also passes
// stride, padding, dilation and groups, which PyTorch ignores in favour of the packed ones.
Symbolic conv(int64_t spatial, bool transposed, bool relu) {
  return [=](Graph& g, const TorchNode& n, const Args& a) {
    const QTensor x = qtensor_arg(a, 0);
    const ConvWeights k = conv_weights(a);
    Value* y = convolution(g, n, dequantize(g, x), dequantize(g, k.w), quantized_bias(g, k.bias, x, k.w), k, spatial,
                           transposed);
    if (relu) y = g.op("Relu", {y});
    return std::vector<Value*>{quantize_output(g, y, a, a.size() - 2, a.size() - 1, dtype_of(x.q))};
  };
}

Symbolic linear(bool relu) {
  return [relu](Graph& g, const TorchNode& n, const Args& a) {
    const QTensor x = qtensor_arg(a, 0);
    const auto& p = packed(a, kLinearPacked);
    const QTensor w = as_qtensor(p[0], n.kind + " packed weight");
    Value* y = g.op("MatMul", {dequantize(g, x), transpose(g, dequantize(g, w), {1, 0})});
    if (Value* b = quantized_bias(g, optional_tensor(p[1]), x, w)) y = g.op("Add", {y, b});
    if (relu) y = g.op("Relu", {y});
    return std::vector<Value*>{quantize_output(g, y, a, 2, 3, dtype_of(x.q))};
  };
}

}  // namespace

void add_weighted(Registrar& r) {
  for (int64_t d = 1; d <= 3; ++d) {
    const std::string nd = std::to_string(d) + "d";
    r.add("quantized::conv" + nd + "_prepack", 10, conv_prepack(d, false));
    r.add("quantized::conv_transpose" + nd + "_prepack", 10, conv_prepack(d, true));
    r.add("quantized::conv" + nd, 10, conv(d, false, false));
    r.add("quantized::conv" + nd + "_relu", 10, conv(d, false, true));
    r.add("quantized::conv_transpose" + nd, 10, conv(d, true, false));
  }
  r.add("quantized::linear_prepack", 10, linear_prepack);
  r.add("quantized::linear", 10, linear(false));
  r.add("quantized::linear_relu", 10, linear(true));
}

}  // namespace onnxport::quantized
