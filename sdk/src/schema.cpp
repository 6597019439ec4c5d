#include "onnxport/schema.h"

#include <set>

#include "onnxport/errors.h"

namespace onnxport {

const ResolvedAttr* SchemaInferenceInput::attribute(const std::string& name) const {
  for (const auto& a : attributes)
    if (a.name == name) return &a;
  return nullptr;
}

CustomOpSchema::CustomOpSchema(std::string domain, std::string name, int since_version)
    : domain_(std::move(domain)), name_(std::move(name)), since_version_(since_version) {}

CustomOpSchema& CustomOpSchema::doc(std::string text) {
  doc_ = std::move(text);
  return *this;
}

CustomOpSchema& CustomOpSchema::input(std::string name, std::string type, Arity arity, std::string doc) {
  inputs_.push_back(Param{std::move(name), std::move(type), arity, std::move(doc)});
  return *this;
}

CustomOpSchema& CustomOpSchema::output(std::string name, std::string type, Arity arity, std::string doc) {
  outputs_.push_back(Param{std::move(name), std::move(type), arity, std::move(doc)});
  return *this;
}

CustomOpSchema& CustomOpSchema::type_constraint(std::string param, std::vector<DType> allowed, std::string doc) {
  constraints_.push_back(TypeConstraint{std::move(param), std::move(allowed), std::move(doc)});
  return *this;
}

CustomOpSchema& CustomOpSchema::required_attribute(std::string name, AttrType type, std::string doc) {
  attributes_.push_back(Attribute{std::move(name), type, true, std::nullopt, std::move(doc)});
  return *this;
}

namespace {
// The default converted to `type` (an int default for a float attribute becomes a float), or
// nullopt when its kind does not fit.
std::optional<AttrValue> fit_default(const AttrValue& v, AttrType type) {
  using K = AttrValue::Kind;
  switch (type) {
    case AttrType::Int:
      if (v.kind() == K::Int) return v;
      break;
    case AttrType::Ints:
      if (v.kind() == K::Ints) return v;
      break;
    case AttrType::Float:
      if (v.kind() == K::Float) return v;
      if (v.kind() == K::Int) return AttrValue(static_cast<double>(v.as_int()));
      break;
    case AttrType::Floats:
      if (v.kind() == K::Floats) return v;
      if (v.kind() == K::Ints) return AttrValue(std::vector<double>(v.as_ints().begin(), v.as_ints().end()));
      break;
    case AttrType::String:
      if (v.kind() == K::String) return v;
      break;
    case AttrType::Strings:
      if (v.kind() == K::Strings) return v;
      break;
    case AttrType::Tensor:
      if (v.kind() == K::Tensor) return v;
      break;
    case AttrType::Tensors:
      if (v.kind() == K::Tensors) return v;
      break;
    case AttrType::Graph: break;  // sub-graph attributes have no default
  }
  return std::nullopt;
}
}  // namespace

CustomOpSchema& CustomOpSchema::attribute(std::string name, AttrType type, AttrValue default_value, std::string doc) {
  std::optional<AttrValue> fitted = fit_default(default_value, type);
  if (!fitted)
    throw RegistryError("schema " + key() + ": the default of attribute '" + name + "' is a " +
                        default_value.kind_name() + ", which does not fit the attribute's type");
  attributes_.push_back(Attribute{std::move(name), type, false, std::move(fitted), std::move(doc)});
  return *this;
}

CustomOpSchema& CustomOpSchema::optional_attribute(std::string name, AttrType type, std::string doc) {
  attributes_.push_back(Attribute{std::move(name), type, false, std::nullopt, std::move(doc)});
  return *this;
}

CustomOpSchema& CustomOpSchema::output_like_input(int output, int input) {
  if (shape_rule_.kind == ShapeRule::Kind::Callback)
    throw RegistryError("schema " + key() + ": output_like_input and infer cannot be combined");
  shape_rule_.kind = ShapeRule::Kind::OutputLikeInput;
  shape_rule_.like.emplace_back(output, input);
  return *this;
}

CustomOpSchema& CustomOpSchema::infer(SchemaInferenceFn fn) {
  if (shape_rule_.kind == ShapeRule::Kind::OutputLikeInput)
    throw RegistryError("schema " + key() + ": output_like_input and infer cannot be combined");
  if (!fn) throw RegistryError("schema " + key() + ": empty inference callback");
  shape_rule_.kind = ShapeRule::Kind::Callback;
  shape_rule_.fn = std::move(fn);
  return *this;
}

std::string CustomOpSchema::key() const {
  return domain_ + "::" + name_ + " (since version " + std::to_string(since_version_) + ")";
}

namespace {
bool is_fixed_type(const std::string& type) { return type.rfind("tensor(", 0) == 0 || type.rfind("seq(", 0) == 0; }
}  // namespace

void CustomOpSchema::validate() const {
  auto fail = [&](const std::string& what) { throw RegistryError("schema " + key() + ": " + what); };
  if (domain_.empty() || domain_ == "ai.onnx") fail("schemas are for custom domains, not the standard ONNX domain");
  if (name_.empty()) fail("empty op name");
  if (since_version_ < 1) fail("since_version must be >= 1");

  std::set<std::string> constrained;
  for (const auto& c : constraints_) {
    if (!constrained.insert(c.param).second) fail("type parameter '" + c.param + "' is constrained twice");
    if (c.allowed.empty()) fail("type parameter '" + c.param + "' allows no types");
    for (DType t : c.allowed)
      if (t == DType::Undefined) fail("type parameter '" + c.param + "' allows DType::Undefined");
  }
  std::set<std::string> used;
  auto check_params = [&](const std::vector<Param>& params, const char* what) {
    std::set<std::string> names;
    for (size_t i = 0; i < params.size(); ++i) {
      const Param& p = params[i];
      const std::string where = std::string(what) + " '" + p.name + "'";
      if (p.name.empty()) fail(std::string(what) + " " + std::to_string(i) + " has no name");
      if (!names.insert(p.name).second) fail(where + " is declared twice");
      if (is_fixed_type(p.type)) {
        // a fixed type: ONNX checks its spelling when the schema is registered
      } else if (!constrained.count(p.type)) {
        fail(where + " has type '" + p.type +
             "', which is neither a tensor(...) type nor a constrained type parameter" + " (add .type_constraint(\"" +
             p.type + "\", {...}))");
      } else {
        used.insert(p.type);
      }
      if (p.arity == Arity::Variadic && i + 1 != params.size()) fail(where + " is variadic but not the last");
    }
  };
  check_params(inputs_, "input");
  check_params(outputs_, "output");
  if (outputs_.empty()) fail("an op needs at least one output");
  for (const auto& c : constraints_)
    if (!used.count(c.param)) fail("type parameter '" + c.param + "' is constrained but no input or output uses it");

  std::set<std::string> attribute_names;
  for (const auto& a : attributes_) {
    if (a.name.empty()) fail("an attribute has no name");
    if (!attribute_names.insert(a.name).second) fail("attribute '" + a.name + "' is declared twice");
  }
  for (const auto& [out, in] : shape_rule_.like) {
    if (out < 0 || out >= static_cast<int>(outputs_.size()))
      fail("output_like_input: there is no output " + std::to_string(out));
    if (in < 0 || in >= static_cast<int>(inputs_.size()))
      fail("output_like_input: there is no input " + std::to_string(in));
  }
}

}  // namespace onnxport
