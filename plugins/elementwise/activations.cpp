// Activation functions. Most are one ONNX op; GELU/SiLU/Softplus are decomposed because their
// ONNX ops are newer than opset 17 or lack PyTorch's parameters.
#include <cmath>

#include "elementwise.h"
#include "onnxport/helpers.h"

namespace onnxport::elementwise {
namespace {

using namespace helpers;

// Argument i as a number, or `fallback` when the node omits it.
double number_or(const Args& a, size_t i, double fallback) { return a.is_none(i) ? fallback : a.f(i); }

// Bounds computed at run time: Max/Min (Clip only takes 0-d bounds).
Value* max_min(Graph& g, Value* x, Value* lo, Value* hi) {
  Value* y = x;
  if (lo) y = g.op("Max", {y, cast(g, lo, dtype_of(x))});
  if (hi) y = g.op("Min", {y, cast(g, hi, dtype_of(x))});
  return y;
}

bool is_constant_bound(const Value* v) { return !v || constant_number(v).has_value(); }

// Clip x to [lo, hi]; a bound is nullptr when absent. Opset 9: min/max attributes.
Value* clip_9(Graph& g, Value* x, Value* lo, Value* hi) {
  if (!is_constant_bound(lo) || !is_constant_bound(hi)) return max_min(g, x, lo, hi);
  Attrs attrs;
  if (lo) attrs.emplace_back("min_f", *constant_number(lo));
  if (hi) attrs.emplace_back("max_f", *constant_number(hi));
  return g.op("Clip", {x}, attrs);
}

// Opset 11: min/max are optional inputs of x's dtype.
Value* clip_11(Graph& g, Value* x, Value* lo, Value* hi) {
  if (!is_constant_bound(lo) || !is_constant_bound(hi)) return max_min(g, x, lo, hi);
  std::vector<Value*> in{x, lo ? scalar_like(g, *constant_number(lo), x) : nullptr};
  if (hi) in.push_back(scalar_like(g, *constant_number(hi), x));
  if (!in.back()) in.pop_back();
  return g.op("Clip", in);
}

using ClipFn = Value* (*)(Graph&, Value*, Value*, Value*);

// Clip, Max and Min take integer tensors from opset 12: before that, clip in float.
template <ClipFn clip>
Value* clip_any(Graph& g, Value* x, Value* lo, Value* hi) {
  const DType d = dtype_of(x);
  if (!is_integral(d) || g.opset() >= 12) return clip(g, x, lo, hi);
  return cast(g, clip(g, cast(g, x, DType::Float), lo, hi), d);
}

template <ClipFn clip>
Value* clamp(Graph& g, const TorchNode&, const Args& a) {
  return clip_any<clip>(g, a.tensor(0), a.optional_tensor(1), a.optional_tensor(2));
}

template <ClipFn clip>
Value* clamp_min(Graph& g, const TorchNode&, const Args& a) {
  return clip_any<clip>(g, a.tensor(0), a.tensor(1), nullptr);
}

template <ClipFn clip>
Value* clamp_max(Graph& g, const TorchNode&, const Args& a) {
  return clip_any<clip>(g, a.tensor(0), nullptr, a.tensor(1));
}

template <ClipFn clip>
Value* hardtanh(Graph& g, const TorchNode&, const Args& a) {
  return clip_any<clip>(g, a.tensor(0), g.constant_float(static_cast<float>(number_or(a, 1, -1.0))),
                        g.constant_float(static_cast<float>(number_or(a, 2, 1.0))));
}

template <ClipFn clip>
Value* relu6(Graph& g, const TorchNode&, const Args& a) {
  return clip_any<clip>(g, a.tensor(0), g.constant_float(0.0f), g.constant_float(6.0f));
}

// The Clip-based ops, with min/max attributes at opset 9 and inputs from opset 11.
template <ClipFn clip>
void add_clip_ops(Registrar& r, int since_opset) {
  add_with_inplace(r, "aten::hardtanh", since_opset, hardtanh<clip>);
  add_with_inplace(r, "aten::relu6", since_opset, relu6<clip>);
  add_with_inplace(r, "aten::clamp", since_opset, clamp<clip>);
  add_with_inplace(r, "aten::clip", since_opset, clamp<clip>);
  add_with_inplace(r, "aten::clamp_min", since_opset, clamp_min<clip>);
  add_with_inplace(r, "aten::clamp_max", since_opset, clamp_max<clip>);
}

// Relu takes integers only from opset 14 (and ONNX Runtime has no int64 Relu kernel): integer
// tensors use Max with 0 (integer Max from opset 12), or Relu in float before that.
Value* relu(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  const DType d = dtype_of(x);
  if (!is_integral(d)) return g.op("Relu", {x});
  if (g.opset() >= 12) return g.op("Max", {x, scalar_like(g, 0, x)});
  return cast(g, g.op("Relu", {cast(g, x, DType::Float)}), d);
}

Value* leaky_relu(Graph& g, const TorchNode&, const Args& a) {
  return g.op("LeakyRelu", {a.tensor(0)}, {{"alpha_f", number_or(a, 1, 0.01)}});
}

Value* elu(Graph& g, const TorchNode& n, const Args& a) {
  const double scale = number_or(a, 2, 1.0), input_scale = number_or(a, 3, 1.0);
  if (scale != 1.0 || input_scale != 1.0)
    throw ArgumentError(n.kind +
                        " with scale/input_scale other than 1 has no ONNX mapping (use aten::selu or plain ELU)");
  return g.op("Elu", {a.tensor(0)}, {{"alpha_f", number_or(a, 1, 1.0)}});
}

Value* hardsigmoid_of(Graph& g, Value* x) {
  return g.op("HardSigmoid", {x}, {{"alpha_f", 1.0 / 6.0}, {"beta_f", 0.5}});
}

Value* hardsigmoid(Graph& g, const TorchNode&, const Args& a) { return hardsigmoid_of(g, a.tensor(0)); }

Value* hardswish(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  if (g.opset() >= 14) return g.op("HardSwish", {x});
  return g.op("Mul", {x, hardsigmoid_of(g, x)});
}

Value* silu(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  return g.op("Mul", {x, g.op("Sigmoid", {x})});
}

Value* mish(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  return g.op("Mul", {x, g.op("Tanh", {g.op("Softplus", {x})})});
}

// softplus(x, beta, threshold) = x where beta x > threshold, else log(1 + exp(beta x)) / beta.
// ONNX Softplus has neither parameter: Softplus(beta x) / beta (no Mul/Div when beta is 1), and
// Where(Greater(beta x, threshold), x, that) when the threshold is below torch's default 20. From
// 20 on the linear branch changes nothing measurable (log(1 + exp(t)) - t < 3e-9 for t > 20),
// which is why torch.onnx drops it; below, it does (0.13 at t = 2).
Value* softplus(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  const double beta = number_or(a, 1, 1.0);
  const double threshold = number_or(a, 2, 20.0);
  Value* b = beta == 1.0 ? nullptr : scalar_like(g, beta, x);
  Value* bx = b ? g.op("Mul", {x, b}) : x;
  Value* curve = g.op("Softplus", {bx});
  if (b) curve = g.op("Div", {curve, b});
  if (threshold >= 20.0) return curve;
  return g.op("Where", {g.op("Greater", {bx, scalar_like(g, threshold, x)}), x, curve});
}

// gelu(x) = x/2 (1 + erf(x / sqrt 2)), or with approximate='tanh'
//           x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); ONNX's Gelu from opset 20.
Value* gelu(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const std::string approximate = a.is_none(1) ? "none" : a.s(1);
  if (g.opset() >= 20 && (approximate == "none" || approximate == "tanh"))
    return g.op("Gelu", {x}, {{"approximate_s", approximate}});
  Value* inner;
  if (approximate == "none") {
    inner = g.op("Erf", {g.op("Mul", {x, scalar_like(g, 1.0 / std::sqrt(2.0), x)})});
  } else if (approximate == "tanh") {
    Value* cube = g.op("Mul", {x, g.op("Mul", {x, x})});
    Value* poly = g.op("Add", {x, g.op("Mul", {cube, scalar_like(g, 0.044715, x)})});
    inner = g.op("Tanh", {g.op("Mul", {poly, scalar_like(g, std::sqrt(2.0 / M_PI), x)})});
  } else {
    throw ArgumentError(n.kind + ": approximate='" + approximate + "' is not one of 'none', 'tanh'");
  }
  Value* half_x = g.op("Mul", {x, scalar_like(g, 0.5, x)});
  return g.op("Mul", {half_x, g.op("Add", {inner, scalar_like(g, 1.0, x)})});
}

// PyTorch's weight is per channel (dim 1); ONNX PRelu broadcasts from the right.
Value* prelu(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  Value* w = a.tensor(1);
  const auto x_rank = x->rank();
  const auto w_shape = static_shape(w);
  if (x_rank && *x_rank > 2 && w_shape && w_shape->size() == 1 && (*w_shape)[0] != 1) {
    std::vector<int64_t> axes;
    for (int64_t i = 1; i < *x_rank - 1; ++i) axes.push_back(i);
    w = unsqueeze(g, w, axes);
  }
  // torch's output has x's shape: a 0-d x with its one weight stays 0-d (PRelu would broadcast to [1]).
  if (x_rank == std::optional<int64_t>(0)) w = reshape(g, w, std::vector<int64_t>{});
  return g.op("PRelu", {x, w});
}

// f(x) computed in float32 for a float64 x and cast back: ONNX Celu, and ONNX Runtime's Elu, take
// float32 only (torch.onnx does the same).
Value* in_float32(Graph& g, Value* x, const std::function<Value*(Value*)>& f) {
  if (x->dtype() != DType::Double) return f(x);
  return cast(g, f(cast(g, x, DType::Float)), DType::Double);
}

}  // namespace

void add_activations(Registrar& r) {
  add_with_inplace(r, "aten::relu", 9, relu);
  add_with_inplace(r, "aten::sigmoid", 9, unary_float("Sigmoid"));
  add_with_inplace(r, "aten::tanh", 9, unary_float("Tanh"));
  add_with_inplace(r, "aten::leaky_relu", 9, leaky_relu);
  add_with_inplace(r, "aten::elu", 9, elu);
  add_with_inplace(r, "aten::selu", 9, unary("Selu"));
  // Before ONNX Celu (opset 12): celu(x, alpha) = alpha * elu(x / alpha).
  add_with_inplace(r, "aten::celu", 9, [](Graph& g, const TorchNode&, const Args& a) {
    return in_float32(g, a.tensor(0), [&](Value* x) {
      Value* alpha = scalar_like(g, number_or(a, 1, 1.0), x);
      return g.op("Mul", {alpha, g.op("Elu", {g.op("Div", {x, alpha})}, {{"alpha_f", 1.0}})});
    });
  });
  add_with_inplace(r, "aten::celu", 12, [](Graph& g, const TorchNode&, const Args& a) {
    return in_float32(g, a.tensor(0),
                      [&](Value* x) { return g.op("Celu", {x}, {{"alpha_f", number_or(a, 1, 1.0)}}); });
  });
  add_clip_ops<clip_9>(r, 9);
  add_clip_ops<clip_11>(r, 11);
  add_with_inplace(r, "aten::hardsigmoid", 9, hardsigmoid);
  add_with_inplace(r, "aten::hardswish", 9, hardswish);
  add_with_inplace(r, "aten::silu", 9, silu);
  add_with_inplace(r, "aten::mish", 9, mish);
  r.add("aten::softplus", 9, softplus);
  r.add("aten::softsign", 9, unary("Softsign"));
  r.add("aten::gelu", 9, gelu);
  r.add("aten::prelu", 8, prelu);  // PRelu-7 (float types) already has the same semantics
}

}  // namespace onnxport::elementwise
