#pragma once
// Values for an ONNX model's graph inputs (for `run` and `verify`): given by --input specs (by
// name) or drawn from the declared type when it is static, and checked against the declared
// dtype and static dims before anything runs.
#include <onnx/onnx_pb.h>
#include <torch/script.h>

#include <string>
#include <vector>

#include "onnxport/options.h"

namespace onnxport::core {

struct ModelInputs {
  std::vector<InputSpec> specs;        // one per input, in order (a drawn one: its shape and dtype)
  std::vector<at::Tensor> tensors;     // one per input, in order
  std::vector<std::string> described;  // "x: float32[1,3,224,224] from x.npy" / "... drawn (seed 0)"
};

// A complex tensor as the ONNX graph takes it: its real pair [..., 2] (torch.view_as_real).
at::Tensor as_onnx_input(const at::Tensor& t);
std::vector<at::Tensor> as_onnx_inputs(const std::vector<at::Tensor>& tensors);

// `input_names`: the graph inputs initializers do not supply, in order. Throws ConfigError for a
// spec naming no input, a dynamic input not given, or a value of the wrong dtype or shape.
ModelInputs inputs_for_model(const onnx::GraphProto& graph, const std::vector<std::string>& input_names,
                             const std::vector<InputSpec>& given, uint64_t seed);

// The same inputs drawn again with `seed` (files replaced by draws of their shape and dtype),
// dims the graph declares symbolic grown by `grow` (to check dynamic axes at another size).
ModelInputs redrawn_inputs(const onnx::GraphProto& graph, const std::vector<std::string>& input_names,
                           const ModelInputs& first, uint64_t seed, int64_t grow);

// Whether `onnx_value` (as_onnx_input's) is of the dtype and rank `info` declares, and of its size
// along every dim that has one (a dim_param takes any size).
bool fits_declared(const onnx::ValueInfoProto& info, const at::Tensor& onnx_value);

// "float32[1,3,224,224]"
std::string tensor_type_text(const at::Tensor& t);

}  // namespace onnxport::core
