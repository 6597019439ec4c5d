#pragma once
// Tensor types as symbolics see them: dtype plus a shape whose dims are static, symbolic
// (named, e.g. from dynamic_axes) or unknown. Rank itself may be unknown.
#include <optional>
#include <string>
#include <vector>

#include "onnxport/dtype.h"

namespace onnxport {

struct Dim {
  enum class Kind { Unknown, Static, Symbolic };
  Kind kind = Kind::Unknown;
  int64_t value = -1;  // valid when Static
  std::string symbol;  // valid when Symbolic

  static Dim fixed(int64_t v) { return Dim{Kind::Static, v, {}}; }
  static Dim named(std::string s) { return Dim{Kind::Symbolic, -1, std::move(s)}; }
  static Dim unknown() { return Dim{}; }
  bool is_static() const { return kind == Kind::Static; }
  std::string str() const;  // "3", "batch", "?"
  bool operator==(const Dim& o) const { return kind == o.kind && value == o.value && symbol == o.symbol; }
};

struct TensorType {
  DType dtype = DType::Undefined;
  std::optional<std::vector<Dim>> shape;  // nullopt: rank unknown

  bool has_rank() const { return shape.has_value(); }
  std::optional<int64_t> rank() const;
  // All dims static -> their values.
  std::optional<std::vector<int64_t>> static_shape() const;
  std::string str() const;  // "float32[1,3,batch,?]", "int64[]", "float32[*]" (unknown rank)
};

}  // namespace onnxport
