#include "3_export/1_load/newer_operator_kernels.h"

#include <cmath>
#include <limits>

namespace onnxport::core {

namespace {

const char* kSdpa = "aten::scaled_dot_product_attention";

// key or value [..., H_kv, S, E] -> [..., H_q, S, E]: each head repeated over its group of query heads.
at::Tensor heads_over_query_heads(const at::Tensor& query, const at::Tensor& t, const char* what) {
  TORCH_CHECK(query.dim() >= 3 && t.dim() >= 3, kSdpa, ": enable_gqa needs heads at dim -3 of query and ", what,
              ", got ", query.sizes(), " and ", t.sizes());
  const int64_t query_heads = query.size(-3), heads = t.size(-3);
  TORCH_CHECK(heads > 0 && query_heads % heads == 0, kSdpa, ": enable_gqa needs the ", what, "'s ", heads,
              " heads to divide the query's ", query_heads);
  return query_heads == heads ? t : t.repeat_interleave(query_heads / heads, -3);
}

}  // namespace

at::Tensor scaled_dot_product_attention(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                                        const c10::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                                        c10::optional<double> scale, bool enable_gqa) {
  TORCH_CHECK(dropout_p == 0.0, kSdpa, ": dropout_p is ", dropout_p,
              ", which makes the result random; the model is exported in eval, where dropout_p must be 0 "
              "(pass dropout_p=0.0 when not training)");
  const bool masked = attn_mask.has_value() && attn_mask->defined();
  TORCH_CHECK(!(is_causal && masked), kSdpa, ": is_causal=True takes no attn_mask");
  TORCH_CHECK(query.dim() >= 2 && key.dim() >= 2 && value.dim() >= 2, kSdpa,
              ": query, key and value need at least 2 dims, got ", query.sizes(), ", ", key.sizes(), ", ",
              value.sizes());
  const at::Tensor k = enable_gqa ? heads_over_query_heads(query, key, "key") : key;
  const at::Tensor v = enable_gqa ? heads_over_query_heads(query, value, "value") : value;
  const double s = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(query.size(-1)));
  at::Tensor scores = at::matmul(query * s, k.transpose(-2, -1));
  const double minus_inf = -std::numeric_limits<double>::infinity();
  if (is_causal) {
    const at::Tensor keep = at::ones({query.size(-2), key.size(-2)}, query.options().dtype(at::kBool)).tril();
    scores = scores.masked_fill(keep.logical_not(), minus_inf);
  } else if (masked && attn_mask->scalar_type() == at::kBool) {
    scores = scores.masked_fill(attn_mask->logical_not(), minus_inf);
  } else if (masked) {
    scores = scores + *attn_mask;
  }
  // A query whose keys are all masked out attends to nothing: zeros, as PyTorch gives from 2.5 on.
  const at::Tensor attends_to_nothing = scores.isneginf().all(-1, /*keepdim=*/true);
  return at::matmul(at::softmax(scores, -1).masked_fill(attends_to_nothing, 0.0), v);
}

}  // namespace onnxport::core
