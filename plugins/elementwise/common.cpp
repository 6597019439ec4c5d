// Building blocks shared by the elementwise files.
#include <cfloat>

#include "elementwise.h"
#include "onnxport/helpers.h"

namespace onnxport::elementwise {

using namespace helpers;

std::vector<Value*> promote_float(Graph& g, const std::vector<Value*>& operands) {
  std::vector<Value*> out = promote(g, operands);
  if (is_int_or_bool(result_type(operands)))
    for (Value*& v : out) v = cast(g, v, DType::Float);
  return out;
}

Value* floor_div_integral(Graph& g, Value* x, Value* y) {
  const DType d = dtype_of(x);
  // computed in int32 or wider: r * y below may leave an 8- or 16-bit type's range
  if (is_narrow_integer(d)) return cast(g, floor_div_integral(g, cast(g, x, DType::Int32), cast(g, y, DType::Int32)), d);
  Value* q = g.op("Div", {x, y});
  Value* r = g.op("Sub", {x, g.op("Mul", {q, y})});
  Value* needs_fix = g.op("Less", {g.op("Mul", {r, y}), scalar_like(g, 0, r)});
  return g.op("Sub", {q, cast(g, needs_fix, d)});
}

Value* equal(Graph& g, Value* x, Value* y) {
  const DType d = dtype_of(x);
  if (is_floating(d) && g.opset() < 11)
    return g.op("Not", {g.op("Or", {g.op("Less", {x, y}), g.op("Greater", {x, y})})});
  if (d == DType::Bool || d == DType::Int32 || d == DType::Int64 || g.opset() >= 11) return g.op("Equal", {x, y});
  return g.op("Equal", {cast(g, x, DType::Int64), cast(g, y, DType::Int64)});
}

Value* is_zero(Graph& g, Value* x) { return equal(g, x, scalar_like(g, 0.0, x)); }

Value* full_bool_like(Graph& g, Value* x, bool value) {
  const Tensor fill(DType::Bool, {1}, {static_cast<uint8_t>(value ? 1 : 0)});
  return g.op("ConstantOfShape", {shape_of(g, x)}, {{"value_t", fill}});
}

double max_finite(DType d) {
  switch (d) {
    case DType::Float16: return 65504.0;
    case DType::BFloat16: return 3.3895313892515355e38;
    case DType::Double: return DBL_MAX;
    default: return FLT_MAX;
  }
}

}  // namespace onnxport::elementwise
