#pragma once
// An immutable n-d buffer: constant payloads, attribute tensors and initializers.
// It either owns its bytes or borrows them from the host (e.g. a frozen parameter) with a
// keep-alive handle, so parameters reach the output file without being copied.
#include <memory>
#include <vector>

#include "onnxport/dtype.h"

namespace onnxport {

class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, std::vector<int64_t> shape, std::vector<uint8_t> bytes);
  static Tensor borrowed(DType dtype, std::vector<int64_t> shape, const void* data, size_t nbytes,
                         std::shared_ptr<const void> keepalive);

  // 0-d and 1-d constructors for the common constant kinds.
  static Tensor scalar_int64(int64_t v);
  static Tensor scalar_float(float v);
  static Tensor scalar_double(double v);
  static Tensor scalar_bool(bool v);
  static Tensor ints(const std::vector<int64_t>& v);  // 1-d int64
  // int64 of `shape`, `v` in row-major order (as many values as the shape holds).
  static Tensor ints(const std::vector<int64_t>& v, std::vector<int64_t> shape);
  static Tensor floats(const std::vector<float>& v);  // 1-d float32
  static Tensor scalar_of(DType dtype, double v);     // 0-d of any numeric dtype

  bool defined() const { return dtype_ != DType::Undefined; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const;
  size_t nbytes() const { return nbytes_; }
  const void* data() const { return data_; }

  // Element values converted to int64 / double (any integer, bool or floating dtype).
  // Throw ArgumentError for String/complex payloads.
  std::vector<int64_t> as_int64s() const;
  std::vector<double> as_doubles() const;

  std::string describe() const;  // "int64[2]", "float32[]"

 private:
  DType dtype_ = DType::Undefined;
  std::vector<int64_t> shape_;
  std::shared_ptr<const void> storage_;
  const void* data_ = nullptr;
  size_t nbytes_ = 0;
};

}  // namespace onnxport
