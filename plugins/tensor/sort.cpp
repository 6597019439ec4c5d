// Sorting and searching: topk, sort, argsort (ONNX TopK), unique (ONNX Unique), bucketize.
#include <cstdint>

#include "tensor_ops.h"

namespace onnxport::tensor {
namespace {

using namespace helpers;

// TopK across opsets: k is an attribute at 9 and an input from 10; `largest`/`sorted` exist from 11.
std::vector<Value*> top_k(Graph& g, const TorchNode& n, Value* x, Value* k, int64_t dim, bool largest, bool sorted) {
  const std::string at = " at opset " + std::to_string(g.opset());
  if (g.opset() >= 11)
    return g.op("TopK", {x, k}, {{"axis_i", dim}, {"largest_i", largest ? 1 : 0}, {"sorted_i", sorted ? 1 : 0}}, 2);
  if (!largest)
    throw ArgumentError(n.kind + ": the smallest elements (ascending order)" + at + " need opset 11 or later");
  // TopK takes only floating types before opset 11: integers go through double (exact to 2^53).
  const DType dtype = x->dtype();
  const bool via_double = !is_floating(dtype) && dtype != DType::Undefined;
  if (via_double) x = cast(g, x, DType::Double);
  std::vector<Value*> out;
  if (g.opset() >= 10) {
    out = g.op("TopK", {x, k}, {{"axis_i", dim}}, 2);
  } else {
    auto kc = k->maybe_ints();
    if (!kc || kc->size() != 1)
      throw ArgumentError(n.kind + ": k computed at run time" + at + " needs opset 10 or later");
    out = g.op("TopK", {x}, {{"axis_i", dim}, {"k_i", (*kc)[0]}}, 2);
  }
  if (via_double) out[0] = cast(g, out[0], dtype);
  return out;
}

Value* k_of(Graph& g, Value* k) {
  if (auto c = k->maybe_int()) return g.constant_ints({*c});
  return int_list(g, k);
}

// topk(x, k, dim=-1, largest=True, sorted=True)
std::vector<Value*> topk(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t dim = dim_of(x, a.is_none(2) ? -1 : a.i(2), n.kind + " input");
  const bool largest = a.size() <= 3 || a.is_none(3) || a.b(3);
  const bool sorted = a.size() <= 4 || a.is_none(4) || a.b(4);
  return top_k(g, n, x, k_of(g, a.at(1)), dim, largest, sorted);
}

// sort(x, dim=-1, descending=False) and sort.stable(x, stable, dim, descending). TopK keeps equal
// elements in index order, so it is stable either way.
struct SortArgs {
  int64_t dim;
  bool descending;
};

SortArgs sort_args(const TorchNode& n, const Args& a, Value* x) {
  const bool has_stable = n.input_names.size() > 1 && n.input_names[1] == "stable";
  const size_t first = has_stable ? 2 : 1;
  const int64_t dim = a.size() <= first || a.is_none(first) ? -1 : a.i(first);
  const bool descending = a.size() > first + 1 && !a.is_none(first + 1) && a.b(first + 1);
  return {dim_of(x, dim, n.kind + " input"), descending};
}

std::vector<Value*> sort_op(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  if (x->rank() == std::optional<int64_t>(0)) return {x, g.constant(Tensor::scalar_int64(0))};
  SortArgs s = sort_args(n, a, x);
  return top_k(g, n, x, size(g, x, s.dim, true), s.dim, s.descending, true);
}

Value* argsort(Graph& g, const TorchNode& n, const Args& a) { return sort_op(g, n, a)[1]; }

// Unique's outputs are Y, indices, inverse_indices, counts; without an axis it works on the
// flattened input, so the inverse is reshaped like the input (as torch returns it).
std::vector<Value*> unique_flat(Graph& g, Value* x, bool sorted) {
  auto outs = g.op("Unique", {x}, {{"sorted_i", sorted ? 1 : 0}}, 4);
  Value* inverse = reshape(g, outs[2], shape_of(g, x));
  return {outs[0], inverse, outs[3]};
}

// Before opset 11 (no ONNX Unique): sort ascending (TopK of the negated values, in double for
// non-float types), keep every element greater than its predecessor (NonZero + Gather: Compress
// has no ONNX type inference), and find each
// element's index and each value's count by comparing all elements with all values. The values
// come out sorted also for sorted=False, for which PyTorch promises no order.
std::vector<Value*> unique_flat_before_11(Graph& g, const TorchNode& n, Value* x) {
  const DType dtype = dtype_of(x);
  Value* flat = reshape(g, is_floating(dtype) ? x : cast(g, x, DType::Double), std::vector<int64_t>{-1});
  Value* k = shape_of(g, flat);
  if (auto shape = static_shape(x)) {
    int64_t numel = 1;
    for (int64_t d : *shape) numel *= d;
    k = g.constant_ints({numel});
  }
  Value* ascending = g.op("Neg", {top_k(g, n, g.op("Neg", {flat}), k, 0, true, true)[0]});
  Value* rises = g.op("Greater", {slice(g, ascending, {0}, {1}, {INT64_MAX}), slice(g, ascending, {0}, {0}, {-1})});
  Value* first = g.constant(Tensor(DType::Bool, {1}, {uint8_t{1}}));
  Value* kept = reshape(g, g.op("NonZero", {concat(g, {first, rises}, 0)}), std::vector<int64_t>{-1});
  Value* values = gather(g, ascending, kept, 0);
  Value* column = unsqueeze(g, flat, {1});
  Value* row = unsqueeze(g, values, {0});
  Value* below = cast(g, g.op("Less", {row, column}), DType::Int64);  // [element, value]
  Value* inverse = reshape(g, reduce(g, "ReduceSum", below, {1}, false), shape_of(g, x));
  Value* equal = g.op("Not", {g.op("Or", {g.op("Less", {row, column}), g.op("Greater", {row, column})})});
  Value* counts = reduce(g, "ReduceSum", cast(g, equal, DType::Int64), {0}, false);
  return {cast(g, values, dtype), inverse, counts};
}

// _unique(x, sorted, return_inverse) -> (values, inverse)
std::vector<Value*> unique1(Graph& g, const TorchNode&, const Args& a) {
  auto o = unique_flat(g, a.tensor(0), a.is_none(1) || a.b(1));
  return {o[0], o[1]};
}

std::vector<Value*> unique1_9(Graph& g, const TorchNode& n, const Args& a) {
  auto o = unique_flat_before_11(g, n, a.tensor(0));
  return {o[0], o[1]};
}

// _unique2(x, sorted, return_inverse, return_counts) -> (values, inverse, counts)
std::vector<Value*> unique2(Graph& g, const TorchNode&, const Args& a) {
  return unique_flat(g, a.tensor(0), a.is_none(1) || a.b(1));
}

std::vector<Value*> unique2_9(Graph& g, const TorchNode& n, const Args& a) {
  return unique_flat_before_11(g, n, a.tensor(0));
}

// unique_dim(x, dim, sorted, return_inverse, return_counts): unique slices along dim.
std::vector<Value*> unique_dim(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t dim = dim_of(x, a.i(1), n.kind + " input");
  auto outs = g.op("Unique", {x}, {{"axis_i", dim}, {"sorted_i", 1}}, 4);
  return {outs[0], outs[2], outs[3]};
}

// bucketize(x, boundaries, out_int32, right): the number of boundaries below x (right=False)
// or not above x (right=True).
Value* bucketize(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  Value* boundaries = a.tensor(1);
  const bool out_int32 = a.size() > 2 && !a.is_none(2) && a.b(2);
  const bool right = a.size() > 3 && !a.is_none(3) && a.b(3);
  auto operands = promote(g, {x, boundaries});
  const int64_t last = rank_of(x, n.kind + " input");
  Value* xe = unsqueeze(g, operands[0], {last});
  Value* hits = right ? g.op("Not", {g.op("Greater", {operands[1], xe})}) : g.op("Less", {operands[1], xe});
  Value* count = reduce(g, "ReduceSum", cast(g, hits, DType::Int64), {last}, false);
  return out_int32 ? cast(g, count, DType::Int32) : count;
}

}  // namespace

void add_sort(Registrar& r) {
  r.add("aten::topk", 9, topk);
  r.add("aten::sort", 9, sort_op);
  r.add("aten::argsort", 9, argsort);
  r.add("aten::_unique", 9, unique1_9);
  r.add("aten::_unique", 11, unique1);
  r.add("aten::_unique2", 9, unique2_9);
  r.add("aten::_unique2", 11, unique2);
  r.add("aten::unique_dim", 11, unique_dim);
  r.add("aten::bucketize", 9, bucketize);
}

}  // namespace onnxport::tensor
