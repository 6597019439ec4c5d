#include "onnxport/types.h"

namespace onnxport {

std::string Dim::str() const {
  switch (kind) {
    case Kind::Static: return std::to_string(value);
    case Kind::Symbolic: return symbol;
    case Kind::Unknown: break;
  }
  return "?";
}

std::optional<int64_t> TensorType::rank() const {
  if (!shape) return std::nullopt;
  return static_cast<int64_t>(shape->size());
}

std::optional<std::vector<int64_t>> TensorType::static_shape() const {
  if (!shape) return std::nullopt;
  std::vector<int64_t> out;
  for (const Dim& d : *shape) {
    if (!d.is_static()) return std::nullopt;
    out.push_back(d.value);
  }
  return out;
}

std::string TensorType::str() const {
  std::string s = dtype_name(dtype);
  if (!shape) return s + "[*]";
  s += "[";
  for (size_t i = 0; i < shape->size(); ++i) s += (i ? "," : "") + (*shape)[i].str();
  return s + "]";
}

}  // namespace onnxport
