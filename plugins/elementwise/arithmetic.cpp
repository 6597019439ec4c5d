// Arithmetic with PyTorch's type promotion (helpers::promote): a Python number never widens a
// tensor (x_float16 * 2.5 stays float16), true division of integers gives float, and
// aten::add/sub's alpha scales the second operand.
#include "elementwise.h"

#include <cmath>
#include <cstdlib>

#include "onnxport/helpers.h"

namespace onnxport::elementwise {
namespace {

using namespace helpers;

// aten::add.Tensor/.Scalar, and aten::add.t (list concatenation) on TorchScript lists. An int
// list may be a 1-d tensor (aten::size(x)): then the lists are concatenated with Concat.
std::vector<Value*> add(Graph& g, const TorchNode& n, const Args& a) {
  if (a.at(0)->is_list() && a.at(1)->is_list()) {
    std::vector<Value*> items = a.list(0);
    for (Value* v : a.list(1)) items.push_back(v);
    return {g.list(items)};
  }
  if (n.schema.rfind("aten::add.t(", 0) == 0) return {concat(g, {int_list(g, a.at(0)), int_list(g, a.at(1))}, 0)};
  static const Symbolic add_op = binary("Add");
  return add_op(g, n, a);
}

// rsub(self, other, alpha) = other - alpha * self
Value* rsub(Graph& g, const TorchNode&, const Args& a) {
  std::vector<Value*> xy = promote(g, {a.tensor(0), a.tensor(1)});
  const double alpha = a.is_none(2) ? 1.0 : a.f(2);
  Value* self = alpha == 1.0 ? xy[0] : arithmetic(g, "Mul", {xy[0], scalar_like(g, alpha, xy[1])});
  return arithmetic(g, "Sub", {xy[1], self});
}

Value* divide(Graph& g, Value* x, Value* y, const std::string& rounding_mode, const std::string& op,
              DType true_division_dtype = DType::Float) {
  std::vector<Value*> xy = promote(g, {x, y});
  const DType t = result_type({x, y});
  const bool integral = is_int_or_bool(t);
  if (rounding_mode.empty()) {
    if (integral) xy = {cast(g, xy[0], true_division_dtype), cast(g, xy[1], true_division_dtype)};
    return g.op("Div", xy);
  }
  if (rounding_mode == "trunc") {
    if (integral) return arithmetic(g, "Div", xy);
    Value* q = g.op("Div", xy);
    return g.op("Mul", {g.op("Sign", {q}), g.op("Floor", {g.op("Abs", {q})})});
  }
  if (rounding_mode == "floor") {
    if (integral) return floor_div_integral(g, xy[0], xy[1]);
    return g.op("Floor", {g.op("Div", xy)});
  }
  throw ArgumentError(op + ": rounding_mode='" + rounding_mode + "' is not one of None, 'trunc', 'floor'");
}

Value* div(Graph& g, const TorchNode& n, const Args& a) {
  const std::string mode = a.is_none(2) ? "" : a.s(2);
  // Integers divided truly give torch's default dtype, float64 if the model ran under
  // torch.set_default_dtype(torch.float64): the recorded output says which.
  const DType recorded = n.output_types.empty() ? DType::Undefined : n.output_types[0].dtype;
  return divide(g, a.tensor(0), a.tensor(1), mode, n.kind, is_floating(recorded) ? recorded : DType::Float);
}

Value* floor_divide(Graph& g, const TorchNode& n, const Args& a) {
  return divide(g, a.tensor(0), a.tensor(1), "floor", n.kind);
}

// Python's %: the result has the sign of the divisor, x - floor(x / y) * y (ONNX Mod with fmod=0
// for integers from opset 10; before, the integer floor division is built from Div).
Value* remainder(Graph& g, const TorchNode&, const Args& a) {
  std::vector<Value*> xy = promote(g, {a.tensor(0), a.tensor(1)});
  const bool integral = is_int_or_bool(result_type({a.tensor(0), a.tensor(1)}));
  if (integral && g.opset() >= 10) return g.op("Mod", xy, {{"fmod_i", 0}});
  Value* floored = integral ? floor_div_integral(g, xy[0], xy[1]) : g.op("Floor", {g.op("Div", xy)});
  return arithmetic(g, "Sub", {xy[0], arithmetic(g, "Mul", {floored, xy[1]})});
}

Value* fmod(Graph& g, const TorchNode&, const Args& a) {
  return g.op("Mod", promote(g, {a.tensor(0), a.tensor(1)}), {{"fmod_i", 1}});
}

// Pow takes int32/int64 from opset 12 (8- and 16-bit integers at no opset, computed in int32):
// before that, compute in float and cast back.
Value* pow(Graph& g, const TorchNode&, const Args& a) {
  std::vector<Value*> xy = promote(g, {a.tensor(0), a.tensor(1)});
  const DType d = result_type({a.tensor(0), a.tensor(1)});
  if (!is_integral(d)) return g.op("Pow", xy);
  if (g.opset() >= 12 && is_narrow_integer(d))
    return cast(g, g.op("Pow", {cast(g, xy[0], DType::Int32), cast(g, xy[1], DType::Int32)}), d);
  if (g.opset() >= 12) return g.op("Pow", xy);
  return cast(g, g.op("Pow", {cast(g, xy[0], DType::Float), cast(g, xy[1], DType::Float)}), d);
}

Value* rsqrt(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  if (is_int_or_bool(dtype_of(x))) x = cast(g, x, DType::Float);
  return g.op("Reciprocal", {g.op("Sqrt", {x})});
}

// round(x, decimals=d), as PyTorch's kernel computes it: Round(x * 10^d) / 10^d, and for d < 0
// Round(x / 10^-d) * 10^-d (dividing by the exact power rather than multiplying by its inexact
// reciprocal).
Value* round_decimals(Graph& g, Value* x, int64_t decimals) {
  Value* power = scalar_like(g, std::pow(10.0, static_cast<double>(std::llabs(decimals))), x);
  if (decimals > 0) return g.op("Div", {g.op("Round", {g.op("Mul", {x, power})}), power});
  return g.op("Mul", {g.op("Round", {g.op("Div", {x, power})}), power});
}

// floor/ceil/round/trunc leave integer tensors unchanged; ONNX's ops only take floats.
Symbolic rounding(const std::string& onnx_op) {
  return [onnx_op](Graph& g, const TorchNode&, const Args& a) {
    Value* x = a.tensor(0);
    if (is_int_or_bool(dtype_of(x))) return std::vector<Value*>{x};
    if (onnx_op == "Trunc")
      return std::vector<Value*>{g.op("Mul", {g.op("Sign", {x}), g.op("Floor", {g.op("Abs", {x})})})};
    if (onnx_op == "Round" && a.size() > 1 && !a.is_none(1) && a.i(1) != 0)
      return std::vector<Value*>{round_decimals(g, x, a.i(1))};
    return std::vector<Value*>{g.op(onnx_op, {x})};
  };
}

// log2/log10 via the natural logarithm; log1p/expm1 directly (no dedicated ONNX ops).
Symbolic log_base(double base) {
  return [base](Graph& g, const TorchNode&, const Args& a) {
    Value* x = a.tensor(0);
    if (is_int_or_bool(dtype_of(x))) x = cast(g, x, DType::Float);
    return std::vector<Value*>{g.op("Div", {g.op("Log", {x}), g.op("Log", {scalar_like(g, base, x)})})};
  };
}

Value* log1p(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  if (is_int_or_bool(dtype_of(x))) x = cast(g, x, DType::Float);
  return g.op("Log", {g.op("Add", {x, scalar_like(g, 1.0, x)})});
}

Value* expm1(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  if (is_int_or_bool(dtype_of(x))) x = cast(g, x, DType::Float);
  return g.op("Sub", {g.op("Exp", {x}), scalar_like(g, 1.0, x)});
}

// ONNX Mul has no bool: bool * bool is And (as torch.mul of two bool tensors gives).
Value* mul(Graph& g, const TorchNode& n, const Args& a) {
  if (dtype_of(a.tensor(0)) == DType::Bool && dtype_of(a.tensor(1)) == DType::Bool)
    return g.op("And", {a.tensor(0), a.tensor(1)});
  return binary("Mul")(g, n, a).front();
}

Value* square(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  return arithmetic(g, "Mul", {x, x});
}

}  // namespace

void add_arithmetic(Registrar& r) {
  add_with_inplace(r, "aten::add", 9, add);
  add_with_inplace(r, "aten::sub", 9, binary("Sub"));
  add_with_inplace(r, "aten::subtract", 9, binary("Sub"));
  add_with_inplace(r, "aten::mul", 9, mul);
  add_with_inplace(r, "aten::multiply", 9, mul);
  add_with_inplace(r, "aten::div", 9, div);
  add_with_inplace(r, "aten::divide", 9, div);
  add_with_inplace(r, "aten::true_divide", 9, div);
  add_with_inplace(r, "aten::floor_divide", 9, floor_divide);
  r.add("aten::floordiv", 9, floor_divide);  // TorchScript int/float `//`
  // torch.onnx 1.13 registers this name for floor_divide; libtorch 1.13 has no such op.
  r.add("aten::_floor_divide", 9, floor_divide);
  add_with_inplace(r, "aten::remainder", 9, remainder);
  add_with_inplace(r, "aten::fmod", 10, fmod);
  add_with_inplace(r, "aten::pow", 9, pow);
  r.add("aten::rsub", 9, rsub);
  add_with_inplace(r, "aten::neg", 9, unary("Neg"));
  add_with_inplace(r, "aten::abs", 9, unary("Abs"));
  add_with_inplace(r, "aten::sign", 9, unary("Sign"));
  add_with_inplace(r, "aten::exp", 9, unary_float("Exp"));
  add_with_inplace(r, "aten::log", 9, unary_float("Log"));
  add_with_inplace(r, "aten::sqrt", 9, unary_float("Sqrt"));
  add_with_inplace(r, "aten::rsqrt", 9, rsqrt);
  add_with_inplace(r, "aten::reciprocal", 9, unary_float("Reciprocal"));
  add_with_inplace(r, "aten::erf", 9, unary_float("Erf"));
  add_with_inplace(r, "aten::sin", 9, unary_float("Sin"));
  add_with_inplace(r, "aten::cos", 9, unary_float("Cos"));
  add_with_inplace(r, "aten::tan", 9, unary_float("Tan"));
  add_with_inplace(r, "aten::asin", 9, unary_float("Asin"));
  add_with_inplace(r, "aten::acos", 9, unary_float("Acos"));
  add_with_inplace(r, "aten::atan", 9, unary_float("Atan"));
  add_with_inplace(r, "aten::floor", 9, rounding("Floor"));
  add_with_inplace(r, "aten::ceil", 9, rounding("Ceil"));
  add_with_inplace(r, "aten::trunc", 9, rounding("Trunc"));
  add_with_inplace(r, "aten::round", 11, rounding("Round"));
  add_with_inplace(r, "aten::log2", 9, log_base(2.0));
  add_with_inplace(r, "aten::log10", 9, log_base(10.0));
  add_with_inplace(r, "aten::log1p", 9, log1p);
  add_with_inplace(r, "aten::expm1", 9, expm1);
  add_with_inplace(r, "aten::square", 9, square);
}

}  // namespace onnxport::elementwise
