#pragma once
// A quantized tensor given as an example input (torch.quantize_per_tensor(...)) becomes three
// graph inputs, as torch.onnx makes them: its integer values (uint8/int8), its scale (a float64
// 0-d tensor) and its zero point (an int64 0-d tensor). The graph rebuilds the quantized tensor
// from them with aten::_make_per_tensor_quantized_tensor (which the quantized pack maps), so it
// stays runnable and computes what it did. input_names and dynamic_axes then apply to the three.
#include <torch/script.h>

#include <vector>

namespace onnxport::core {

// Rewrites graph input `self_inputs + k` for every quantized tensor inputs[k], and replaces it in
// `inputs` by its three parts; returns how many. Throws ConfigError for a per-channel quantized input.
size_t unpack_quantized_inputs(torch::jit::Graph& graph, std::vector<torch::jit::IValue>& inputs, size_t self_inputs);

}  // namespace onnxport::core
