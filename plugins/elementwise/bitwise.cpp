// Bit shifts and `not`. ONNX (up to opset 17) has BitShift for unsigned integers only, so
// signed integers shift by multiplying/floor-dividing by powers of two (>> of a negative
// integer rounds toward -inf, like an arithmetic shift).
#include <cmath>

#include "elementwise.h"
#include "onnxport/helpers.h"

namespace onnxport::elementwise {
namespace {

using namespace helpers;

// 2^y in dtype d: a constant when y is, Pow otherwise (integer Pow needs opset 12).
Value* power_of_two(Graph& g, Value* y, DType d) {
  if (auto k = constant_number(y)) return g.constant_scalar(d, std::ldexp(1.0, static_cast<int>(*k)));
  if (g.opset() >= 12) return g.op("Pow", {g.constant_scalar(d, 2.0), cast(g, y, d)});
  return cast(g, g.op("Pow", {g.constant_float(2.0f), cast(g, y, DType::Float)}), d);
}

Symbolic shift(bool left) {
  return [left](Graph& g, const TorchNode& n, const Args& a) {
    Value *x = a.tensor(0), *y = a.tensor(1);
    const DType d = result_type({x, y});
    if (!is_integral(d))
      throw ArgumentError(n.kind + ": cannot shift " + x->describe() + " by " + y->describe() +
                          " (integer operands expected)");
    std::vector<Value*> xy = promote(g, {x, y});
    if (d == DType::UInt8 || d == DType::UInt16 || d == DType::UInt32 || d == DType::UInt64) {
      if (g.opset() < 11)
        throw ArgumentError(n.kind + " of unsigned integers needs ONNX BitShift: supported from opset 11");
      return std::vector<Value*>{g.op("BitShift", xy, {{"direction_s", left ? "LEFT" : "RIGHT"}})};
    }
    Value* factor = power_of_two(g, xy[1], d);
    if (left) return std::vector<Value*>{g.op("Mul", {xy[0], factor})};
    return std::vector<Value*>{floor_div_integral(g, xy[0], factor)};
  };
}

Value* not_(Graph& g, const TorchNode&, const Args& a) { return g.op("Not", {cast(g, a.tensor(0), DType::Bool)}); }

}  // namespace

void add_bitwise(Registrar& r) {
  for (const char* op : {"aten::__lshift__", "aten::__ilshift__"}) r.add(op, 9, shift(true));
  for (const char* op : {"aten::__rshift__", "aten::__irshift__"}) r.add(op, 9, shift(false));
  helpers::add_with_inplace(r, "aten::bitwise_left_shift", 9, shift(true));
  helpers::add_with_inplace(r, "aten::bitwise_right_shift", 9, shift(false));
  r.add("aten::__not__", 9, not_);
}

}  // namespace onnxport::elementwise
