#pragma once
// How far an ONNX value is from PyTorch's: the figures verify prints, per output and per node.
#include <ATen/ATen.h>

#include <string>

namespace onnxport::core {

struct TensorDifference {
  std::string type;  // the ONNX value's: "float32[1,1000]"
  double max_abs_error = 0;
  double max_rel_error = 0;  // |onnx - torch| / |torch| where |torch| > atol
  bool ok = false;           // every element within atol + rtol * |torch|; NaN matches NaN
  std::string problem;       // a dtype or shape mismatch, when there is one
};

// Integers and bools must be equal; floats within the tolerances.
TensorDifference compare_tensors(const at::Tensor& onnx, const at::Tensor& torch, double rtol, double atol);

// "1.23e-05"
std::string error_figure(double v);

}  // namespace onnxport::core
