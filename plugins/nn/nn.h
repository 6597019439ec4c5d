#pragma once
// The nn pack: convolutions, pooling, normalization, linear layers, embedding, pixel shuffle,
// softmax, dropout, resizing, padding and losses.
#include <functional>
#include <string>
#include <vector>

#include "onnxport/registrar.h"

namespace onnxport::nn {

void add_conv(Registrar& r);           // aten::_convolution, conv{1,2,3}d, conv_transpose{1,2,3}d
void add_pooling(Registrar& r);        // max/avg pools, adaptive pools
void add_normalization(Registrar& r);  // batch_norm, instance_norm, layer_norm, group_norm
void add_linear(Registrar& r);         // linear, addmm, matmul, mm, bmm
void add_embedding(Registrar& r);      // embedding
void add_shuffle(Registrar& r);        // pixel_shuffle, pixel_unshuffle
void add_softmax(Registrar& r);        // softmax, log_softmax
void add_dropout(Registrar& r);        // dropout and its feature/alpha variants, native_dropout
void add_upsample(Registrar& r);       // upsample_*, __interpolate, grid_sampler
void add_padding(Registrar& r);        // pad, constant_pad_nd, reflection/replication/circular pads
void add_loss(Registrar& r);           // nll/cross-entropy/bce/kl_div/mse/l1/smooth_l1/huber losses
void add_margin_loss(Registrar& r);    // multi_margin_loss, multilabel_margin_loss
void add_attention(Registrar& r);      // _native_multi_head_attention, _transformer_encoder_layer_fwd
void add_scaled_dot_product_attention(Registrar& r);  // scaled_dot_product_attention (PyTorch 2.0 on)

// Shared by the files above (common.cpp).

// A loss's reduction argument (PyTorch's enum: 0 none, 1 mean, 2 sum; None or absent: mean) as
// its name, and the loss reduced that way.
std::string reduction_name(const Args& a, size_t i);
Value* reduce_loss(Graph& g, Value* loss, const std::string& reduction);

// A bool argument that may be None (then `fallback`).
bool flag(const Args& a, size_t i, bool fallback);

// A per-spatial-dim int list argument: a single value is repeated n times (the int[2] schema
// accepts `1` for `[1, 1]`); an absent/None argument gives `fallback` repeated.
std::vector<int64_t> per_dim(const Args& a, size_t i, size_t n, int64_t fallback);

// ONNX's Conv/Pool ops need a batch dim; PyTorch also takes unbatched (C, *spatial) input.
// Runs build() on x with a batch dim added when x has rank n_spatial + 1, and removes it again.
Value* with_batch_dim(Graph& g, Value* x, size_t n_spatial, const std::function<Value*(Value*)>& build);

// LayerNorm of x over its trailing dims `normalized_shape`, weight and bias optional:
// LayerNormalization from opset 17, ReduceMean arithmetic before (normalization.cpp).
Value* layer_norm(Graph& g, Value* x, const std::vector<int64_t>& normalized_shape, Value* w, Value* b, double eps);

}  // namespace onnxport::nn
