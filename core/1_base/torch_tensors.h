#pragma once
// SDK tensors and ATen tensors, both ways without copying bytes, and their dtypes.
#include <ATen/ATen.h>

#include "onnxport/dtype.h"
#include "onnxport/tensor.h"

namespace onnxport::core {

DType dtype_of(at::ScalarType t);  // DType::Undefined for a type ONNX files cannot hold
at::ScalarType scalar_type_of(DType t);
// Wraps a tensor without copying (a contiguous copy only if it isn't contiguous).
Tensor borrow_tensor(const at::Tensor& t);
// An ATen view of a tensor's bytes that keeps them alive (no copy).
at::Tensor to_aten(const Tensor& t);

}  // namespace onnxport::core
