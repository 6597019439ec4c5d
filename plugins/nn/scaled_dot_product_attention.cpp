// aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None,
//   float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor
// (PyTorch 2.0; scale from 2.1, enable_gqa from 2.5): what nn.MultiheadAttention,
// nn.TransformerEncoderLayer and F.scaled_dot_product_attention call from PyTorch 2.0 on.
//
//   softmax(query key^T * scale + mask) value    over the last two axes, leading axes broadcast
//
// as PyTorch 2.6 computes it: a bool mask keeps where true, a float one is added; is_causal keeps
// key j for query i when j <= i; scale defaults to 1/sqrt(E); enable_gqa repeats each key/value head
// over its group of query heads; a query with no key left attends to nothing (zeros).
//
// Opsets: from 9 (MatMul, Softmax over the last axis, Where, Expand); a causal mask of run-time
// lengths needs opset 11 (Range). torch.onnx registers it from opset 14 (it uses Trilu).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "nn.h"
#include "onnxport/helpers.h"

namespace onnxport::nn {
namespace {

using namespace helpers;

// The scale as a 0-d tensor of q's dtype: the given one, or 1/sqrt(E) of q [..., L, E].
Value* attention_scale(Graph& g, const Args& a, Value* q) {
  if (!a.is_none(6)) {
    if (auto s = a.at(6)->maybe_float()) return scalar_like(g, *s, q);
    return cast(g, a.tensor(6), dtype_of(q));
  }
  if (auto e = static_dim(q, -1)) return scalar_like(g, 1.0 / std::sqrt(static_cast<double>(*e)), q);
  Value* e = cast(g, size(g, q, -1), dtype_of(q));
  return g.op("Div", {scalar_like(g, 1.0, q), g.op("Sqrt", {e})});
}

// The causal mask as bool [L, S]: key j is kept for query i when j <= i (torch's ones(L, S).tril()).
Value* causal_keep(Graph& g, const TorchNode& n, Value* q, Value* k) {
  const auto l = static_dim(q, -2), s = static_dim(k, -2);
  if (l && s) {
    std::vector<uint8_t> keep(static_cast<size_t>(*l * *s));
    for (int64_t i = 0; i < *l; ++i)
      for (int64_t j = 0; j < *s; ++j) keep[static_cast<size_t>(i * *s + j)] = j <= i;
    return g.constant(Tensor(DType::Bool, {*l, *s}, std::move(keep)));
  }
  if (g.opset() < 11)
    fail_node(n, "is_causal with run-time query or key lengths needs opset 11 or later (Range)",
              "export with --opset 11 or later, or without dynamic axes on the lengths");
  auto positions = [&](Value* length) { return g.op("Range", {g.constant_int(0), length, g.constant_int(1)}); };
  Value* rows = unsqueeze(g, positions(size(g, q, -2)), {1});
  Value* cols = unsqueeze(g, positions(size(g, k, -2)), {0});
  return g.op("Not", {g.op("Greater", {cols, rows})});
}

// How many query heads share one key/value head: H_q / H_kv as a 1-d [1] int64 tensor.
Value* group_size(Graph& g, const TorchNode& n, Value* q, Value* kv) {
  const auto hq = static_dim(q, -3), hkv = static_dim(kv, -3);
  if (hq && hkv) {
    if (*hkv <= 0 || *hq % *hkv != 0)
      fail_node(n, "enable_gqa needs the key/value heads (" + std::to_string(*hkv) + ") to divide the query heads (" +
                       std::to_string(*hq) + ")");
    return g.constant_ints({*hq / *hkv});
  }
  return g.op("Div", {size(g, q, -3, true), size(g, kv, -3, true)});
}

// kv [..., H_kv, S, E] -> [..., H_kv * group, S, E], each head repeated `group` times in a row
// (torch's repeat_interleave(group, dim=-3)): unsqueeze to [..., H_kv, 1, S, E], expand, merge.
Value* repeat_heads(Graph& g, Value* kv, Value* group, int64_t rank) {
  Value* expand_to = concat(g, {g.constant_ints(std::vector<int64_t>(rank - 2, 1)), group, g.constant_ints({1, 1})}, 0);
  Value* expanded = g.op("Expand", {unsqueeze(g, kv, {rank - 2}), expand_to});
  if (auto shape = static_shape(kv); shape && group->maybe_ints()) {
    (*shape)[rank - 3] *= group->maybe_ints()->at(0);
    return reshape(g, expanded, *shape);
  }
  Value* shape = shape_of(g, kv);
  Value* merged = concat(
      g, {slice(g, shape, {0}, {0}, {rank - 3}), g.constant_ints({-1}), slice(g, shape, {0}, {rank - 2}, {rank})}, 0);
  return reshape(g, expanded, merged);
}

// enable_gqa: key and value heads spread over the query heads (no change when they are as many).
std::pair<Value*, Value*> grouped_key_value(Graph& g, const TorchNode& n, Value* q, Value* k, Value* v) {
  const int64_t rank = rank_of(q, n.kind + " query");
  if (rank < 3 || rank_of(k, n.kind + " key") != rank || rank_of(v, n.kind + " value") != rank)
    fail_node(n, "enable_gqa needs query, key and value of one rank with heads at dim -3, got " + q->describe() + ", " +
                     k->describe() + ", " + v->describe());
  auto spread = [&](Value* kv) {
    const auto hq = static_dim(q, -3), hkv = static_dim(kv, -3);
    Value* group = group_size(g, n, q, kv);
    return hq && hkv && *hq == *hkv ? kv : repeat_heads(g, kv, group, rank);
  };
  return {spread(k), spread(v)};
}

// attn_mask: a bool one keeps where true, any other is added to the scores.
Value* apply_mask(Graph& g, const TorchNode& n, Value* scores, Value* mask) {
  const DType d = dtype_of(mask);
  if (d == DType::Bool)
    return g.op("Where", {mask, scores, scalar_like(g, -std::numeric_limits<double>::infinity(), scores)});
  if (d == DType::Undefined) fail_node(n, "the dtype of attn_mask is unknown (" + mask->describe() + ")");
  return g.op("Add", {scores, cast(g, mask, dtype_of(scores))});
}

// A query whose keys the mask all drops attends to nothing and gives zeros, as PyTorch does from 2.5
// on (Softmax alone gives NaN there): the weights zeroed where a row of the mask keeps no key.
Value* zero_unattended_rows(Graph& g, const TorchNode& n, Value* weights, Value* mask) {
  const int64_t last = rank_of(mask, n.kind + " attn_mask") - 1;
  Value* attends =
      dtype_of(mask) == DType::Bool
          ? g.op("Greater", {reduce(g, "ReduceMax", cast(g, mask, DType::Float), {last}, true), g.constant_float(0)})
          : g.op("Greater", {reduce(g, "ReduceMax", mask, {last}, true),
                             scalar_like(g, -std::numeric_limits<double>::infinity(), mask)});
  if (const Tensor* known = attends->maybe_tensor()) {  // a constant mask: only where some row is empty
    const std::vector<double> rows = known->as_doubles();
    if (std::all_of(rows.begin(), rows.end(), [](double r) { return r != 0; })) return weights;
  }
  return g.op("Where", {attends, weights, scalar_like(g, 0.0, weights)});
}

Value* scaled_dot_product_attention(Graph& g, const TorchNode& n, const Args& a) {
  Value* q = a.tensor(0);
  Value* k = a.tensor(1);
  Value* v = a.tensor(2);
  Value* mask = a.optional_tensor(3);
  if (!a.is_none(4)) {
    const auto dropout = a.at(4)->maybe_float();
    if (!dropout || *dropout != 0.0)
      fail_node(n,
                "dropout_p is " + (dropout ? std::to_string(*dropout) : a.at(4)->describe()) +
                    ": attention with dropout is random, and the export is of the model in eval",
                "pass dropout_p=0.0 when not training (nn.MultiheadAttention does so in eval)");
  }
  const bool is_causal = flag(a, 5, false);
  if (is_causal && mask) fail_node(n, "is_causal=True takes no attn_mask (PyTorch refuses it too)");
  if (rank_of(q, n.kind + " query") < 2 || rank_of(k, n.kind + " key") < 2)
    fail_node(n, "query and key need at least 2 dims, got " + q->describe() + " and " + k->describe());
  if (flag(a, 7, false)) std::tie(k, v) = grouped_key_value(g, n, q, k, v);

  Value* scaled_q = g.op("Mul", {q, attention_scale(g, a, q)});
  const int64_t k_rank = rank_of(k, n.kind + " key");
  std::vector<int64_t> swap_last(static_cast<size_t>(k_rank));
  for (int64_t i = 0; i < k_rank; ++i) swap_last[static_cast<size_t>(i)] = i;
  std::swap(swap_last[k_rank - 1], swap_last[k_rank - 2]);
  Value* scores = g.op("MatMul", {scaled_q, transpose(g, k, swap_last)});
  if (is_causal) scores = apply_mask(g, n, scores, causal_keep(g, n, q, k));
  if (mask) scores = apply_mask(g, n, scores, mask);
  // The last axis: the same at every opset (before 13, Softmax flattens from `axis` on).
  Value* weights = g.op("Softmax", {scores}, {{"axis_i", rank_of(scores, n.kind + " scores") - 1}});
  if (mask) weights = zero_unattended_rows(g, n, weights, mask);
  return g.op("MatMul", {weights, v});
}

}  // namespace

void add_scaled_dot_product_attention(Registrar& r) {
  r.add("aten::scaled_dot_product_attention", 9, scaled_dot_product_attention);
}

}  // namespace onnxport::nn
