#pragma once
// How the exported method's arguments become graph inputs. Tensors are inputs; a tuple, list or
// dict of tensors is one input per tensor in it (named "hc.0", "d.key"), rebuilt in the graph;
// None, strings and numbers are constants in the graph (their branches fold), or with
// ExportOptions::dynamic_numbers numbers are 0-d inputs, as torch.onnx makes a scripted forward's.
#include <torch/script.h>

#include <functional>
#include <string>
#include <vector>

#include "onnxport/options.h"

namespace onnxport::core {

// Arguments given whole (made from --input specs, one IValue per argument): each graph input
// after `self_inputs` is replaced as above, `inputs` becomes one value per remaining graph input
// and `names` one name per remaining graph input (a spec's name, "" where there is none).
void flatten_whole_arguments(torch::jit::Graph& graph, std::vector<torch::jit::IValue>& inputs, size_t self_inputs,
                             const std::vector<InputSpec>& specs, bool dynamic_numbers,
                             std::vector<std::string>& names);

// The graph inputs whole --input specs become, in order (for verify and run): those of the
// tensors in `whole` (what the specs made), and of the numbers whose name `is_input` (exported with
// dynamic numbers), a collection's elements named as above.
std::vector<InputSpec> graph_input_specs(const std::vector<torch::jit::IValue>& whole,
                                         const std::vector<InputSpec>& specs,
                                         const std::function<bool(const std::string&)>& is_input);

// The arguments again from one value per graph input (`leaves`, in the order above): what became
// constants is taken from `whole` (the arguments the specs made), the rest from `leaves` (a 0-d
// tensor read back as the number it stands for).
std::vector<torch::jit::IValue> arguments_from_graph_inputs(const std::vector<torch::jit::IValue>& whole,
                                                            const std::vector<InputSpec>& specs,
                                                            const std::vector<at::Tensor>& leaves,
                                                            const std::function<bool(const std::string&)>& is_input);

// A number argument (int, float, bool) left as an input becomes a 0-d tensor input: int64 for int,
// float64 for float, bool for bool, read back by aten::Int/Float/Bool.
void numbers_as_tensor_inputs(torch::jit::Graph& graph, std::vector<torch::jit::IValue>& inputs, size_t self_inputs);

}  // namespace onnxport::core
