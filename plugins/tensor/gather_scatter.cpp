// Element-wise gathers and scatters along a dim: gather, scatter (src/value/reduce), scatter_add,
// index_add/index_copy/index_fill, take/take_along_dim, masked_select/masked_scatter.
#include <cstring>

#include "tensor_ops.h"

namespace onnxport::tensor {
namespace {

using namespace helpers;

// gather before opset 11 (no GatherElements): a one-hot selection summed over the gathered dim.
// Needs the index to match x outside `dim` and a static size along it.
Value* gather_one_hot(Graph& g, const TorchNode& n, Value* x, int64_t dim, Value* index) {
  const int64_t rank = rank_of(x, n.kind + " input");
  auto xs = static_shape(x), is = static_shape(index);
  bool same_outside = xs && is && xs->size() == is->size();
  for (int64_t d = 0; same_outside && d < rank; ++d)
    same_outside = d == dim || (*xs)[static_cast<size_t>(d)] == (*is)[static_cast<size_t>(d)];
  if (!same_outside)
    throw ArgumentError(n.kind + " at opset " + std::to_string(g.opset()) + " needs static shapes with the index " +
                        "matching the input outside dim " + std::to_string(dim) + "; use opset 11 or later");
  const int64_t length = (*xs)[static_cast<size_t>(dim)];
  std::vector<int64_t> along(static_cast<size_t>(rank + 1), 1);
  along[static_cast<size_t>(dim + 1)] = length;
  Value* positions = g.constant(Tensor(DType::Int64, along, [&] {
    std::vector<uint8_t> bytes(static_cast<size_t>(length) * 8);
    for (int64_t i = 0; i < length; ++i) std::memcpy(bytes.data() + i * 8, &i, 8);
    return bytes;
  }()));
  Value* hit = g.op("Equal", {unsqueeze(g, index, {dim + 1}), positions});
  Value* picked = g.op("Where", {hit, unsqueeze(g, x, {dim}), scalar_like(g, 0, x)});
  return reduce(g, "ReduceSum", picked, {dim + 1}, false);
}

Value* gather_op(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t dim = dim_of(x, a.i(1), n.kind + " input");
  Value* index = as_index(g, a.tensor(2));
  if (g.opset() >= 11) return g.op("GatherElements", {x, index}, {{"axis_i", dim}});
  return gather_one_hot(g, n, x, dim, wrap_negative(g, index, size(g, x, dim)));
}

// Torch lets src be larger than the index; ONNX wants updates shaped like the indices.
Value* crop_to(Graph& g, Value* src, Value* index) {
  auto ss = static_shape(src), is = static_shape(index);
  if (ss && is && *ss == *is) return src;
  const int64_t rank = rank_of(index, "scatter index");
  if (is) return slice(g, src, iota(rank), std::vector<int64_t>(static_cast<size_t>(rank), 0), *is);
  return slice(g, src, g.constant_ints(std::vector<int64_t>(static_cast<size_t>(rank), 0)), shape_of(g, index),
               g.constant_ints(iota(rank)), nullptr);
}

std::string reduction_of(const TorchNode& n, const Args& a, size_t i) {
  if (a.size() <= i || a.is_none(i)) return "";
  const std::string r = a.s(i);
  if (r == "add") return "add";
  if (r == "multiply") return "mul";
  throw ArgumentError(n.kind + ": reduce='" + r + "' has no ONNX ScatterElements reduction up to opset 17");
}

// scatter(x, dim, index, src | value [, reduce])
Value* scatter_op(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t dim = dim_of(x, a.i(1), n.kind + " input");
  Value* index = as_index(g, a.tensor(2));
  Value* src = a.tensor(3);
  // scatter.value takes a number; a 0-d src (only valid with a 0-d index) broadcasts the same way.
  const bool is_value = (n.input_names.size() > 3 && n.input_names[3] == "value") || src->is_scalar() ||
                        src->rank() == std::optional<int64_t>(0);
  Value* updates = is_value ? g.op("Expand", {cast(g, src, x->dtype()), shape_of(g, index)})
                            : crop_to(g, cast(g, src, x->dtype()), index);
  return scatter_elements(g, x, index, updates, dim, reduction_of(n, a, 4), n.kind);
}

// x + (src scattered into zeros): opset 16 has an exact reduction; before, as torch.onnx does,
// repeated indices add only once.
Value* scatter_add_into(Graph& g, Value* x, Value* index, Value* updates, int64_t dim, const std::string& what) {
  if (g.opset() >= 16) return scatter_elements(g, x, index, updates, dim, "add", what);
  Value* zeros = g.op("Mul", {x, scalar_like(g, 0, x)});
  return g.op("Add", {x, scatter_elements(g, zeros, index, updates, dim, "", what)});
}

// scatter_reduce(x, dim, index, src, reduce, include_self=True), opset 16 (ScatterElements with
// a reduction): sum, prod and mean; amax/amin as ScatterElements' max/min, which ONNX documents
// from opset 18 and torch.onnx 2.6 writes from 16 (ONNX's checker and ONNX Runtime take it there;
// the converter warns: note_later_opset_forms). Without
// include_self the scattered-to positions are first reset: to the reduction's identity for sum,
// prod and mean, and to one of their own updates for amax/amin (the max of the updates with one of
// them is their max). A 0-d x (with 0-d index and src) is scattered as a 1-d tensor of one element.
Value* scatter_reduce(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const bool scalar = x->rank() == std::optional<int64_t>(0);
  Value* index = as_index(g, a.tensor(2));
  Value* src = cast(g, a.tensor(3), x->dtype());
  if (scalar) {
    x = unsqueeze(g, x, {0});
    index = index->rank() == std::optional<int64_t>(0) ? unsqueeze(g, index, {0}) : index;
    src = src->rank() == std::optional<int64_t>(0) ? unsqueeze(g, src, {0}) : src;
  }
  const int64_t dim = dim_of(x, scalar ? 0 : a.i(1), n.kind + " input");
  const std::string reduce = a.s(4);
  const bool include_self = a.size() <= 5 || a.is_none(5) || a.b(5);
  const bool extreme = reduce == "amax" || reduce == "amin";
  if (reduce != "sum" && reduce != "prod" && reduce != "mean" && !extreme)
    throw ArgumentError(n.kind + ": reduce='" + reduce + "' is not one of sum, prod, mean, amax, amin");
  Value* updates = crop_to(g, src, index);
  Value* base = x;
  if (!include_self && extreme) {
    base = scatter_elements(g, x, index, updates, dim, "", n.kind);
  } else if (!include_self) {
    Value* identity = g.op("Expand", {scalar_like(g, reduce == "prod" ? 1.0 : 0.0, x), shape_of(g, index)});
    base = scatter_elements(g, x, index, identity, dim, "", n.kind);
  }
  const std::string onnx_reduction = extreme ? reduce.substr(1) : reduce == "prod" ? "mul" : "add";
  Value* y = scatter_elements(g, base, index, updates, dim, onnx_reduction, n.kind);
  if (reduce == "mean") {
    // mean over what reached each position: the scattered values and, with include_self, x itself.
    Value* ones = g.op("Expand", {scalar_like(g, 1.0, x), shape_of(g, index)});
    Value* start = g.op("Add", {g.op("Mul", {x, scalar_like(g, 0.0, x)}), scalar_like(g, include_self ? 1.0 : 0.0, x)});
    Value* count = scatter_elements(g, start, index, ones, dim, "add", n.kind);
    count = g.op("Max", {count, scalar_like(g, 1.0, x)});  // untouched positions (count 0) keep x
    y = g.op("Div", {y, count});
  }
  return scalar ? squeeze(g, y, {0}) : y;
}

Value* scatter_add(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t dim = dim_of(x, a.i(1), n.kind + " input");
  Value* index = as_index(g, a.tensor(2));
  return scatter_add_into(g, x, index, crop_to(g, cast(g, a.tensor(3), x->dtype()), index), dim, n.kind);
}

// index_* (x, dim, index[n], ...): the 1-d index expanded over the other dims of `shape`.
struct DimIndex {
  Value* x;
  int64_t dim, rank;
  Value* index;  // int64, negatives wrapped
};

DimIndex dim_index(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t rank = rank_of(x, n.kind + " input");
  const int64_t dim = rank == 0 ? 0 : normalize_dim(a.i(1), rank);
  Value* index = as_index(g, a.tensor(2));
  if (index->rank() == std::optional<int64_t>(0)) index = unsqueeze(g, index, {0});
  if (rank > 0) index = wrap_negative(g, index, size(g, x, dim));
  return {x, dim, rank, index};
}

// x's shape with dim replaced by the index's length.
Value* shape_with_index_dim(Graph& g, const DimIndex& d) {
  return concat(g, {shape_range(g, d.x, 0, d.dim), shape_of(g, d.index), shape_range(g, d.x, d.dim + 1, d.rank)}, 0);
}

Value* index_add(Graph& g, const TorchNode& n, const Args& a) {
  DimIndex d = dim_index(g, n, a);
  Value* src = cast(g, a.tensor(3), d.x->dtype());
  if (a.size() > 4 && !a.is_none(4)) {
    if (auto alpha = constant_number(a.at(4)); !alpha || *alpha != 1.0)
      src = g.op("Mul", {src, cast(g, a.at(4), d.x->dtype())});
  }
  if (d.rank == 0) return g.op("Add", {d.x, reshape(g, src, std::vector<int64_t>{})});
  // torch adds source.select(dim, i) into x.select(dim, index[i]) in place, broadcasting the
  // former: a source of lower rank gains trailing dims, and its sizes of 1 expand to x's.
  const int64_t src_rank = rank_of(src, n.kind + " source");
  if (src_rank < d.rank) {
    std::vector<int64_t> trailing;
    for (int64_t k = src_rank; k < d.rank; ++k) trailing.push_back(k);
    src = unsqueeze(g, src, trailing);
  }
  src = g.op("Expand", {src, shape_with_index_dim(g, d)});
  return scatter_add_into(g, d.x, index_along(g, d.index, d.dim, d.rank, shape_of(g, src)), src, d.dim, n.kind);
}

Value* index_copy(Graph& g, const TorchNode& n, const Args& a) {
  DimIndex d = dim_index(g, n, a);
  Value* src = cast(g, a.tensor(3), d.x->dtype());
  if (d.rank == 0) return reshape(g, src, std::vector<int64_t>{});
  return scatter_elements(g, d.x, index_along(g, d.index, d.dim, d.rank, shape_of(g, src)), src, d.dim, "", n.kind);
}

Value* index_fill(Graph& g, const TorchNode& n, const Args& a) {
  DimIndex d = dim_index(g, n, a);
  Value* value = cast(g, a.at(3), d.x->dtype());
  if (value->rank().value_or(0) > 0) value = reshape(g, value, std::vector<int64_t>{});
  if (d.rank == 0) return value;
  Value* shape = shape_with_index_dim(g, d);
  return scatter_elements(g, d.x, index_along(g, d.index, d.dim, d.rank, shape), g.op("Expand", {value, shape}), d.dim,
                          "", n.kind);
}

// take(x, index): x flattened, indexed by any-shaped index.
Value* take(Graph& g, const TorchNode&, const Args& a) {
  Value* flat = reshape(g, a.tensor(0), std::vector<int64_t>{-1});
  Value* index = as_index(g, a.tensor(1));
  if (g.opset() < 11) index = wrap_negative(g, index, size(g, flat, 0));
  return gather(g, flat, index, 0);
}

// Static shapes of x and index broadcast against each other outside dim (torch.take_along_dim).
std::pair<std::vector<int64_t>, std::vector<int64_t>> broadcast_outside(std::vector<int64_t> xs,
                                                                        std::vector<int64_t> is, int64_t dim) {
  for (size_t d = 0; d < xs.size(); ++d) {
    if (static_cast<int64_t>(d) == dim) continue;
    const int64_t common = xs[d] == 1 ? is[d] : xs[d];
    xs[d] = is[d] = common;
  }
  return {xs, is};
}

Value* take_along_dim(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  Value* index = as_index(g, a.tensor(1));
  if (a.size() < 3 || a.is_none(2)) {
    Value* flat = reshape(g, x, std::vector<int64_t>{-1});
    Value* i = reshape(g, index, std::vector<int64_t>{-1});
    if (g.opset() < 11) i = wrap_negative(g, i, size(g, flat, 0));
    return gather(g, flat, i, 0);
  }
  if (g.opset() < 11)
    throw ArgumentError(n.kind + " with a dim needs opset 11 or later (GatherElements); target is opset " +
                        std::to_string(g.opset()));
  const int64_t dim = dim_of(x, a.i(2), n.kind + " input");
  auto xs = static_shape(x), is = static_shape(index);
  if (xs && is && xs->size() == is->size()) {
    auto [x_to, i_to] = broadcast_outside(*xs, *is, dim);
    if (x_to != *xs) x = g.op("Expand", {x, g.constant_ints(x_to)});
    if (i_to != *is) index = g.op("Expand", {index, g.constant_ints(i_to)});
  }
  return g.op("GatherElements", {x, index}, {{"axis_i", dim}});
}

// masked_select(x, mask): x and mask broadcast, flattened and compressed (1-d result).
Value* masked_select(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  Value* mask = cast(g, a.tensor(1), DType::Bool);
  auto xs = static_shape(x), ms = static_shape(mask);
  if (!(xs && ms && *xs == *ms)) {
    Value* shape = broadcast_shape(g, {x, mask});
    x = g.op("Expand", {x, shape});
    mask = g.op("Expand", {mask, shape});
  }
  const std::vector<int64_t> flat{-1};
  return g.op("Compress", {reshape(g, x, flat), reshape(g, mask, flat)}, {{"axis_i", 0}});
}

// masked_scatter(x, mask, source): the first count(mask) elements of source, in order, go where
// mask is true.
Value* masked_scatter(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  Value* mask = g.op("Expand", {cast(g, a.tensor(1), DType::Bool), shape_of(g, x)});
  Value* where = transpose(g, g.op("NonZero", {mask}), {1, 0});
  Value* source = reshape(g, cast(g, a.tensor(2), x->dtype()), std::vector<int64_t>{-1});
  Value* count = slice(g, shape_of(g, where), {0}, {0}, {1});
  Value* used = slice(g, source, g.constant_ints({0}), count, g.constant_ints({0}), nullptr);
  return g.op("ScatterND", {x, where, used});
}

}  // namespace

void add_gather_scatter(Registrar& r) {
  r.add("aten::gather", 9, gather_op);
  add_with_inplace(r, "aten::scatter", 9, scatter_op);
  add_with_inplace(r, "aten::scatter_add", 9, scatter_add);
  add_with_inplace(r, "aten::scatter_reduce", 16, scatter_reduce);
  add_with_inplace(r, "aten::index_add", 9, index_add);
  add_with_inplace(r, "aten::index_copy", 9, index_copy);
  add_with_inplace(r, "aten::index_fill", 9, index_fill);
  r.add("aten::take", 9, take);
  r.add("aten::take_along_dim", 9, take_along_dim);
  r.add("aten::masked_select", 9, masked_select);
  add_with_inplace(r, "aten::masked_scatter", 11, masked_scatter);
}

}  // namespace onnxport::tensor
