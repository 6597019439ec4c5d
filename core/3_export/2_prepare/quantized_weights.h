#pragma once
// Quantized constants. quantized::conv*d / conv_transpose*d / linear read their weights from
// TorchScript custom-class objects (Conv2dPackedParamsBase, Conv3dPackedParamsBase,
// LinearPackedParamsBase) that freezing turns into opaque prim::Constant objects, and freezing
// folds quantized tensors (QInt8/QUInt8) into constants no ONNX type can hold. This pass
// rebuilds both in the graph from plain tensors, unpacking packed objects at export time:
//
//   %w  : Tensor = prim::Constant[int8 int_repr of the weight]      ("conv.weight")
//   %wq : Tensor = aten::_make_per_channel_quantized_tensor(%w, %scales, %zero_points, %axis)
//                  (aten::_make_per_tensor_quantized_tensor(%w, scale, zero_point) per tensor)
//   %p  = quantized::conv2d_prepack(%wq, %bias, stride, padding, dilation, groups)
//
// The graph stays runnable (types are recorded by running it) and computes exactly what the
// original did; the quantized op pack maps the prepack ops to the unpacked weights its
// quantized::conv*/linear symbolics consume, with the weights stored as int8 initializers.
//
// Second, float aten ops that PyTorch runs on quantized activations keeping their scale and
// zero point (max_pool2d, adaptive_avg_pool2d, flatten, relu, reshape, ...) are rewritten as
//   quantize_per_tensor(op(dequantize(q), ...), q_scale(q), q_zero_point(q), dtype)
// and shape reads (aten::size, ...) get dequantize(q), so that every aten op's symbolic sees a
// float tensor, as torch.onnx's `quantized_args` symbolics do.
#include <torch/script.h>

#include <string>
#include <unordered_map>

namespace onnxport::core {

// Both rewrites, on the top-level block of a frozen, inlined graph.
// tensor_names (storage -> "conv.weight") receives the names of the new weight and bias
// constants, derived from the packed-params constant's name ("self.conv._packed_params") or
// from the name the quantized tensor had.
void prepare_quantized_graph(torch::jit::Graph& graph, std::unordered_map<const void*, std::string>& tensor_names);

}  // namespace onnxport::core
