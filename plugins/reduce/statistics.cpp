// Variance and standard deviation: var = sum((x - mean)^2) / (N - correction) over the reduced
// dims, N their element count (a constant for static shapes, Size(x) / Size(mean) otherwise).
// unbiased=True is correction 1; the .correction overloads take it directly (None: 1).
// Median (values and indices along a dim, or of all elements): ONNX TopK, see median_along.
#include <limits>
#include <utility>

#include "onnxport/helpers.h"
#include "reduce.h"
#include "reduce_common.h"

namespace onnxport::reduce {
namespace {

using namespace helpers;

// The variance over `dims` and what var_mean/std_mean need to add the mean.
struct Moments {
  Value* x;
  std::vector<int64_t> dims;
  bool keepdim;
  Value* mean_keepdim;
  Value* var;

  Value* mean(Graph& g) const { return keepdim ? mean_keepdim : helpers::reduce(g, "ReduceMean", x, dims, false); }
};

double correction_of(const TorchNode& n, const Args& a) {
  if (Value* c = named_arg(n, a, "correction")) {
    if (c->is_none()) return 1.0;
    if (auto v = c->maybe_float()) return *v;
    throw ArgumentError(n.kind + ": argument 'correction' must be a constant number, found " + c->describe());
  }
  return named_bool(n, a, "unbiased", true) ? 1.0 : 0.0;
}

// The number of elements each output reduces over, when those dims are static.
std::optional<double> static_count(const Value* x, std::vector<int64_t> dims) {
  if (dims.empty()) {
    auto rank = x->rank();
    if (!rank) return std::nullopt;
    for (int64_t d = 0; d < *rank; ++d) dims.push_back(d);
  }
  double count = 1;
  for (int64_t d : dims) {
    auto size = static_dim(x, d);
    if (!size) return std::nullopt;
    count *= static_cast<double>(*size);
  }
  return count;
}

// N - correction as a scalar of x's dtype.
Value* divisor(Graph& g, Value* x, const std::vector<int64_t>& dims, Value* mean_keepdim, double correction) {
  if (auto count = static_count(x, dims)) return scalar_like(g, *count - correction, x);
  const DType d = dtype_of(x);
  Value* count = g.op("Div", {cast(g, g.op("Size", {x}), d), cast(g, g.op("Size", {mean_keepdim}), d)});
  return correction == 0.0 ? count : g.op("Sub", {count, scalar_like(g, correction, x)});
}

Moments moments(Graph& g, const TorchNode& n, const Args& a) {
  Moments m;
  m.x = to_float(g, a.tensor(0));
  m.dims = reduction_dims(n, named_arg(n, a, "dim"), m.x);
  m.keepdim = named_bool(n, a, "keepdim", false);
  m.mean_keepdim = helpers::reduce(g, "ReduceMean", m.x, m.dims, true);
  Value* centered = g.op("Sub", {m.x, m.mean_keepdim});
  Value* squares = helpers::reduce(g, "ReduceSum", g.op("Mul", {centered, centered}), m.dims, m.keepdim);
  m.var = g.op("Div", {squares, divisor(g, m.x, m.dims, m.mean_keepdim, correction_of(n, a))});
  return m;
}

Value* var(Graph& g, const TorchNode& n, const Args& a) { return moments(g, n, a).var; }
Value* stdev(Graph& g, const TorchNode& n, const Args& a) { return g.op("Sqrt", {moments(g, n, a).var}); }

std::vector<Value*> var_mean(Graph& g, const TorchNode& n, const Args& a) {
  Moments m = moments(g, n, a);
  return {m.var, m.mean(g)};
}

std::vector<Value*> std_mean(Graph& g, const TorchNode& n, const Args& a) {
  Moments m = moments(g, n, a);
  return {g.op("Sqrt", {m.var}), m.mean(g)};
}

// ---- median

// The median of x along `dim` as torch 1.13 computes it on the CPU, both outputs kept as size-1 dims:
// the LOWER of the two middle values for an even count, i.e. element (n - 1) / 2 of the row sorted
// ascending with equal values in index order, and that element's index. Its kernel selects with the
// total order (value, index), so the indices are deterministic and this reproduces them exactly,
// ties included: ONNX TopK returns the k smallest ascending, equal values lower index first. A row
// holding a NaN gives NaN and the index of its first NaN, as torch does.
// Opset 11+: TopK(largest=0). Opsets 9/10 (no `largest`): TopK of the negated values (in double for
// integers, exact to 2^53), whose ties keep index order too; k as an attribute at opset 9, so the
// dim's size must be static there.
std::pair<Value*, Value*> median_along(Graph& g, const TorchNode& n, Value* x, int64_t dim) {
  const DType dtype = dtype_of(x);
  Value* count = helpers::size(g, x, dim, true);  // 1-d [1]; a constant when static
  Value* k = g.op("Add", {g.op("Div", {g.op("Sub", {count, g.constant_ints({1})}), g.constant_ints({2})}),
                          g.constant_ints({1})});
  Value* last = g.op("Sub", {k, g.constant_ints({1})});  // position of the median among the k smallest
  std::vector<Value*> smallest;
  if (g.opset() >= 11) {
    // ONNX Runtime's TopK takes float, double, int32 and int64.
    DType compute = dtype;
    if (dtype == DType::Float16 || dtype == DType::BFloat16)
      compute = DType::Float;
    else if (dtype == DType::Int8 || dtype == DType::UInt8 || dtype == DType::Int16 || dtype == DType::UInt16)
      compute = DType::Int32;
    else if (dtype == DType::UInt32)
      compute = DType::Int64;
    Value* input = compute == dtype ? x : cast(g, x, compute);
    smallest = g.op("TopK", {input, k}, {{"axis_i", dim}, {"largest_i", 0}, {"sorted_i", 1}}, 2);
    if (compute != dtype) smallest[0] = cast(g, smallest[0], dtype);
  } else {
    const bool via_double = !is_floating(dtype) && dtype != DType::Undefined;
    Value* negated = g.op("Neg", {via_double ? cast(g, x, DType::Double) : x});
    if (g.opset() >= 10) {
      smallest = g.op("TopK", {negated, k}, {{"axis_i", dim}}, 2);
    } else {
      auto kc = k->maybe_ints();
      if (!kc || kc->size() != 1)
        throw ArgumentError(n.kind + " over a dim whose size is only known at run time (" + x->describe() +
                            ") needs opset 10 or later (TopK's k is an attribute at opset 9)");
      smallest = g.op("TopK", {negated}, {{"axis_i", dim}, {"k_i", (*kc)[0]}}, 2);
    }
    smallest[0] = g.op("Neg", {smallest[0]});
    if (via_double) smallest[0] = cast(g, smallest[0], dtype);
  }
  Value* values = gather(g, smallest[0], last, dim);
  Value* indices = gather(g, smallest[1], last, dim);
  if (is_floating(dtype)) {
    Value* nan = cast(g, g.op("IsNaN", {x}), DType::Float);
    Value* has_nan = cast(g, helpers::reduce(g, "ReduceMax", nan, {dim}, true), DType::Bool);
    Value* first_nan = g.op("ArgMax", {nan}, {{"axis_i", dim}, {"keepdims_i", 1}});
    values = g.op("Where", {has_nan, scalar_like(g, std::numeric_limits<double>::quiet_NaN(), values), values});
    indices = g.op("Where", {has_nan, first_nan, indices});
  }
  return {values, indices};
}

// median.dim(self, dim, keepdim=False) -> (values, indices) | median(self) -> the median of all elements.
std::vector<Value*> median(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  Value* dim_arg = named_arg(n, a, "dim");
  if (!dim_arg) {
    if (x->rank() == std::optional<int64_t>(0)) return {x};
    auto flat = median_along(g, n, reshape(g, x, std::vector<int64_t>{-1}), 0);
    return {squeeze(g, flat.first, {0})};
  }
  if (x->rank() == std::optional<int64_t>(0)) {
    normalize_dim(a.i(1), 0);  // validates: 0 and -1 are the dims of a 0-d tensor
    return {x, g.constant_int(0)};
  }
  const int64_t dim = normalize_dim(a.i(1), rank_of(x, n.kind + " input"));
  auto [values, indices] = median_along(g, n, x, dim);
  if (!named_bool(n, a, "keepdim", false)) {
    values = squeeze(g, values, {dim});
    indices = squeeze(g, indices, {dim});
  }
  return {values, indices};
}

}  // namespace

void add_statistics(Registrar& r) {
  r.add("aten::var", 9, var);
  r.add("aten::std", 9, stdev);
  r.add("aten::var_mean", 9, var_mean);
  r.add("aten::std_mean", 9, std_mean);
  r.add("aten::median", 9, median);
}

}  // namespace onnxport::reduce
