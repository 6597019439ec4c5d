#pragma once
// Element types. The numbering is ONNX's TensorProto::DataType, so a DType converts to the
// wire value with a static_cast and no table.
#include <cstddef>
#include <cstdint>
#include <string>

namespace onnxport {

enum class DType : int32_t {
  Undefined = 0,
  Float = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
};

const char* dtype_name(DType t);  // "float32", "int64", ...
size_t dtype_size(DType t);       // bytes per element; 0 for String/Undefined
bool is_floating(DType t);        // Float16, BFloat16, Float, Double
bool is_integral(DType t);        // signed/unsigned integers (not Bool)
DType dtype_from_name(
    const std::string& name);  // accepts dtype_name() spellings and "float"/"long"/...; throws ArgumentError

}  // namespace onnxport
