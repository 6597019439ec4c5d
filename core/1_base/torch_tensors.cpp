#include "1_base/torch_tensors.h"

#include <memory>

#include "onnxport/errors.h"

namespace onnxport::core {

DType dtype_of(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return DType::Float;
    case at::kDouble: return DType::Double;
    case at::kHalf: return DType::Float16;
    case at::kBFloat16: return DType::BFloat16;
    case at::kLong: return DType::Int64;
    case at::kInt: return DType::Int32;
    case at::kShort: return DType::Int16;
    case at::kChar: return DType::Int8;
    case at::kByte: return DType::UInt8;
    case at::kBool: return DType::Bool;
    case at::kComplexFloat: return DType::Complex64;
    case at::kComplexDouble: return DType::Complex128;
    default: return DType::Undefined;
  }
}

at::ScalarType scalar_type_of(DType t) {
  switch (t) {
    case DType::Float: return at::kFloat;
    case DType::Double: return at::kDouble;
    case DType::Float16: return at::kHalf;
    case DType::BFloat16: return at::kBFloat16;
    case DType::Int64: return at::kLong;
    case DType::Int32: return at::kInt;
    case DType::Int16: return at::kShort;
    case DType::Int8: return at::kChar;
    case DType::UInt8: return at::kByte;
    case DType::Bool: return at::kBool;
    case DType::Complex64: return at::kComplexFloat;
    case DType::Complex128: return at::kComplexDouble;
    default: throw ExportError(std::string("no torch dtype for ") + dtype_name(t));
  }
}

Tensor borrow_tensor(const at::Tensor& tensor) {
  at::Tensor t = tensor.detach();
  if (!t.is_contiguous()) t = t.contiguous();
  const DType dtype = dtype_of(t.scalar_type());
  if (dtype == DType::Undefined)
    throw ExportError(std::string("tensors of type ") + c10::toString(t.scalar_type()) + " cannot be exported");
  auto keepalive = std::make_shared<at::Tensor>(t);
  return Tensor::borrowed(dtype, t.sizes().vec(), t.data_ptr(), t.nbytes(),
                          std::shared_ptr<const void>(keepalive, keepalive.get()));
}

at::Tensor to_aten(const Tensor& t) {
  // The view shares the tensor's bytes and keeps them alive for as long as it (or any view or
  // result aliasing it) lives, so evaluator results can be kept without copying.
  auto source = std::make_shared<Tensor>(t);
  return at::from_blob(
      const_cast<void*>(t.data()), t.shape(), [source](void*) {}, at::TensorOptions().dtype(scalar_type_of(t.dtype())));
}

}  // namespace onnxport::core
