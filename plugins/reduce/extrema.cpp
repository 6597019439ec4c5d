// Extrema and logical reductions: amax/amin/aminmax, every overload of aten::max/min (full
// reduction, (values, indices) along a dim, elementwise with `other`), argmax/argmin, all/any.
#include "onnxport/helpers.h"
#include "reduce.h"
#include "reduce_common.h"

namespace onnxport::reduce {
namespace {

using namespace helpers;

// amax/amin(self, dim=[], keepdim=False)
Symbolic extreme(const std::string& op) {
  return [op](Graph& g, const TorchNode& n, const Args& a) {
    Value* x = a.tensor(0);
    return std::vector<Value*>{
        reduce_any(g, op, x, reduction_dims(n, named_arg(n, a, "dim"), x), named_bool(n, a, "keepdim", false))};
  };
}

// aminmax(self, *, dim=None, keepdim=False) -> (min, max)
std::vector<Value*> aminmax(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const auto dims = reduction_dims(n, named_arg(n, a, "dim"), x);
  const bool keepdim = named_bool(n, a, "keepdim", false);
  return {reduce_any(g, "ReduceMin", x, dims, keepdim), reduce_any(g, "ReduceMax", x, dims, keepdim)};
}

// ArgMax/ArgMin take no bools; negative axes only from opset 11.
Value* arg_extreme(Graph& g, const std::string& op, Value* x, int64_t dim, bool keepdim) {
  if (dtype_of(x) == DType::Bool) x = cast(g, x, DType::Int32);
  if (dim < 0 && g.opset() < 11) dim = normalize_dim(dim, rank_of(x, op + " with a negative dim"));
  return g.op(op, {x}, {{"axis_i", dim}, {"keepdims_i", keepdim ? 1 : 0}});
}

// argmax/argmin(self, dim=None, keepdim=False). Without a dim the index is into the
// flattened tensor; keepdim then keeps every dim as size 1.
Symbolic arg_reduction(const std::string& op) {
  return [op](Graph& g, const TorchNode& n, const Args& a) {
    Value* x = a.tensor(0);
    const bool keepdim = named_bool(n, a, "keepdim", false);
    Value* dim = named_arg(n, a, "dim");
    if (dim && !dim->is_none()) {
      if (x->rank() == std::optional<int64_t>(0)) return std::vector<Value*>{g.constant_int(0)};
      return std::vector<Value*>{arg_extreme(g, op, x, a.i(1), keepdim)};
    }
    Value* flat = arg_extreme(g, op, reshape(g, x, std::vector<int64_t>{-1}), 0, false);
    if (!keepdim) return std::vector<Value*>{flat};
    const int64_t rank = rank_of(x, n.kind + " with keepdim=True and no dim");
    return std::vector<Value*>{reshape(g, flat, std::vector<int64_t>(static_cast<size_t>(rank), 1))};
  };
}

// Elementwise Max/Min: floats only before opset 12 (other inputs go through double, exact for
// every int32 and for int64 up to 2^53), then also integers but still no bools/small ints.
Value* elementwise_extreme(Graph& g, const TorchNode& n, const std::string& op, Value* x, Value* y) {
  std::vector<Value*> xy = promote(g, {x, y});
  if (g.opset() < 8) {
    auto sx = static_shape(xy[0]), sy = static_shape(xy[1]);
    if (!sx || !sy || *sx != *sy)
      throw ArgumentError(n.kind + " of tensors with different (or unknown) shapes needs opset 8 or later: " + op +
                          " has no broadcasting at opset " + std::to_string(g.opset()));
  }
  const DType d = result_type({x, y});
  DType compute = d;
  if (g.opset() < 12 && !is_floating(d))
    compute = DType::Double;
  else if (d == DType::Bool || d == DType::Int8 || d == DType::UInt8 || d == DType::Int16 || d == DType::UInt16)
    compute = DType::Int32;
  if (compute == d || d == DType::Undefined) return g.op(op, xy);
  return cast(g, g.op(op, {cast(g, xy[0], compute), cast(g, xy[1], compute)}), d);
}

// max/min: (self) full reduction | (self, dim, keepdim) -> (values, indices) | (self, other).
Symbolic max_min(const std::string& reduce_op, const std::string& arg_op, const std::string& elementwise_op) {
  return [=](Graph& g, const TorchNode& n, const Args& a) -> std::vector<Value*> {
    Value* x = a.tensor(0);
    if (Value* other = named_arg(n, a, "other")) return {elementwise_extreme(g, n, elementwise_op, x, other)};
    Value* dim = named_arg(n, a, "dim");
    if (!dim) return {reduce_any(g, reduce_op, x, {}, false)};
    const bool keepdim = named_bool(n, a, "keepdim", false);
    if (x->rank() == std::optional<int64_t>(0)) return {x, g.constant_int(0)};
    const int64_t d = a.i(1);
    return {reduce_any(g, reduce_op, x, {d}, keepdim), arg_extreme(g, arg_op, x, d, keepdim)};
  };
}

// all/any(self) and (self, dim, keepdim): bool results (uint8 for uint8 input, like PyTorch).
// A reduction over the truth values as 0/1 integers: all = min, any = max.
Symbolic logical(const std::string& reduce_op) {
  return [reduce_op](Graph& g, const TorchNode& n, const Args& a) {
    Value* x = a.tensor(0);
    const DType out = dtype_of(x) == DType::UInt8 ? DType::UInt8 : DType::Bool;
    Value* truth = cast(g, cast(g, x, DType::Bool), DType::Int32);
    Value* r = helpers::reduce(g, reduce_op, truth, reduction_dims(n, named_arg(n, a, "dim"), x),
                               named_bool(n, a, "keepdim", false));
    return std::vector<Value*>{cast(g, r, out)};
  };
}

}  // namespace

void add_extrema(Registrar& r) {
  r.add("aten::amax", 9, extreme("ReduceMax"));
  r.add("aten::amin", 9, extreme("ReduceMin"));
  r.add("aten::aminmax", 9, aminmax);
  r.add("aten::max", 7, max_min("ReduceMax", "ArgMax", "Max"));
  r.add("aten::min", 7, max_min("ReduceMin", "ArgMin", "Min"));
  r.add("aten::argmax", 9, arg_reduction("ArgMax"));
  r.add("aten::argmin", 9, arg_reduction("ArgMin"));
  r.add("aten::all", 9, logical("ReduceMin"));
  r.add("aten::any", 9, logical("ReduceMax"));
}

}  // namespace onnxport::reduce
