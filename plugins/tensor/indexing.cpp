// Basic indexing: x[a:b:c] (aten::slice), x[i] (aten::select), narrow, index_select.
#include <algorithm>
#include <limits>

#include "onnxport/helpers.h"
#include "tensor_ops.h"

namespace onnxport::tensor {
namespace {

using namespace helpers;

constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();

int64_t axis_of(const Value* x, int64_t dim) {
  if (auto rank = x->rank()) return normalize_dim(dim, *rank);
  return dim;
}

// A 1-d int64 bound: a constant, or a run-time 0-d int (e.g. from aten::size).
Value* bound(Graph& g, Value* v, int64_t if_none) {
  if (v->is_none()) return g.constant_ints({if_none});
  return int_list(g, v);
}

// aten::slice.t(list, start, end, step) on a TorchScript list, with constant bounds.
Value* slice_list(Graph& g, const Args& a) {
  const std::vector<Value*> items = a.list(0);
  const auto count = static_cast<int64_t>(items.size());
  auto clamp_index = [count](int64_t i) { return std::clamp(i < 0 ? i + count : i, int64_t{0}, count); };
  const int64_t start = a.is_none(1) ? 0 : clamp_index(a.i(1));
  const int64_t end = a.is_none(2) ? count : clamp_index(a.i(2));
  const int64_t step = a.is_none(3) ? 1 : a.i(3);
  if (step <= 0) a.fail(3, "a positive step");
  std::vector<Value*> out;
  for (int64_t i = start; i < end; i += step) out.push_back(items[static_cast<size_t>(i)]);
  return g.list(out);
}

// aten::slice(x, dim, start, end, step). Traced code slices with end = INT64_MAX for x[a:];
// the full slice x[:] is returned unchanged.
Value* slice_op(Graph& g, const TorchNode& n, const Args& a) {
  if (a.at(0)->is_list()) return slice_list(g, a);
  Value* x = a.tensor(0);
  const int64_t dim = axis_of(x, a.is_none(1) ? 0 : a.i(1));
  Value* start_v = a.size() > 2 ? a.at(2) : g.none();
  Value* end_v = a.size() > 3 ? a.at(3) : g.none();
  Value* step_v = a.size() > 4 ? a.at(4) : g.none();
  const std::optional<int64_t> constant_step = step_v->is_none() ? std::optional<int64_t>(1) : step_v->maybe_int();
  if (!constant_step) {
    // A step computed at run time (x[:, ::n] with n from a size): Slice's steps input. PyTorch
    // refuses a step below 1 when it runs; the file cannot check it.
    if (g.opset() < 10)
      throw ArgumentError(n.kind + ": a slice step computed at run time needs opset 10 or later (Slice takes steps "
                          "as an input from opset 10); export with --opset 10 or later");
    return slice(g, x, bound(g, start_v, 0), bound(g, end_v, kEnd), g.constant_ints({dim}), int_list(g, step_v));
  }
  const int64_t step = *constant_step;
  if (step <= 0) throw ArgumentError(n.kind + ": slice step must be positive, got " + std::to_string(step));
  const std::optional<int64_t> start = start_v->is_none() ? std::optional<int64_t>(0) : start_v->maybe_int();
  const std::optional<int64_t> end = end_v->is_none() ? std::optional<int64_t>(kEnd) : end_v->maybe_int();
  if (start && end) {
    const auto size = static_dim(x, dim);
    if (*start == 0 && step == 1 && (*end == kEnd || (size && *end >= *size))) return x;
    return slice(g, x, {dim}, {*start}, {*end}, {step});
  }
  return slice(g, x, bound(g, start_v, 0), bound(g, end_v, kEnd), g.constant_ints({dim}),
               step == 1 ? nullptr : g.constant_ints({step}));
}

// aten::select(x, dim, index): Gather with a 0-d index drops the dim.
Value* select(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t dim = axis_of(x, a.i(1));
  if (auto index = a.at(2)->maybe_int()) {
    int64_t i = *index;
    if (i < 0 && g.opset() < 11) {
      auto size = static_dim(x, dim);
      if (!size) throw ArgumentError(n.kind + ": a negative index into a dim of unknown size needs opset 11 or later");
      i += *size;
    }
    return gather(g, x, g.constant_int(i), dim);
  }
  return gather(g, x, cast(g, a.tensor(2), DType::Int64), dim);
}

// aten::narrow(x, dim, start, length) = x[start : start + length] along dim.
Value* narrow(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t dim = axis_of(x, a.i(1));
  auto start = a.at(2)->maybe_int();
  auto length = a.at(3)->maybe_int();
  if (start && length) {
    // A negative start counts from the end; a window reaching the end has end 0, i.e. "to the end".
    const int64_t end = *start < 0 && *start + *length == 0 ? kEnd : *start + *length;
    return slice(g, x, {dim}, {*start}, {end});
  }
  Value* s = int_list(g, a.at(2));
  Value* e = g.op("Add", {s, int_list(g, a.at(3))});
  return slice(g, x, s, e, g.constant_ints({dim}), nullptr);
}

// A 0-d index selects one slice and keeps the axis (size 1), unlike Gather with a 0-d index: the
// index is made 1-d unless it is known to be.
Value* index_select(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  Value* index = cast(g, a.tensor(2), DType::Int64);
  if (index->rank() != std::optional<int64_t>(1)) index = reshape(g, index, std::vector<int64_t>{-1});
  return gather(g, x, index, axis_of(x, a.i(1)));
}

}  // namespace

void add_indexing(Registrar& r) {
  r.add("aten::slice", 9, slice_op);
  r.add("aten::select", 9, select);
  r.add("aten::narrow", 9, narrow);
  r.add("aten::index_select", 9, index_select);
}

}  // namespace onnxport::tensor
