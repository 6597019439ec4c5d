#include "onnxport/dtype.h"

#include <map>

#include "onnxport/errors.h"

namespace onnxport {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float: return "float32";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::UInt16: return "uint16";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::String: return "string";
    case DType::Bool: return "bool";
    case DType::Float16: return "float16";
    case DType::Double: return "float64";
    case DType::UInt32: return "uint32";
    case DType::UInt64: return "uint64";
    case DType::Complex64: return "complex64";
    case DType::Complex128: return "complex128";
    case DType::BFloat16: return "bfloat16";
    case DType::Undefined: break;
  }
  return "undefined";
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::Bool:
    case DType::UInt8:
    case DType::Int8: return 1;
    case DType::UInt16:
    case DType::Int16:
    case DType::Float16:
    case DType::BFloat16: return 2;
    case DType::Int32:
    case DType::UInt32:
    case DType::Float: return 4;
    case DType::Int64:
    case DType::UInt64:
    case DType::Double:
    case DType::Complex64: return 8;
    case DType::Complex128: return 16;
    case DType::String:
    case DType::Undefined: break;
  }
  return 0;
}

bool is_floating(DType t) {
  return t == DType::Float || t == DType::Double || t == DType::Float16 || t == DType::BFloat16;
}

bool is_integral(DType t) {
  switch (t) {
    case DType::UInt8:
    case DType::Int8:
    case DType::UInt16:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
    case DType::UInt32:
    case DType::UInt64: return true;
    default: return false;
  }
}

DType dtype_from_name(const std::string& name) {
  static const std::map<std::string, DType> names = {
      {"float32", DType::Float}, {"float", DType::Float},       {"f32", DType::Float},       {"float64", DType::Double},
      {"double", DType::Double}, {"f64", DType::Double},        {"float16", DType::Float16}, {"half", DType::Float16},
      {"f16", DType::Float16},   {"bfloat16", DType::BFloat16}, {"int64", DType::Int64},     {"long", DType::Int64},
      {"i64", DType::Int64},     {"int32", DType::Int32},       {"int", DType::Int32},       {"i32", DType::Int32},
      {"int16", DType::Int16},   {"int8", DType::Int8},         {"uint8", DType::UInt8},     {"uint16", DType::UInt16},
      {"uint32", DType::UInt32}, {"uint64", DType::UInt64},     {"bool", DType::Bool},
  };
  auto it = names.find(name);
  if (it == names.end())
    throw ArgumentError(
        "unknown dtype '" + name + "'",
        ErrorContext::with_hint("use one of float32, float64, float16, int64, int32, int8, uint8, bool"));
  return it->second;
}

}  // namespace onnxport
