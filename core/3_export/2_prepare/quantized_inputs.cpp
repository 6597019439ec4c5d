#include "3_export/2_prepare/quantized_inputs.h"

#include "onnxport/errors.h"

namespace onnxport::core {

size_t unpack_quantized_inputs(torch::jit::Graph& graph, std::vector<torch::jit::IValue>& inputs, size_t self_inputs) {
  size_t unpacked_inputs = 0;
  for (size_t k = inputs.size(); k-- > 0;) {  // from the end: earlier inputs keep their positions
    if (!inputs[k].isTensor() || !inputs[k].toTensor().is_quantized()) continue;
    const at::Tensor q = inputs[k].toTensor();
    if (q.qscheme() != at::kPerTensorAffine)
      throw ConfigError("example input " + std::to_string(k) + " is a tensor quantized per channel; onnxport takes "
                            "quantized inputs quantized per tensor (an integer tensor, a scale, a zero point)",
                        ErrorContext::with_hint("pass the float tensor and quantize it in forward"));
    const std::vector<at::Tensor> parts = {q.int_repr(), at::scalar_tensor(q.q_scale(), at::kDouble),
                                           at::scalar_tensor(q.q_zero_point(), at::kLong)};
    const size_t at_index = k + self_inputs;
    torch::jit::Value* input = graph.inputs()[at_index];
    const std::string base = input->hasDebugName() ? input->debugName() : "input_" + std::to_string(k);
    std::vector<torch::jit::Value*> unpacked;
    for (size_t p = 0; p < parts.size(); ++p) {
      torch::jit::Value* part = graph.insertInput(at_index + p, base + (p == 0 ? "_value" : p == 1 ? "_scale" : "_zero_point"));
      part->setType(c10::TensorType::create(parts[p]));
      unpacked.push_back(part);
    }
    torch::jit::WithInsertPoint at(graph.block()->nodes().front());
    torch::jit::Value* scale = graph.insert(c10::aten::Float, {unpacked[1]});
    torch::jit::Value* zero_point = graph.insert(c10::aten::Int, {unpacked[2]});
    torch::jit::Value* rebuilt = graph.insert(c10::Symbol::fromQualString("aten::_make_per_tensor_quantized_tensor"),
                                              {unpacked[0], scale, zero_point});
    rebuilt->setType(input->type());
    input->replaceAllUsesWith(rebuilt);
    graph.eraseInput(at_index + parts.size());
    inputs.erase(inputs.begin() + static_cast<std::ptrdiff_t>(k));
    inputs.insert(inputs.begin() + static_cast<std::ptrdiff_t>(k), parts.begin(), parts.end());
    ++unpacked_inputs;
  }
  return unpacked_inputs;
}

}  // namespace onnxport::core
