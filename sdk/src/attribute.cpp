#include "onnxport/attribute.h"

#include "onnxport/errors.h"

namespace onnxport {

const char* AttrValue::kind_name() const {
  switch (kind()) {
    case Kind::Int: return "int";
    case Kind::Ints: return "int list";
    case Kind::Float: return "float";
    case Kind::Floats: return "float list";
    case Kind::String: return "string";
    case Kind::Strings: return "string list";
    case Kind::Tensor: return "tensor";
    case Kind::Tensors: return "tensor list";
    case Kind::Graph: return "sub-graph";
  }
  return "?";
}

ResolvedAttr resolve_attr(const Attr& a) {
  using K = AttrValue::Kind;
  using T = ResolvedAttr::Type;
  const auto pos = a.name.rfind('_');
  const std::string suffix = pos == std::string::npos ? "" : a.name.substr(pos + 1);
  const std::string base = pos == std::string::npos ? a.name : a.name.substr(0, pos);
  auto mismatch = [&](const char* wants) -> AttributeError {
    return AttributeError("attribute '" + a.name + "': suffix _" + suffix + " wants " + wants + ", got a " +
                          a.value.kind_name());
  };
  if (base.empty() || pos == std::string::npos)
    throw AttributeError("attribute '" + a.name + "' has no type suffix",
                         ErrorContext::with_hint("name it like torch.onnx does: alpha_f, axes_i, mode_s, value_t"));
  const K k = a.value.kind();
  if (suffix == "i") {
    if (k == K::Int) return {base, T::Int, a.value};
    if (k == K::Ints) return {base, T::Ints, a.value};
    throw mismatch("an int or int list");
  }
  if (suffix == "f") {
    if (k == K::Float) return {base, T::Float, a.value};
    if (k == K::Floats) return {base, T::Floats, a.value};
    if (k == K::Int) return {base, T::Float, AttrValue(static_cast<double>(a.value.as_int()))};
    if (k == K::Ints) {
      std::vector<double> f(a.value.as_ints().begin(), a.value.as_ints().end());
      return {base, T::Floats, AttrValue(std::move(f))};
    }
    throw mismatch("a float or float list");
  }
  if (suffix == "s") {
    if (k == K::String) return {base, T::String, a.value};
    if (k == K::Strings) return {base, T::Strings, a.value};
    throw mismatch("a string or string list");
  }
  if (suffix == "t") {
    if (k == K::Tensor) return {base, T::Tensor, a.value};
    if (k == K::Tensors) return {base, T::Tensors, a.value};
    throw mismatch("a tensor or tensor list");
  }
  if (suffix == "g") {
    if (k == K::Graph) return {base, T::Graph, a.value};
    throw mismatch("a Subgraph");
  }
  throw AttributeError(
      "attribute '" + a.name + "' has unknown type suffix _" + suffix,
      ErrorContext::with_hint(
          "use _i (int/ints), _f (float/floats), _s (string/strings), _t (tensor/tensors), _g (Subgraph)"));
}

}  // namespace onnxport
