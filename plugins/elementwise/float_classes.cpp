// Classification of floating values (nan, ±inf, sign bit) and nan_to_num. Integer and bool
// tensors hold no nan/inf: the answers are constant. IsInf only exists from opset 10, so
// infinities are found by comparing with the largest finite value of the dtype instead.
#include <limits>

#include "elementwise.h"
#include "onnxport/helpers.h"

namespace onnxport::elementwise {
namespace {

using namespace helpers;

Value* above_max(Graph& g, Value* x) { return g.op("Greater", {x, scalar_like(g, max_finite(dtype_of(x)), x)}); }
Value* below_lowest(Graph& g, Value* x) { return g.op("Less", {x, scalar_like(g, -max_finite(dtype_of(x)), x)}); }

Value* isnan(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  if (!is_floating(dtype_of(x))) return full_bool_like(g, x, false);
  return g.op("IsNaN", {x});
}

// detect: +1 positive infinities only, -1 negative only, 0 both.
Symbolic isinf(int detect) {
  return [detect](Graph& g, const TorchNode&, const Args& a) {
    Value* x = a.tensor(0);
    if (!is_floating(dtype_of(x))) return std::vector<Value*>{full_bool_like(g, x, false)};
    if (detect > 0) return std::vector<Value*>{above_max(g, x)};
    if (detect < 0) return std::vector<Value*>{below_lowest(g, x)};
    if (g.opset() >= 10 && (dtype_of(x) == DType::Float || dtype_of(x) == DType::Double))
      return std::vector<Value*>{g.op("IsInf", {x})};
    return std::vector<Value*>{above_max(g, g.op("Abs", {x}))};
  };
}

// |x| < inf is false for nan and ±inf.
Value* isfinite(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  if (!is_floating(dtype_of(x))) return full_bool_like(g, x, true);
  return g.op("Less", {g.op("Abs", {x}), scalar_like(g, std::numeric_limits<double>::infinity(), x)});
}

// x < 0, or 1/x < 0 for -0.0.
Value* signbit(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  const DType d = dtype_of(x);
  if (d == DType::Bool) return full_bool_like(g, x, false);
  Value* negative = g.op("Less", {x, scalar_like(g, 0, x)});
  if (!is_floating(d)) return negative;
  return g.op("Or", {negative, g.op("Less", {g.op("Reciprocal", {x}), scalar_like(g, 0, x)})});
}

// nan_to_num(x, nan=0, posinf=max, neginf=lowest).
Value* nan_to_num(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  const DType d = dtype_of(x);
  if (!is_floating(d)) return x;
  const double nan = a.opt_f(1).value_or(0.0);
  const double posinf = a.opt_f(2).value_or(max_finite(d));
  const double neginf = a.opt_f(3).value_or(-max_finite(d));
  Value* y = g.op("Where", {g.op("IsNaN", {x}), scalar_like(g, nan, x), x});
  y = g.op("Where", {above_max(g, x), scalar_like(g, posinf, x), y});
  return g.op("Where", {below_lowest(g, x), scalar_like(g, neginf, x), y});
}

}  // namespace

void add_float_classes(Registrar& r) {
  r.add("aten::isnan", 9, isnan);
  r.add("aten::isinf", 9, isinf(0));
  r.add("aten::isposinf", 9, isinf(1));
  r.add("aten::isneginf", 9, isinf(-1));
  r.add("aten::isfinite", 9, isfinite);
  r.add("aten::signbit", 9, signbit);
  add_with_inplace(r, "aten::nan_to_num", 9, nan_to_num);
}

}  // namespace onnxport::elementwise
