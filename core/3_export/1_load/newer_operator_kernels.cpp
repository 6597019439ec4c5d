#include "3_export/1_load/newer_operator_kernels.h"

#include <cmath>
#include <limits>
#include <vector>

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

at::Tensor rms_norm(const at::Tensor& input, at::IntArrayRef normalized_shape, const c10::optional<at::Tensor>& weight,
                    c10::optional<double> eps) {
  const auto k = static_cast<int64_t>(normalized_shape.size());
  TORCH_CHECK(k >= 1 && input.dim() >= k && input.sizes().slice(input.dim() - k).equals(normalized_shape),
              "aten::rms_norm: normalized_shape ", normalized_shape, " is not the trailing dims of the input, ",
              input.sizes());
  const bool has_weight = weight.has_value() && weight->defined();
  TORCH_CHECK(!has_weight || weight->sizes().equals(normalized_shape), "aten::rms_norm: weight of shape ",
              weight->sizes(), " for normalized_shape ", normalized_shape);
  std::vector<int64_t> axes;
  for (int64_t d = input.dim() - k; d < input.dim(); ++d) axes.push_back(d);
  const double e = eps ? *eps
                   : input.scalar_type() == at::kDouble ? std::numeric_limits<double>::epsilon()
                                                        : std::numeric_limits<float>::epsilon();
  at::Tensor y = input * at::rsqrt(input.pow(2).mean(axes, /*keepdim=*/true) + e);
  return has_weight ? y * *weight : y;
}

void rms_norm_boxed(const c10::OperatorHandle&, torch::jit::Stack* stack) {
  auto args = torch::jit::last(*stack, 4);
  const at::Tensor input = args[0].toTensor();
  const std::vector<int64_t> normalized_shape = args[1].toIntVector();
  const c10::optional<at::Tensor> weight = args[2].isNone() ? c10::nullopt : c10::optional<at::Tensor>(args[2].toTensor());
  const c10::optional<double> eps = args[3].isNone() ? c10::nullopt : c10::optional<double>(args[3].toDouble());
  torch::jit::drop(*stack, 4);
  torch::jit::push(*stack, onnxport::core::rms_norm(input, normalized_shape, weight, eps));  // not at::rms_norm (2.4+)
}

}  // namespace onnxport::core
