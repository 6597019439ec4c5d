#include "onnxport/tensor.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "onnxport/errors.h"

namespace onnxport {

namespace {
std::shared_ptr<const void> own_bytes(std::vector<uint8_t> bytes) {
  return std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
}

template <class T>
Tensor from_values(DType dtype, std::vector<int64_t> shape, const T* values, size_t n) {
  std::vector<uint8_t> bytes(n * sizeof(T));
  if (n) std::memcpy(bytes.data(), values, bytes.size());
  return Tensor(dtype, std::move(shape), std::move(bytes));
}

template <class Out>
std::vector<Out> convert_elements(const Tensor& t) {
  const int64_t n = t.numel();
  std::vector<Out> out(static_cast<size_t>(n));
  const auto* p = static_cast<const uint8_t*>(t.data());
  for (int64_t i = 0; i < n; ++i) {
    Out v{};
    switch (t.dtype()) {
      case DType::Float: {
        float x;
        std::memcpy(&x, p + i * 4, 4);
        v = static_cast<Out>(x);
        break;
      }
      case DType::Double: {
        double x;
        std::memcpy(&x, p + i * 8, 8);
        v = static_cast<Out>(x);
        break;
      }
      case DType::Int64: {
        int64_t x;
        std::memcpy(&x, p + i * 8, 8);
        v = static_cast<Out>(x);
        break;
      }
      case DType::Int32: {
        int32_t x;
        std::memcpy(&x, p + i * 4, 4);
        v = static_cast<Out>(x);
        break;
      }
      case DType::Int16: {
        int16_t x;
        std::memcpy(&x, p + i * 2, 2);
        v = static_cast<Out>(x);
        break;
      }
      case DType::Int8: {
        int8_t x;
        std::memcpy(&x, p + i, 1);
        v = static_cast<Out>(x);
        break;
      }
      case DType::UInt8:
      case DType::Bool: v = static_cast<Out>(p[i]); break;
      case DType::UInt16: {
        uint16_t x;
        std::memcpy(&x, p + i * 2, 2);
        v = static_cast<Out>(x);
        break;
      }
      case DType::UInt32: {
        uint32_t x;
        std::memcpy(&x, p + i * 4, 4);
        v = static_cast<Out>(x);
        break;
      }
      case DType::UInt64: {
        uint64_t x;
        std::memcpy(&x, p + i * 8, 8);
        v = static_cast<Out>(x);
        break;
      }
      default:
        throw ArgumentError(std::string("cannot read elements of a ") + dtype_name(t.dtype()) + " tensor as numbers");
    }
    out[static_cast<size_t>(i)] = v;
  }
  return out;
}
}  // namespace

Tensor::Tensor(DType dtype, std::vector<int64_t> shape, std::vector<uint8_t> bytes)
    : dtype_(dtype), shape_(std::move(shape)), nbytes_(bytes.size()) {
  const size_t expected = static_cast<size_t>(numel()) * dtype_size(dtype);
  if (dtype != DType::String && expected != nbytes_)
    throw ArgumentError("tensor " + describe() + " needs " + std::to_string(expected) + " bytes, got " +
                        std::to_string(nbytes_));
  storage_ = own_bytes(std::move(bytes));
  data_ = static_cast<const std::vector<uint8_t>*>(storage_.get())->data();
}

Tensor Tensor::borrowed(DType dtype, std::vector<int64_t> shape, const void* data, size_t nbytes,
                        std::shared_ptr<const void> keepalive) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.storage_ = std::move(keepalive);
  t.data_ = data;
  t.nbytes_ = nbytes;
  return t;
}

Tensor Tensor::scalar_int64(int64_t v) { return from_values(DType::Int64, {}, &v, 1); }
Tensor Tensor::scalar_float(float v) { return from_values(DType::Float, {}, &v, 1); }
Tensor Tensor::scalar_double(double v) { return from_values(DType::Double, {}, &v, 1); }
Tensor Tensor::scalar_bool(bool v) {
  uint8_t b = v ? 1 : 0;
  return from_values(DType::Bool, {}, &b, 1);
}
Tensor Tensor::ints(const std::vector<int64_t>& v) {
  return from_values(DType::Int64, {static_cast<int64_t>(v.size())}, v.data(), v.size());
}
Tensor Tensor::ints(const std::vector<int64_t>& v, std::vector<int64_t> shape) {
  return from_values(DType::Int64, std::move(shape), v.data(), v.size());
}
Tensor Tensor::floats(const std::vector<float>& v) {
  return from_values(DType::Float, {static_cast<int64_t>(v.size())}, v.data(), v.size());
}

Tensor Tensor::scalar_of(DType dtype, double v) {
  switch (dtype) {
    case DType::Float: return scalar_float(static_cast<float>(v));
    case DType::Double: return scalar_double(v);
    case DType::Int64: return scalar_int64(static_cast<int64_t>(v));
    case DType::Int32: {
      int32_t x = static_cast<int32_t>(v);
      return from_values(dtype, {}, &x, 1);
    }
    case DType::Int16: {
      int16_t x = static_cast<int16_t>(v);
      return from_values(dtype, {}, &x, 1);
    }
    case DType::Int8: {
      int8_t x = static_cast<int8_t>(v);
      return from_values(dtype, {}, &x, 1);
    }
    case DType::UInt8: {
      uint8_t x = static_cast<uint8_t>(v);
      return from_values(dtype, {}, &x, 1);
    }
    case DType::Bool: return scalar_bool(v != 0.0);
    case DType::Float16: {
      // IEEE half by rounding through float: enough for constants like 0.5, 1e-5.
      float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      uint32_t sign = (bits >> 16) & 0x8000u;
      int32_t exp = static_cast<int32_t>((bits >> 23) & 0xff) - 127 + 15;
      uint32_t mant = bits & 0x7fffffu;
      uint16_t h;
      if (exp <= 0)
        h = static_cast<uint16_t>(sign);
      else if (exp >= 31)
        h = static_cast<uint16_t>(sign | 0x7c00u);
      else
        h = static_cast<uint16_t>(sign | (static_cast<uint32_t>(exp) << 10) | ((mant + 0x1000u) >> 13));
      return from_values(dtype, {}, &h, 1);
    }
    case DType::BFloat16: {
      // The float's upper 16 bits, rounded to nearest even; NaN stays a (quiet) NaN.
      float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      const uint16_t b = std::isnan(f) ? uint16_t{0x7fc0}
                                       : static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
      return from_values(dtype, {}, &b, 1);
    }
    default: throw ArgumentError(std::string("cannot make a scalar constant of dtype ") + dtype_name(dtype));
  }
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

std::vector<int64_t> Tensor::as_int64s() const { return convert_elements<int64_t>(*this); }
std::vector<double> Tensor::as_doubles() const { return convert_elements<double>(*this); }

std::string Tensor::describe() const {
  std::ostringstream os;
  os << dtype_name(dtype_) << "[";
  for (size_t i = 0; i < shape_.size(); ++i) os << (i ? "," : "") << shape_[i];
  os << "]";
  return os.str();
}

}  // namespace onnxport
