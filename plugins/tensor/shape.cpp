// Shape manipulation: view/reshape/flatten, (un)squeeze, transposes, expand/repeat, numel.
#include <limits>

#include "onnxport/helpers.h"
#include "tensor_ops.h"

namespace onnxport::tensor {
namespace {

using namespace helpers;

constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();

// aten::view(x, size) / aten::reshape(x, shape): the size list may hold run-time values
// (x.view(x.size(0), -1)), which int_list turns into a Concat of Unsqueezes.
Value* view(Graph& g, const TorchNode& n, const Args& a) {
  if (n.input_names.size() > 1 && n.input_names[1] == "dtype")
    throw ArgumentError(n.kind + "(dtype) reinterprets the bytes of a tensor, which ONNX cannot express");
  return reshape(g, a.tensor(0), int_list(g, a.at(1)));
}

Value* view_as(Graph& g, const TorchNode&, const Args& a) { return reshape(g, a.tensor(0), shape_of(g, a.tensor(1))); }

// The target shape of flattening dims [start, end] of x: dims before stay (Reshape's 0 copies
// them), the flattened run becomes -1, dims after are read from the static shape or Shape(x).
Value* flatten_shape(Graph& g, Value* x, int64_t rank, int64_t start, int64_t end) {
  std::vector<int64_t> head(static_cast<size_t>(start), 0);
  head.push_back(-1);
  std::vector<int64_t> tail;
  bool tail_static = true;
  for (int64_t d = end + 1; d < rank; ++d) {
    auto s = static_dim(x, d);
    tail_static = tail_static && s.has_value();
    tail.push_back(s.value_or(-1));
  }
  if (tail_static) {
    head.insert(head.end(), tail.begin(), tail.end());
    return g.constant_ints(head);
  }
  Value* rest = slice(g, shape_of(g, x), {0}, {end + 1}, {kEnd});
  return concat(g, {g.constant_ints(head), rest}, 0);
}

// aten::unflatten(x, dim, sizes): dim becomes the given sizes (one may be -1).
Value* unflatten(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t rank = rank_of(x, n.kind);
  const int64_t dim = normalize_dim(a.i(1), rank);
  std::vector<Value*> parts{g.constant_ints(std::vector<int64_t>(static_cast<size_t>(dim), 0)), int_list(g, a.at(2))};
  if (dim + 1 < rank) parts.push_back(slice(g, shape_of(g, x), {0}, {dim + 1}, {kEnd}));
  return reshape(g, x, concat(g, parts, 0));
}

// ONNX Flatten always makes 2-d, so it only fits flatten(1, -1) and flatten(0, -2);
// everything else is a Reshape. Flatten takes every type from opset 9 (floats only before).
Value* flatten(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t start = a.is_none(1) ? 0 : a.i(1);
  const int64_t end = a.is_none(2) ? -1 : a.i(2);
  const auto rank = x->rank();
  const bool flatten_op = g.opset() >= 9 || is_floating(dtype_of(x));
  if (!rank) {
    if (start == 1 && end == -1 && flatten_op) return g.op("Flatten", {x}, {{"axis_i", 1}});
    if (start == 0 && end == -1) return reshape(g, x, std::vector<int64_t>{-1});
    rank_of(x, n.kind + "(start_dim=" + std::to_string(start) + ", end_dim=" + std::to_string(end) + ")");
  }
  if (*rank == 0) return reshape(g, x, std::vector<int64_t>{1});
  const int64_t s = normalize_dim(start, *rank), e = normalize_dim(end, *rank);
  if (s > e)
    throw ArgumentError(n.kind + ": start_dim " + std::to_string(start) + " comes after end_dim " +
                        std::to_string(end));
  if (s == e) return x;
  if (s == 1 && e == *rank - 1 && flatten_op) return g.op("Flatten", {x}, {{"axis_i", 1}});
  if (s == 0 && e == *rank - 2 && flatten_op) return g.op("Flatten", {x}, {{"axis_i", *rank - 1}});
  if (s == 0 && e == *rank - 1) return reshape(g, x, std::vector<int64_t>{-1});
  return reshape(g, x, flatten_shape(g, x, *rank, s, e));
}

// x.t(): 0-d and 1-d tensors are returned as they are.
Value* t(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  const auto rank = x->rank();
  if (rank && *rank < 2) return x;
  return rank ? transpose(g, x, {1, 0}) : g.op("Transpose", {x});
}

Value* transpose_dims(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t rank = rank_of(x, n.kind);
  const int64_t d0 = normalize_dim(a.i(1), rank), d1 = normalize_dim(a.i(2), rank);
  if (d0 == d1 || rank < 2) return x;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i) perm.push_back(i);
  std::swap(perm[static_cast<size_t>(d0)], perm[static_cast<size_t>(d1)]);
  return transpose(g, x, perm);
}

Value* permute(Graph& g, const TorchNode&, const Args& a) {
  const std::vector<int64_t> dims = a.is(1);
  return transpose(g, a.tensor(0), normalize_dims(dims, static_cast<int64_t>(dims.size())));
}

// A dim known only at run time (a number the model takes): ONNX takes axes as an input from
// opset 13, as a 1-d int64 tensor, negatives counted as torch counts them.
Value* run_time_axes(Graph& g, const Args& a, size_t i) {
  if (g.opset() < 13)
    a.fail(i, "a constant int (a dim known only at run time needs opset 13 or later, target is opset " +
                  std::to_string(g.opset()) + ")");
  return reshape(g, cast(g, a.tensor(i), DType::Int64), std::vector<int64_t>{1});
}

Value* unsqueeze_dim(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  const auto known = a.at(1)->maybe_int();
  if (!known) return g.op("Unsqueeze", {x, run_time_axes(g, a, 1)});
  int64_t dim = *known;
  if (auto rank = x->rank()) dim = normalize_dim(dim, *rank + 1);
  return unsqueeze(g, x, {dim});
}

// If(size == 1, x squeezed at that dim, x): torch keeps a dim whose size is not 1. The dim is a
// constant, or else `axes` (a 1-d run-time tensor, opset 13).
Value* squeeze_if_one(Graph& g, Value* x, Value* size_1d, std::optional<int64_t> dim, Value* axes) {
  Value* is_one = squeeze(g, g.op("Equal", {size_1d, g.constant_ints({1})}), {0});
  const Subgraph squeezed{{}, [x, dim, axes](Graph& branch, const std::vector<Value*>&) {
                            return std::vector<Value*>{dim ? squeeze(branch, x, {*dim}) : branch.op("Squeeze", {x, axes})};
                          }};
  const Subgraph kept{{}, [x](Graph& branch, const std::vector<Value*>&) {
                        return std::vector<Value*>{branch.op("Identity", {x})};
                      }};
  return g.op("If", {is_one}, {{"then_branch_g", squeezed}, {"else_branch_g", kept}});
}

// squeeze(x, dim) is a no-op in PyTorch when that dim is not 1, while ONNX Squeeze fails: a
// static size decides now; a run-time size decides at run time (an If, from opset 11 as in
// torch.onnx; before, the size is taken to be 1), and so does a run-time dim (opset 13).
Value* squeeze_dims(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  if (a.size() < 2) return squeeze(g, x);
  const auto known = a.at(1)->maybe_int();
  if (!known) {
    Value* axes = run_time_axes(g, a, 1);
    return squeeze_if_one(g, x, g.op("Gather", {shape_of(g, x), axes}, {{"axis_i", 0}}), std::nullopt, axes);
  }
  int64_t dim = *known;
  if (auto rank = x->rank()) {
    if (*rank == 0) return x;
    dim = normalize_dim(dim, *rank);
  }
  auto size = static_dim(x, dim);
  if (size && *size != 1) return x;
  if (size || g.opset() < 11) return squeeze(g, x, {dim});
  return squeeze_if_one(g, x, helpers::size(g, x, dim, /*as_1d=*/true), dim, nullptr);
}

// expand's -1 keeps a dim; Expand broadcasts, so 1 does the same. For run-time sizes,
// Abs maps -1 to 1 and leaves real sizes alone.
Value* expand(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  if (auto sizes = a.at(1)->maybe_ints()) {
    for (int64_t& s : *sizes) s = s == -1 ? 1 : s;
    return g.op("Expand", {x, g.constant_ints(*sizes)});
  }
  return g.op("Expand", {x, g.op("Abs", {int_list(g, a.at(1))})});
}

Value* expand_as(Graph& g, const TorchNode&, const Args& a) {
  return g.op("Expand", {a.tensor(0), shape_of(g, a.tensor(1))});
}

// repeat(x, repeats): more repeats than dims adds leading dims of size 1 first.
Value* repeat(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t rank = rank_of(x, n.kind);
  Value* repeats = int_list(g, a.at(1));
  const auto count = a.at(1)->is_list() ? static_cast<int64_t>(a.list(1).size()) : static_cast<int64_t>(a.is(1).size());
  if (count < rank)
    throw ArgumentError(n.kind + ": " + std::to_string(count) + " repeats for a tensor of rank " +
                        std::to_string(rank));
  if (count > rank) {
    std::vector<int64_t> lead;
    for (int64_t i = 0; i < count - rank; ++i) lead.push_back(i);
    x = unsqueeze(g, x, lead);
  }
  return g.op("Tile", {x, repeats});
}

Value* numel(Graph& g, const TorchNode&, const Args& a) { return g.op("Size", {a.tensor(0)}); }

}  // namespace

void add_shape(Registrar& r) {
  r.add("aten::view", 9, view);
  r.add("aten::reshape", 9, view);
  r.add("aten::view_as", 9, view_as);
  r.add("aten::reshape_as", 9, view_as);
  r.add("aten::flatten", 8, flatten);
  r.add("aten::unflatten", 9, unflatten);
  add_with_inplace(r, "aten::t", 9, t);
  add_with_inplace(r, "aten::transpose", 9, transpose_dims);
  r.add("aten::swapaxes", 9, transpose_dims);
  r.add("aten::swapdims", 9, transpose_dims);
  r.add("aten::permute", 9, permute);
  add_with_inplace(r, "aten::unsqueeze", 9, unsqueeze_dim);
  add_with_inplace(r, "aten::squeeze", 9, squeeze_dims);
  r.add("aten::expand", 9, expand);
  r.add("aten::expand_as", 9, expand_as);
  r.add("aten::repeat", 8, repeat);  // Tile-6
  r.add("aten::numel", 9, numel);
}

}  // namespace onnxport::tensor
