// Writes: aten::copy_, aten::set_ and the functional forms of writing into a slice, aten::slice_scatter /
// aten::select_scatter. The host carries in-place writes through views back to the base
// tensor with the latter (y[:, i] = v), so they work with run-time bounds.
#include "onnxport/helpers.h"
#include "tensor_ops.h"

namespace onnxport::tensor {
namespace {

using namespace helpers;

// x with the positions start, start+step, ... along dim (as many as src has there) set to src.
// step: a 0-d int64 (a constant, or a number known only at run time).
Value* scatter_run(Graph& g, const TorchNode& n, Value* x, Value* src, int64_t dim, Value* start, Value* step_v) {
  const int64_t rank = rank_of(x, n.kind);
  Value* count = size(g, src, dim);
  Value* first = wrap_negative(g, cast(g, start, DType::Int64), size(g, x, dim));
  Value* indices = g.op("Range", {first, g.op("Add", {first, g.op("Mul", {count, step_v})}), step_v});
  Value* src_shape = shape_of(g, src);
  return scatter_elements(g, x, index_along(g, indices, dim, rank, src_shape), cast(g, src, dtype_of(x)), dim, "",
                          n.kind);
}

// aten::slice_scatter(self, src, dim=0, start=None, end=None, step=1)
Value* slice_scatter(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t dim = dim_of(x, a.is_none(2) ? 0 : a.i(2), n.kind);
  // A step known only at run time (x[::k] = v with k an input) is used as it comes: PyTorch
  // refuses a step below 1 when it runs, the file cannot check it.
  const std::optional<int64_t> step = a.is_none(5) ? std::optional<int64_t>(1) : a.at(5)->maybe_int();
  if (step && *step <= 0) throw ArgumentError(n.kind + ": step must be positive, got " + std::to_string(*step));
  Value* step_v = step ? g.constant_int(*step) : cast(g, a.tensor(5), DType::Int64);
  Value* start = a.is_none(3) ? g.constant_int(0) : a.tensor(3);
  return scatter_run(g, n, x, a.tensor(1), dim, start, step_v);
}

// aten::select_scatter(self, src, dim, index): src has no `dim`; it fills x[..., index, ...].
Value* select_scatter(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t dim = dim_of(x, a.i(2), n.kind);
  return scatter_run(g, n, x, unsqueeze(g, a.tensor(1), {dim}), dim, a.tensor(3), g.constant_int(1));
}

// aten::copy_(self, src): self's new value is src, broadcast to self's shape in self's dtype.
Value* copy(Graph& g, const TorchNode&, const Args& a) {
  Value* self = a.tensor(0);
  return g.op("Expand", {cast(g, a.tensor(1), dtype_of(self)), shape_of(g, self)});
}

// aten::set_.source_Tensor(self, source): self takes source's data, shape and dtype.
Value* set_source(Graph&, const TorchNode& n, const Args& a) {
  if (a.size() < 2 || !a.at(1)->is_tensor())
    throw ArgumentError(n.kind + ": only x.set_(tensor) is exported (a storage or no source has no ONNX form)");
  return a.tensor(1);
}

}  // namespace

void add_view_scatter(Registrar& r) {
  r.add("aten::copy_", 9, copy);
  r.add("aten::set_", 9, set_source);
  r.add("aten::slice_scatter", 11, slice_scatter);
  r.add("aten::select_scatter", 11, select_scatter);
}

}  // namespace onnxport::tensor
