// Variance and standard deviation: var = sum((x - mean)^2) / (N - correction) over the reduced
// dims, N their element count (a constant for static shapes, Size(x) / Size(mean) otherwise).
// unbiased=True is correction 1; the .correction overloads take it directly (None: 1).
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

}  // namespace

void add_statistics(Registrar& r) {
  r.add("aten::var", 9, var);
  r.add("aten::std", 9, stdev);
  r.add("aten::var_mean", 9, var_mean);
  r.add("aten::std_mean", 9, std_mean);
}

}  // namespace onnxport::reduce
