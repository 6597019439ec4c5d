// Embedding lookups. padding_idx only affects gradients, so inference needs just the Gather.
// embedding_bag reduces ragged bags without a Loop: a (bags x indices) membership mask built
// from the offsets turns sum/mean into a MatMul and max into a masked ReduceMax.
#include <cmath>

#include "nn.h"
#include "onnxport/helpers.h"

namespace onnxport::nn {
namespace {

using namespace helpers;

// embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False)
Value* embedding(Graph& g, const TorchNode&, const Args& a) {
  Value* indices = a.tensor(1);
  const DType d = dtype_of(indices);
  if (d != DType::Undefined && d != DType::Int32 && d != DType::Int64) indices = cast(g, indices, DType::Int64);
  return gather(g, a.tensor(0), indices, 0);
}

Value* as_index(Graph& g, Value* v) {
  const DType d = dtype_of(v);
  return d == DType::Int64 ? v : cast(g, v, DType::Int64);
}

// 0..n-1 as a 1-d int64 tensor: a constant when n is static, Range (opset 11) otherwise.
Value* positions(Graph& g, const TorchNode& n, Value* of, int64_t dim) {
  if (auto s = static_dim(of, dim)) {
    std::vector<int64_t> v(static_cast<size_t>(*s));
    for (int64_t i = 0; i < *s; ++i) v[i] = i;
    return g.constant_ints(v);
  }
  if (g.opset() < 11) throw ArgumentError(n.kind + " with inputs of dynamic size needs opset 11 or later (Range)");
  return g.op("Range", {g.constant_int(0), size(g, of, dim), g.constant_int(1)});
}

// embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
//               include_last_offset[, padding_idx]) -> (output, offset2bag, bag_size, max_indices);
// only the output is exported.
std::vector<Value*> embedding_bag(Graph& g, const TorchNode& n, const Args& a) {
  Value* weight = a.tensor(0);
  Value* indices = as_index(g, a.tensor(1));
  const int64_t mode = a.i(4);
  Value* psw = a.optional_tensor(6);
  const bool include_last = !a.is_none(7) && a.b(7);
  const std::optional<int64_t> padding_idx = a.size() > 8 ? a.opt_i(8) : std::nullopt;
  if (mode < 0 || mode > 2) a.fail(4, "mode 0 (sum), 1 (mean) or 2 (max)");
  if (psw && mode != 0) a.fail(6, "per_sample_weights only with mode='sum'");

  Value* rows = gather(g, weight, indices, 0);  // (L, D) or (B, L, D) for 2-d indices
  Value* out;
  if (indices->rank() == std::optional<int64_t>(2)) {
    Value* keep = padding_idx ? g.op("Not", {g.op("Equal", {indices, g.constant_int(*padding_idx)})}) : nullptr;
    Value* keep_f = keep ? unsqueeze(g, cast(g, keep, dtype_of(weight)), {2}) : nullptr;
    if (psw) rows = g.op("Mul", {rows, unsqueeze(g, psw, {2})});
    if (mode == 2) {
      if (keep) rows = g.op("Where", {unsqueeze(g, keep, {2}), rows, scalar_like(g, -INFINITY, weight)});
      out = reduce(g, "ReduceMax", rows, {1}, false);
    } else {
      if (keep_f) rows = g.op("Mul", {rows, keep_f});
      out = reduce(g, "ReduceSum", rows, {1}, false);
      if (mode == 1) {
        Value* count =
            keep_f ? reduce(g, "ReduceSum", keep_f, {1}, false) : cast(g, size(g, indices, 1), dtype_of(weight));
        out = g.op("Div", {out, g.op("Max", {count, scalar_like(g, 1.0, weight)})});
      }
    }
  } else {
    Value* offsets = as_index(g, a.tensor(2));
    Value* starts = offsets;
    Value* ends;
    if (include_last) {
      starts = slice(g, offsets, {0}, {0}, {-1});
      ends = slice(g, offsets, {0}, {1}, {INT64_MAX});
    } else {
      ends = concat(g, {slice(g, offsets, {0}, {1}, {INT64_MAX}), size(g, indices, 0, true)}, 0);
    }
    Value* pos = unsqueeze(g, positions(g, n, indices, 0), {0});  // (1, L)
    Value* member = g.op("And", {g.op("Not", {g.op("Less", {pos, unsqueeze(g, starts, {1})})}),
                                 g.op("Less", {pos, unsqueeze(g, ends, {1})})});  // (B, L)
    if (padding_idx)
      member = g.op("And",
                    {member, unsqueeze(g, g.op("Not", {g.op("Equal", {indices, g.constant_int(*padding_idx)})}), {0})});
    if (psw) rows = g.op("Mul", {rows, unsqueeze(g, psw, {1})});
    if (mode == 2) {
      Value* masked =
          g.op("Where", {unsqueeze(g, member, {2}), unsqueeze(g, rows, {0}), scalar_like(g, -INFINITY, weight)});
      out = reduce(g, "ReduceMax", masked, {1}, false);  // (B, D)
      Value* empty = unsqueeze(
          g, g.op("Not", {cast(g, reduce(g, "ReduceMax", cast(g, member, DType::Int32), {1}, false), DType::Bool)}),
          {1});
      out = g.op("Where", {empty, scalar_like(g, 0.0, weight), out});  // PyTorch gives 0 for an empty bag
    } else {
      Value* member_f = cast(g, member, dtype_of(weight));
      out = g.op("MatMul", {member_f, rows});
      if (mode == 1) {
        Value* count = reduce(g, "ReduceSum", member_f, {1}, true);
        out = g.op("Div", {out, g.op("Max", {count, scalar_like(g, 1.0, weight)})});
      }
    }
  }
  std::vector<Value*> result{out};
  for (size_t i = 1; i < n.num_outputs(); ++i) result.push_back(g.none());
  return result;
}

// embedding_renorm_(weight, indices, max_norm, norm_type): rows of weight that `indices` use and
// whose norm exceeds max_norm are scaled to max_norm (PyTorch adds 1e-7 to the norm).
Value* embedding_renorm(Graph& g, const TorchNode& n, const Args& a) {
  Value* weight = a.tensor(0);
  Value* indices = reshape(g, as_index(g, a.tensor(1)), std::vector<int64_t>{1, -1});
  const double max_norm = a.f(2), p = a.f(3);
  Value* norm;
  if (p == 2.0)
    norm = reduce(g, "ReduceL2", weight, {1}, true);
  else if (p == 1.0)
    norm = reduce(g, "ReduceL1", weight, {1}, true);
  else
    norm =
        g.op("Pow", {reduce(g, "ReduceSum", g.op("Pow", {g.op("Abs", {weight}), scalar_like(g, p, weight)}), {1}, true),
                     scalar_like(g, 1.0 / p, weight)});
  Value* rows = unsqueeze(g, positions(g, n, weight, 0), {1});  // (V, 1)
  Value* used =
      cast(g, reduce(g, "ReduceMax", cast(g, g.op("Equal", {rows, indices}), DType::Int32), {1}, true), DType::Bool);
  Value* max_v = scalar_like(g, max_norm, weight);
  Value* too_long = g.op("And", {used, g.op("Greater", {norm, max_v})});
  Value* scale = g.op("Div", {max_v, g.op("Add", {norm, scalar_like(g, 1e-7, weight)})});
  return g.op("Where", {too_long, g.op("Mul", {weight, scale}), weight});
}

}  // namespace

void add_embedding(Registrar& r) {
  r.add("aten::embedding", 9, embedding);
  r.add("aten::embedding_bag", 9, embedding_bag);
  add_with_inplace(r, "aten::embedding_renorm", 9, embedding_renorm);
}

}  // namespace onnxport::nn
