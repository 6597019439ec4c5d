// Sums and products over dims. PyTorch sums and multiplies integers and bools as int64 unless
// a `dtype` argument says otherwise (the input is cast to it first), and means are floating.
#include "onnxport/helpers.h"
#include "reduce.h"
#include "reduce_common.h"

namespace onnxport::reduce {
namespace {

using namespace helpers;

// The reduction an aten op describes through its schema's self/dim/keepdim/dtype arguments.
struct Reduction {
  Value* x;
  std::vector<int64_t> dims;  // empty: every dim
  bool keepdim;
};

// `promote` turns the input into the dtype PyTorch computes in when no dtype is given.
Reduction parse(Graph& g, const TorchNode& n, const Args& a, Value* (*promote)(Graph&, Value*)) {
  Value* x = a.tensor(0);
  if (auto d = named_dtype(n, a))
    x = cast(g, x, *d);
  else
    x = promote(g, x);
  return {x, reduction_dims(n, named_arg(n, a, "dim"), x), named_bool(n, a, "keepdim", false)};
}

Value* sum(Graph& g, const TorchNode& n, const Args& a) {
  Reduction r = parse(g, n, a, widen_integral);
  return reduce_any(g, "ReduceSum", r.x, r.dims, r.keepdim);
}

// nansum: NaNs count as zero (integers have none).
Value* nansum(Graph& g, const TorchNode& n, const Args& a) {
  Reduction r = parse(g, n, a, widen_integral);
  if (is_floating(dtype_of(r.x))) r.x = g.op("Where", {g.op("IsNaN", {r.x}), scalar_like(g, 0.0, r.x), r.x});
  return reduce_any(g, "ReduceSum", r.x, r.dims, r.keepdim);
}

Value* mean(Graph& g, const TorchNode& n, const Args& a) {
  Reduction r = parse(g, n, a, to_float);
  return reduce_any(g, "ReduceMean", r.x, r.dims, r.keepdim);
}

Value* prod(Graph& g, const TorchNode& n, const Args& a) {
  Reduction r = parse(g, n, a, widen_integral);
  return reduce_any(g, "ReduceProd", r.x, r.dims, r.keepdim);
}

Value* logsumexp(Graph& g, const TorchNode& n, const Args& a) {
  Reduction r = parse(g, n, a, to_float);
  return reduce_any(g, "ReduceLogSumExp", r.x, r.dims, r.keepdim);
}

// count_nonzero(self, dim: int? | int[]) -> int64
Value* count_nonzero(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  Value* nonzero = cast(g, cast(g, x, DType::Bool), DType::Int64);
  return helpers::reduce(g, "ReduceSum", nonzero, reduction_dims(n, named_arg(n, a, "dim"), x), false);
}

}  // namespace

void add_sums(Registrar& r) {
  r.add("aten::sum", 9, sum);
  r.add("aten::nansum", 9, nansum);
  r.add("aten::mean", 9, mean);
  r.add("aten::prod", 9, prod);
  r.add("aten::logsumexp", 9, logsumexp);
  r.add("aten::count_nonzero", 9, count_nonzero);
}

}  // namespace onnxport::reduce
