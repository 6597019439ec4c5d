// The fused fast-path ops that torch 1.13's nn.MultiheadAttention and nn.TransformerEncoderLayer
// call in eval mode without grad. Inputs are batch-first [B, L, E]; heads are [B, H, L, head_dim].
//
// PyTorch's kernel turns a non-bool mask into a bool one (nonzero = masked out) rather than adding
// it, so the mapping does the same: masked scores become -inf before the softmax.
#include <cmath>
#include <limits>

#include "nn.h"
#include "onnxport/helpers.h"

namespace onnxport::nn {
namespace {

using namespace helpers;

struct AttentionWeights {
  int64_t embed_dim, num_heads;
  Value *qkv_weight, *qkv_bias, *proj_weight, *proj_bias;
};

struct Attention {
  Value* output;   // [B, L, E]
  Value* weights;  // softmax probabilities per head, [B, H, L, S]
};

// x @ w^T + b (b may be absent).
Value* project(Graph& g, Value* x, Value* w, Value* b) {
  Value* y = g.op("MatMul", {x, transpose(g, w, {1, 0})});
  return b ? g.op("Add", {y, b}) : y;
}

// [B, L, E] -> [B, H, L, E / H]; 0 in the shape keeps a dynamic B or L.
Value* split_heads(Graph& g, Value* x, const AttentionWeights& w) {
  Value* heads = reshape(g, x, std::vector<int64_t>{0, 0, w.num_heads, w.embed_dim / w.num_heads});
  return transpose(g, heads, {0, 2, 1, 3});
}

// [B, H, L, E / H] -> [B, L, E]
Value* merge_heads(Graph& g, Value* x, const AttentionWeights& w) {
  return reshape(g, transpose(g, x, {0, 2, 1, 3}), std::vector<int64_t>{0, 0, w.embed_dim});
}

// The query, key and value projections: rows [0, E), [E, 2E), [2E, 3E) of the packed weight and
// bias. Self-attention (one tensor for all three) is a single MatMul whose result is split.
std::vector<Value*> project_qkv(Graph& g, Value* q, Value* k, Value* v, const AttentionWeights& w) {
  const int64_t e = w.embed_dim;
  if (q == k && k == v) return split(g, project(g, q, w.qkv_weight, w.qkv_bias), {e, e, e}, 2);
  const std::vector<Value*> ws = split(g, w.qkv_weight, {e, e, e}, 0);
  std::vector<Value*> bs{nullptr, nullptr, nullptr};
  if (w.qkv_bias) bs = split(g, w.qkv_bias, {e, e, e}, 0);
  return {project(g, q, ws[0], bs[0]), project(g, k, ws[1], bs[1]), project(g, v, ws[2], bs[2])};
}

// The mask as a bool tensor broadcastable to the [B, H, L, S] scores, or nullptr without one.
// mask_type 1: key padding mask [B, S]; 0: attention mask [L, S], [B, L, S] or [B, H, L, S];
// 2: the attention and padding masks merged into one of the scores' shape (PyTorch 2.x's
// nn.MultiheadAttention.merge_masks), taken as 0 is.
Value* score_mask(Graph& g, const TorchNode& n, Value* mask, std::optional<int64_t> mask_type) {
  if (!mask) return nullptr;
  if (!mask_type) fail_node(n, "a mask needs mask_type (0: attention mask, 1: key padding mask), got None");
  const int64_t rank = rank_of(mask, n.kind + " mask");
  Value* m = cast(g, mask, DType::Bool);
  if (*mask_type == 1) {
    if (rank != 2) fail_node(n, "a key padding mask (mask_type 1) is [batch, source length], got " + mask->describe());
    return unsqueeze(g, m, {1, 2});
  }
  if (*mask_type != 0 && *mask_type != 2) fail_node(n, "mask_type is 0, 1 or 2, got " + std::to_string(*mask_type));
  if (rank < 2 || rank > 4)
    fail_node(
        n, "an attention mask (mask_type " + std::to_string(*mask_type) + ") has rank 2 to 4, got " + mask->describe());
  return rank == 3 ? unsqueeze(g, m, {1}) : m;
}

// softmax(q k^T / sqrt(head_dim), masked scores set to -inf) v, then the output projection.
Attention multi_head_attention(Graph& g, Value* query, Value* key, Value* value, const AttentionWeights& w,
                               Value* mask) {
  const std::vector<Value*> qkv = project_qkv(g, query, key, value, w);
  const double scale = 1.0 / std::sqrt(static_cast<double>(w.embed_dim / w.num_heads));
  Value* q = g.op("Mul", {split_heads(g, qkv[0], w), scalar_like(g, scale, query)});
  Value* k_t = transpose(g, split_heads(g, qkv[1], w), {0, 1, 3, 2});
  Value* scores = g.op("MatMul", {q, k_t});
  if (mask) scores = g.op("Where", {mask, scalar_like(g, -std::numeric_limits<double>::infinity(), query), scores});
  // Softmax over the last axis: the same at every opset (before 13 it flattens from `axis` on).
  Value* weights = g.op("Softmax", {scores}, {{"axis_i", 3}});
  Value* heads = g.op("MatMul", {weights, split_heads(g, qkv[2], w)});
  return {project(g, merge_heads(g, heads, w), w.proj_weight, w.proj_bias), weights};
}

AttentionWeights attention_weights(const TorchNode& n, const Args& a, size_t first) {
  AttentionWeights w{a.i(first),          a.i(first + 1),
                     a.tensor(first + 2), a.optional_tensor(first + 3),
                     a.tensor(first + 4), a.optional_tensor(first + 5)};
  if (w.num_heads <= 0 || w.embed_dim % w.num_heads != 0)
    fail_node(n, "embed_dim " + std::to_string(w.embed_dim) + " is not divisible into " + std::to_string(w.num_heads) +
                     " heads");
  return w;
}

Value* batch_first_input(const TorchNode& n, const Args& a, size_t i) {
  Value* x = a.tensor(i);
  if (rank_of(x, n.kind + " input") != 3)
    fail_node(n, "the fused attention takes batch-first [batch, length, embed_dim] inputs, got " + x->describe());
  return x;
}

// _native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias,
//   proj_weight, proj_bias, mask=None, need_weights=True, average_attn_weights=True, mask_type=None)
// -> (output, weights). Without need_weights PyTorch's weights are an undefined tensor (None).
std::vector<Value*> native_multi_head_attention(Graph& g, const TorchNode& n, const Args& a) {
  Value* query = batch_first_input(n, a, 0);
  const AttentionWeights w = attention_weights(n, a, 3);
  Value* mask = score_mask(g, n, a.optional_tensor(9), a.opt_i(12));
  const Attention r = multi_head_attention(g, query, batch_first_input(n, a, 1), batch_first_input(n, a, 2), w, mask);
  if (!flag(a, 10, true)) return {r.output, g.none()};
  if (!flag(a, 11, true)) return {r.output, r.weights};
  return {r.output, reduce(g, "ReduceMean", r.weights, {1}, false)};
}

// Exact (erf) GELU: x * (1 + erf(x / sqrt(2))) / 2.
Value* gelu(Graph& g, Value* x) {
  Value* erf = g.op("Erf", {g.op("Mul", {x, scalar_like(g, M_SQRT1_2, x)})});
  Value* one_plus = g.op("Add", {erf, scalar_like(g, 1.0, x)});
  return g.op("Mul", {g.op("Mul", {x, one_plus}), scalar_like(g, 0.5, x)});
}

// linear2(activation(linear1(x)))
Value* feed_forward(Graph& g, Value* x, const Args& a, bool use_gelu) {
  Value* hidden = project(g, x, a.tensor(14), a.optional_tensor(15));
  hidden = use_gelu ? gelu(g, hidden) : g.op("Relu", {hidden});
  return project(g, hidden, a.tensor(16), a.optional_tensor(17));
}

// A nested tensor made from a padding mask (nn.TransformerEncoder's fast path, taken in eval
// without grad when given src_key_padding_mask) is carried as the pair [padded [B, L, E],
// keep mask [B, L]]. Layers attend only to kept positions, as they do per sequence on the nested
// tensor; padded positions are computed but never read by kept ones (attention masks them as keys,
// the rest is per position), and to_padded_tensor overwrites them.
struct NestedFromMask {
  Value* padded;
  Value* keep;
};

std::optional<NestedFromMask> nested_from_mask(const Value* v) {
  if (!v->is_list() || v->elements().size() != 2) return std::nullopt;
  return NestedFromMask{v->elements()[0], v->elements()[1]};
}

// _nested_tensor_from_mask(t [B, L, E], mask [B, L] (true: keep), mask_check)
Value* nested_tensor_from_mask(Graph& g, const TorchNode& n, const Args& a) {
  Value* t = a.tensor(0);
  Value* keep = a.tensor(1);
  if (rank_of(t, n.kind + " input") != 3 || rank_of(keep, n.kind + " mask") != 2)
    fail_node(n, "takes a [batch, length, embed_dim] tensor and a [batch, length] mask, got " + t->describe() +
                     " and " + keep->describe());
  return g.list({t, cast(g, keep, DType::Bool)});
}

// True: the pair above stands for either path, so TransformerEncoder takes the fast one at export,
// and to_padded_tensor applies this test at run time (where it fails, torch's slow path leaves
// the padded positions as computed).
Value* nested_mask_left_aligned(Graph& g, const TorchNode&, const Args&) {
  return g.constant(Tensor::scalar_bool(true));
}

// Whether some row of keep [B, L] has a kept position after a dropped one: a 0-d bool.
Value* mask_not_left_aligned(Graph& g, Value* keep) {
  const int64_t kEnd = std::numeric_limits<int64_t>::max();
  Value* dropped_before = g.op("Not", {slice(g, keep, {1}, {0}, {-1})});
  Value* kept_after = slice(g, keep, {1}, {1}, {kEnd});
  Value* gaps = cast(g, g.op("And", {dropped_before, kept_after}), DType::Float);
  return g.op("Greater", {reduce(g, "ReduceSum", gaps, {0, 1}, false), g.constant(Tensor::scalar_float(0))});
}

// to_padded_tensor(nested, padding, output_size=None): the padded positions set to `padding`,
// unless the mask was not left-aligned (see nested_mask_left_aligned).
Value* to_padded_tensor(Graph& g, const TorchNode& n, const Args& a) {
  auto nested = nested_from_mask(a.at(0));
  if (!nested) return a.tensor(0);  // a dense tensor, as the slow path leaves it
  Value* y = nested->padded;
  if (!a.is_none(2)) {
    auto wanted = a.at(2)->maybe_ints();
    auto shape = static_shape(y);
    if (wanted && shape && *wanted != *shape)
      fail_node(n, "output_size must be the padded input's size here (" + y->describe() + ")");
  }
  Value* keep = g.op("Or", {unsqueeze(g, nested->keep, {2}), mask_not_left_aligned(g, nested->keep)});
  return g.op("Where", {keep, y, scalar_like(g, a.f(1), y)});
}

// _transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
//   proj_bias, use_gelu, norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2,
//   ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask=None, mask_type=None), as
// TransformerEncoderLayer.forward:
//   norm_first: x = x + sa(norm1(x)); x = x + ff(norm2(x))
//   otherwise:  x = norm1(x + sa(x));  x = norm2(x + ff(x))
// (`mask`: the score mask, or nullptr.)
Value* encoder_layer(Graph& g, const TorchNode& n, const Args& a, Value* src, Value* mask) {
  const AttentionWeights w = attention_weights(n, a, 1);
  const bool use_gelu = a.b(7), norm_first = a.b(8);
  const double eps = a.f(9);
  const std::vector<int64_t> shape{w.embed_dim};
  auto norm1 = [&](Value* x) { return layer_norm(g, x, shape, a.tensor(10), a.optional_tensor(11), eps); };
  auto norm2 = [&](Value* x) { return layer_norm(g, x, shape, a.tensor(12), a.optional_tensor(13), eps); };
  auto self_attention = [&](Value* x) { return multi_head_attention(g, x, x, x, w, mask).output; };

  if (norm_first) {
    Value* x = g.op("Add", {src, self_attention(norm1(src))});
    return g.op("Add", {x, feed_forward(g, norm2(x), a, use_gelu)});
  }
  Value* x = norm1(g.op("Add", {src, self_attention(src)}));
  return norm2(g.op("Add", {x, feed_forward(g, x, a, use_gelu)}));
}

Value* transformer_encoder_layer(Graph& g, const TorchNode& n, const Args& a) {
  if (auto nested = nested_from_mask(a.at(0))) {
    if (!a.is_none(18))
      fail_node(n, "a nested tensor input takes no mask (torch refuses src_key_padding_mask with NestedTensor)");
    Value* padding = g.op("Not", {nested->keep});
    return g.list({encoder_layer(g, n, a, nested->padded, score_mask(g, n, padding, 1)), nested->keep});
  }
  return encoder_layer(g, n, a, batch_first_input(n, a, 0), score_mask(g, n, a.optional_tensor(18), a.opt_i(19)));
}

}  // namespace

void add_attention(Registrar& r) {
  r.add("aten::_native_multi_head_attention", 9, native_multi_head_attention);
  r.add("aten::_transformer_encoder_layer_fwd", 9, transformer_encoder_layer);
  r.add("aten::_nested_tensor_from_mask", 9, nested_tensor_from_mask);
  r.add("aten::_nested_tensor_from_mask_left_aligned", 9, nested_mask_left_aligned);
  r.add("aten::to_padded_tensor", 9, to_padded_tensor);
}

}  // namespace onnxport::nn
