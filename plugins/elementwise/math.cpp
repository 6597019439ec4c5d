// Binary min/max, interpolation and the special functions ONNX has no single op for, written
// with the ops opset 9 already has. Integer inputs of floating functions are computed in float
// (torch.exp2 of an int tensor is float), like PyTorch.
#include <cmath>
#include <limits>

#include "elementwise.h"
#include "onnxport/helpers.h"

namespace onnxport::elementwise {
namespace {

using namespace helpers;

constexpr double kPi = 3.14159265358979323846;

// A unary float function f(g, x) as a symbolic (integer inputs become float).
template <Value* (*f)(Graph&, Value*)>
Value* unary_fn(Graph& g, const TorchNode&, const Args& a) {
  return f(g, to_float(g, a.tensor(0)));
}

// A binary float function f(g, x, y) on the promoted operands.
template <Value* (*f)(Graph&, Value*, Value*)>
Value* binary_fn(Graph& g, const TorchNode&, const Args& a) {
  std::vector<Value*> xy = promote_float(g, {a.tensor(0), a.tensor(1)});
  return f(g, xy[0], xy[1]);
}

Value* c(Graph& g, double v, Value* like) { return scalar_like(g, v, like); }

// ---- min/max

// Max/Min take integers from opset 12 and no bools: compare and select instead.
Symbolic extremum(bool is_max) {
  return [is_max](Graph& g, const TorchNode&, const Args& a) {
    std::vector<Value*> xy = promote(g, {a.tensor(0), a.tensor(1)});
    const DType d = dtype_of(xy[0]);
    if (d == DType::Bool) return std::vector<Value*>{g.op(is_max ? "Or" : "And", xy)};
    if (is_integral(d) && g.opset() < 12)
      return std::vector<Value*>{g.op("Where", {g.op(is_max ? "Greater" : "Less", xy), xy[0], xy[1]})};
    return std::vector<Value*>{g.op(is_max ? "Max" : "Min", xy)};
  };
}

// fmax/fmin: a nan operand loses against a number.
Symbolic extremum_ignoring_nan(bool is_max) {
  Symbolic plain = extremum(is_max);
  return [plain](Graph& g, const TorchNode& n, const Args& a) {
    std::vector<Value*> xy = promote(g, {a.tensor(0), a.tensor(1)});
    Value* m = plain(g, n, a).at(0);
    if (!is_floating(dtype_of(xy[0]))) return std::vector<Value*>{m};
    m = g.op("Where", {g.op("IsNaN", {xy[1]}), xy[0], m});
    return std::vector<Value*>{g.op("Where", {g.op("IsNaN", {xy[0]}), xy[1], m})};
  };
}

// ---- interpolation and fused arithmetic

// lerp(start, end, w): start + w (end - start) for |w| < 0.5, else end - (end - start)(1 - w),
// PyTorch's two branches (exact at w = 0 and w = 1).
Value* lerp(Graph& g, const TorchNode&, const Args& a) {
  std::vector<Value*> se = promote(g, {a.tensor(0), a.tensor(1)});
  Value* w = cast(g, a.tensor(2), dtype_of(se[0]));
  Value* diff = g.op("Sub", {se[1], se[0]});
  Value* low = g.op("Add", {se[0], g.op("Mul", {w, diff})});
  Value* high = g.op("Sub", {se[1], g.op("Mul", {diff, g.op("Sub", {c(g, 1.0, w), w})})});
  if (auto wc = constant_number(a.at(2))) return std::abs(*wc) < 0.5 ? low : high;
  return g.op("Where", {g.op("Less", {g.op("Abs", {w}), c(g, 0.5, w)}), low, high});
}

// addcmul(x, t1, t2, value) = x + value t1 t2; addcdiv the same with t1 / t2.
Symbolic addc(const std::string& onnx_op) {
  return [onnx_op](Graph& g, const TorchNode&, const Args& a) {
    std::vector<Value*> v = promote(g, {a.tensor(0), a.tensor(1), a.tensor(2)});
    Value* t = g.op(onnx_op, {v[1], v[2]});
    const double value = a.is_none(3) ? 1.0 : a.f(3);
    if (value != 1.0) t = g.op("Mul", {t, c(g, value, t)});
    return std::vector<Value*>{g.op("Add", {v[0], t})};
  };
}

// ---- special functions

Value* exp2(Graph& g, Value* x) { return g.op("Pow", {c(g, 2.0, x), x}); }
Value* erfc(Graph& g, Value* x) { return g.op("Sub", {c(g, 1.0, x), g.op("Erf", {x})}); }
Value* deg2rad(Graph& g, Value* x) { return g.op("Mul", {x, c(g, kPi / 180.0, x)}); }
Value* rad2deg(Graph& g, Value* x) { return g.op("Mul", {x, c(g, 180.0 / kPi, x)}); }

Value* trunc_of(Graph& g, Value* x) { return g.op("Mul", {g.op("Sign", {x}), g.op("Floor", {g.op("Abs", {x})})}); }
Value* frac(Graph& g, Value* x) { return g.op("Sub", {x, trunc_of(g, x)}); }

// ndtr(x) = (1 + erf(x / sqrt 2)) / 2, the standard normal CDF.
Value* ndtr(Graph& g, Value* x) {
  Value* e = g.op("Erf", {g.op("Mul", {x, c(g, 1.0 / std::sqrt(2.0), x)})});
  return g.op("Mul", {g.op("Add", {e, c(g, 1.0, x)}), c(g, 0.5, x)});
}
Value* log_ndtr(Graph& g, Value* x) { return g.op("Log", {ndtr(g, x)}); }

// sinc(x) = sin(pi x) / (pi x), 1 at 0.
Value* sinc(Graph& g, Value* x) {
  Value* px = g.op("Mul", {x, c(g, kPi, x)});
  return g.op("Where", {is_zero(g, x), c(g, 1.0, x), g.op("Div", {g.op("Sin", {px}), px})});
}

// entr(x) = -x log x for x > 0, 0 at 0, -inf below.
Value* entr(Graph& g, Value* x) {
  Value* positive = g.op("Neg", {g.op("Mul", {x, g.op("Log", {x})})});
  Value* rest = g.op("Where", {is_zero(g, x), c(g, 0.0, x), c(g, -std::numeric_limits<double>::infinity(), x)});
  return g.op("Where", {g.op("Greater", {x, c(g, 0.0, x)}), positive, rest});
}

// x * f(y), and 0 where x is 0 unless y is nan (xlogy, xlog1py).
Value* x_times_unless_zero(Graph& g, Value* x, Value* y, Value* fy) {
  Value* zero_x = g.op("And", {is_zero(g, x), g.op("Not", {g.op("IsNaN", {y})})});
  return g.op("Where", {zero_x, c(g, 0.0, fy), g.op("Mul", {x, fy})});
}
Value* xlogy(Graph& g, Value* x, Value* y) { return x_times_unless_zero(g, x, y, g.op("Log", {y})); }
Value* xlog1py(Graph& g, Value* x, Value* y) {
  return x_times_unless_zero(g, x, y, g.op("Log", {g.op("Add", {y, c(g, 1.0, y)})}));
}

Value* hypot(Graph& g, Value* x, Value* y) {
  return g.op("Sqrt", {g.op("Add", {g.op("Mul", {x, x}), g.op("Mul", {y, y})})});
}

// log(e^x + e^y) = max + log(1 + e^-|x-y|), without overflow; logaddexp2 in base 2.
Value* logaddexp(Graph& g, Value* x, Value* y) {
  Value* tail = g.op("Exp", {g.op("Neg", {g.op("Abs", {g.op("Sub", {x, y})})})});
  return g.op("Add", {g.op("Max", {x, y}), g.op("Log", {g.op("Add", {tail, c(g, 1.0, tail)})})});
}
Value* logaddexp2(Graph& g, Value* x, Value* y) {
  Value* tail = exp2(g, g.op("Neg", {g.op("Abs", {g.op("Sub", {x, y})})}));
  Value* log2_sum = g.op("Div", {g.op("Log", {g.op("Add", {tail, c(g, 1.0, tail)})}), c(g, std::log(2.0), tail)});
  return g.op("Add", {g.op("Max", {x, y}), log2_sum});
}

// |x| with the sign of y, -0.0 included (1/-0 = -inf).
Value* copysign(Graph& g, Value* x, Value* y) {
  Value* zero = c(g, 0.0, y);
  Value* negative = g.op("Or", {g.op("Less", {y, zero}), g.op("Less", {g.op("Reciprocal", {y}), zero})});
  Value* magnitude = g.op("Abs", {x});
  return g.op("Where", {negative, g.op("Neg", {magnitude}), magnitude});
}

// atan2(y, x): atan(y / x) moved into the right quadrant.
Value* atan2(Graph& g, Value* y, Value* x) {
  Value* base = g.op("Atan", {g.op("Div", {y, x})});
  Value* zero = c(g, 0.0, x);
  Value* turn = g.op("Where", {g.op("Less", {y, zero}), c(g, -kPi, x), c(g, kPi, x)});
  return g.op("Where", {g.op("Less", {x, zero}), g.op("Add", {base, turn}), base});
}

// logit(x, eps) = log(x / (1 - x)), x clamped to [eps, 1 - eps] when eps is given.
Value* logit(Graph& g, const TorchNode&, const Args& a) {
  Value* x = to_float(g, a.tensor(0));
  if (auto eps = a.opt_f(1)) x = g.op("Min", {g.op("Max", {x, c(g, *eps, x)}), c(g, 1.0 - *eps, x)});
  return g.op("Log", {g.op("Div", {x, g.op("Sub", {c(g, 1.0, x), x})})});
}

// heaviside(x, values): 0 below zero, 1 above, values at zero.
Value* heaviside(Graph& g, const TorchNode&, const Args& a) {
  std::vector<Value*> xv = promote(g, {a.tensor(0), a.tensor(1)});
  Value* step = cast(g, g.op("Greater", {xv[0], scalar_like(g, 0, xv[0])}), dtype_of(xv[0]));
  return g.op("Where", {is_zero(g, xv[0]), xv[1], step});
}

// float_power computes in double.
Value* float_power(Graph& g, const TorchNode&, const Args& a) {
  return g.op("Pow", {cast(g, a.tensor(0), DType::Double), cast(g, a.tensor(1), DType::Double)});
}

// ldexp(x, e) = x * 2^e (floating result).
Value* ldexp(Graph& g, const TorchNode&, const Args& a) {
  Value* x = to_float(g, a.tensor(0));
  return g.op("Mul", {x, exp2(g, cast(g, a.tensor(1), dtype_of(x)))});
}

// sgn of a real tensor is its sign.
Value* sgn(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const DType d = dtype_of(x);
  if (d == DType::Complex64 || d == DType::Complex128)
    throw ArgumentError(n.kind + " of complex tensors has no ONNX mapping");
  if (d == DType::Bool) return x;
  return g.op("Sign", {x});
}

}  // namespace

void add_math(Registrar& r) {
  r.add("aten::maximum", 9, extremum(true));
  r.add("aten::minimum", 9, extremum(false));
  r.add("aten::fmax", 9, extremum_ignoring_nan(true));
  r.add("aten::fmin", 9, extremum_ignoring_nan(false));
  add_with_inplace(r, "aten::lerp", 9, lerp);
  add_with_inplace(r, "aten::addcmul", 9, addc("Mul"));
  add_with_inplace(r, "aten::addcdiv", 9, addc("Div"));

  add_with_inplace(r, "aten::exp2", 9, unary_fn<exp2>);
  add_with_inplace(r, "aten::erfc", 9, unary_fn<erfc>);
  add_with_inplace(r, "aten::deg2rad", 9, unary_fn<deg2rad>);
  add_with_inplace(r, "aten::rad2deg", 9, unary_fn<rad2deg>);
  add_with_inplace(r, "aten::frac", 9, unary_fn<frac>);
  add_with_inplace(r, "aten::sinc", 9, unary_fn<sinc>);
  add_with_inplace(r, "aten::logit", 9, logit);
  r.add("aten::special_ndtr", 9, unary_fn<ndtr>);
  r.add("aten::special_log_ndtr", 9, unary_fn<log_ndtr>);
  r.add("aten::special_entr", 9, unary_fn<entr>);
  add_with_inplace(r, "aten::xlogy", 9, binary_fn<xlogy>);
  r.add("aten::special_xlog1py", 9, binary_fn<xlog1py>);
  add_with_inplace(r, "aten::hypot", 9, binary_fn<hypot>);
  r.add("aten::logaddexp", 9, binary_fn<logaddexp>);
  r.add("aten::logaddexp2", 9, binary_fn<logaddexp2>);
  add_with_inplace(r, "aten::copysign", 9, binary_fn<copysign>);
  add_with_inplace(r, "aten::atan2", 9, binary_fn<atan2>);
  add_with_inplace(r, "aten::heaviside", 9, heaviside);
  add_with_inplace(r, "aten::float_power", 9, float_power);
  add_with_inplace(r, "aten::ldexp", 9, ldexp);
  add_with_inplace(r, "aten::sgn", 9, sgn);
  r.add("aten::positive", 9, identity());
  for (const char* f : {"sinh", "cosh", "asinh", "acosh", "atanh"}) {
    std::string onnx_op = f;
    onnx_op[0] = static_cast<char>(std::toupper(onnx_op[0]));
    add_with_inplace(r, std::string("aten::") + f, 9, unary_float(onnx_op));
  }
}

}  // namespace onnxport::elementwise
