// Piecewise activations (shrinkage, threshold), log_sigmoid, rrelu and glu, built from
// comparisons and Where: ONNX's Shrink/ThresholdedRelu do not match PyTorch's boundaries.
// (F.tanhshrink has no aten op in torch 1.13: it is traced as aten::tanh and aten::sub; the
// aten::tanhshrink mapping is for graphs that name it, as torch.onnx 1.13 registers it.)
#include "elementwise.h"
#include "onnxport/helpers.h"

namespace onnxport::elementwise {
namespace {

using namespace helpers;

double number_or(const Args& a, size_t i, double fallback) { return a.is_none(i) ? fallback : a.f(i); }

// hardshrink(x, l) = x where |x| > l, else 0.
Value* hardshrink(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  Value* keep = g.op("Greater", {g.op("Abs", {x}), scalar_like(g, number_or(a, 1, 0.5), x)});
  return g.op("Where", {keep, x, scalar_like(g, 0.0, x)});
}

// softshrink(x, l) = x - l above l, x + l below -l, else 0.
Value* softshrink(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  Value* l = scalar_like(g, number_or(a, 1, 0.5), x);
  Value* minus_l = scalar_like(g, -number_or(a, 1, 0.5), x);
  Value* below = g.op("Where", {g.op("Less", {x, minus_l}), g.op("Add", {x, l}), scalar_like(g, 0.0, x)});
  return g.op("Where", {g.op("Greater", {x, l}), g.op("Sub", {x, l}), below});
}

// tanhshrink(x) = x - tanh(x)
Value* tanhshrink(Graph& g, const TorchNode&, const Args& a) {
  Value* x = to_float(g, a.tensor(0));
  return g.op("Sub", {x, g.op("Tanh", {x})});
}

// log(sigmoid(x)) = -softplus(-x), which stays finite for very negative x.
Value* log_sigmoid(Graph& g, const TorchNode&, const Args& a) {
  return g.op("Neg", {g.op("Softplus", {g.op("Neg", {a.tensor(0)})})});
}

// threshold(x, t, v) = x where x > t, else v.
Value* threshold(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  return g.op("Where", {g.op("Greater", {x, cast(g, a.tensor(1), dtype_of(x))}), x, cast(g, a.tensor(2), dtype_of(x))});
}

// rrelu(x, lower, upper, training): in eval a leaky relu with the mean slope; in training
// each negative element gets a slope drawn uniformly from [lower, upper].
Value* rrelu(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  const double lower = number_or(a, 1, 1.0 / 8), upper = number_or(a, 2, 1.0 / 3);
  const bool training = !a.is_none(3) && a.b(3);
  if (!training) return g.op("LeakyRelu", {x}, {{"alpha_f", (lower + upper) / 2}});
  Value* slope = g.op("RandomUniformLike", {x}, {{"low_f", lower}, {"high_f", upper}});
  Value* negative = g.op("Less", {x, scalar_like(g, 0.0, x)});
  return g.op("Where", {negative, g.op("Mul", {x, slope}), x});
}

// glu(x, dim) = a * sigmoid(b), with a, b the two halves of x along dim.
Value* glu(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  int64_t dim = a.is_none(1) ? -1 : a.i(1);
  if (auto size = static_dim(x, dim); size && *size % 2 != 0)
    throw ArgumentError(n.kind + ": dimension " + std::to_string(dim) + " has odd size " + std::to_string(*size) +
                        " (glu halves it)");
  if (dim < 0 && g.opset() < 11) dim = normalize_dim(dim, rank_of(x, n.kind + " input with a negative dim"));
  std::vector<Value*> halves = split_equal(g, x, 2, dim);
  return g.op("Mul", {halves[0], g.op("Sigmoid", {halves[1]})});
}

}  // namespace

void add_activations_extra(Registrar& r) {
  r.add("aten::hardshrink", 9, hardshrink);
  r.add("aten::softshrink", 9, softshrink);
  r.add("aten::tanhshrink", 9, tanhshrink);
  r.add("aten::log_sigmoid", 9, log_sigmoid);
  add_with_inplace(r, "aten::threshold", 9, threshold);
  add_with_inplace(r, "aten::rrelu", 9, rrelu);
  r.add("aten::glu", 9, glu);
}

}  // namespace onnxport::elementwise
