#pragma once
// Kernels of the operators newer_operators.cpp registers, written with the ATen ops every libtorch
// onnxport builds on has. They run for the type-recording run and constant propagation, on CPU, in
// eval: an operator's random training behaviour (dropout) is refused, not imitated.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

namespace onnxport::core {

// aten::scaled_dot_product_attention (PyTorch 2.0; `scale` from 2.1, `enable_gqa` from 2.5):
// softmax(query key^T * scale + mask) value over the last two axes; leading axes broadcast.
// attn_mask: bool keeps where true, a float one is added; is_causal keeps key j for query i when
// j <= i; scale defaults to 1/sqrt(query.size(-1)); enable_gqa repeats each key/value head over
// its group of query heads (dim -3). A query whose keys are all masked out gives zeros (PyTorch 2.5
// on; NaN before). dropout_p must be 0.
at::Tensor scaled_dot_product_attention(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                                        const c10::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                                        c10::optional<double> scale, bool enable_gqa);

// aten::rms_norm (PyTorch 2.4): input / sqrt(mean(input^2) + eps) over the trailing
// normalized_shape dims, times weight when given; eps None is the machine epsilon of the type
// PyTorch computes in (double's for double, float's otherwise).
at::Tensor rms_norm(const at::Tensor& input, at::IntArrayRef normalized_shape, const c10::optional<at::Tensor>& weight,
                    c10::optional<double> eps);

// The same as a boxed kernel: its schema declares SymInt[], which a typed kernel would have to
// take as c10::SymIntArrayRef; TorchScript hands it an int list either way.
void rms_norm_boxed(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace onnxport::core
