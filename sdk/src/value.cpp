#include "onnxport/value.h"

#include <sstream>

namespace onnxport {

Value::~Value() = default;

namespace {
// A tensor payload with exactly one element reads as a scalar.
const Tensor* single_element(const Value::Constant& c) {
  const auto* t = std::get_if<Tensor>(&c);
  return t && t->numel() == 1 && t->rank() <= 1 ? t : nullptr;
}
}  // namespace

std::optional<int64_t> Value::maybe_int() const {
  if (auto* v = std::get_if<int64_t>(&constant_)) return *v;
  if (auto* v = std::get_if<bool>(&constant_)) return *v ? 1 : 0;
  if (const Tensor* t = single_element(constant_))
    if (is_integral(t->dtype()) || t->dtype() == DType::Bool) return t->as_int64s()[0];
  return std::nullopt;
}

std::optional<double> Value::maybe_float() const {
  if (auto* v = std::get_if<double>(&constant_)) return *v;
  if (auto* v = std::get_if<int64_t>(&constant_)) return static_cast<double>(*v);
  if (const Tensor* t = single_element(constant_))
    if (is_floating(t->dtype()) || is_integral(t->dtype())) return t->as_doubles()[0];
  return std::nullopt;
}

std::optional<bool> Value::maybe_bool() const {
  if (auto* v = std::get_if<bool>(&constant_)) return *v;
  if (auto* v = std::get_if<int64_t>(&constant_)) return *v != 0;
  if (const Tensor* t = single_element(constant_))
    if (t->dtype() == DType::Bool || is_integral(t->dtype())) return t->as_int64s()[0] != 0;
  return std::nullopt;
}

std::optional<std::string> Value::maybe_string() const {
  if (auto* v = std::get_if<std::string>(&constant_)) return *v;
  return std::nullopt;
}

std::optional<std::vector<int64_t>> Value::maybe_ints() const {
  if (auto* v = std::get_if<std::vector<int64_t>>(&constant_)) return *v;
  if (auto* t = std::get_if<Tensor>(&constant_))
    if (t->rank() == 1 && is_integral(t->dtype())) return t->as_int64s();
  if (kind_ == Kind::List) {
    std::vector<int64_t> out;
    for (const Value* e : elements_) {
      auto i = e->maybe_int();
      if (!i) return std::nullopt;
      out.push_back(*i);
    }
    return out;
  }
  return std::nullopt;
}

std::optional<std::vector<double>> Value::maybe_floats() const {
  if (auto* v = std::get_if<std::vector<double>>(&constant_)) return *v;
  if (auto* v = std::get_if<std::vector<int64_t>>(&constant_)) return std::vector<double>(v->begin(), v->end());
  if (auto* t = std::get_if<Tensor>(&constant_))
    if (t->rank() == 1 && (is_floating(t->dtype()) || is_integral(t->dtype()))) return t->as_doubles();
  if (kind_ == Kind::List) {
    std::vector<double> out;
    for (const Value* e : elements_) {
      auto f = e->maybe_float();
      if (!f) return std::nullopt;
      out.push_back(*f);
    }
    return out;
  }
  return std::nullopt;
}

const Tensor* Value::maybe_tensor() const { return std::get_if<Tensor>(&constant_); }

std::string Value::describe() const {
  std::ostringstream os;
  if (kind_ == Kind::None) return "None";
  if (kind_ == Kind::Sequence) return "sequence of " + type_.str() + (name_.empty() ? "" : " '" + name_ + "'");
  if (kind_ == Kind::Optional) return "optional " + type_.str() + (name_.empty() ? "" : " '" + name_ + "'");
  if (kind_ == Kind::List) {
    os << "list of " << elements_.size();
    if (auto ints = maybe_ints()) {
      os << " ints [";
      for (size_t i = 0; i < ints->size(); ++i) os << (i ? "," : "") << (*ints)[i];
      os << "]";
    }
    return os.str();
  }
  struct Describe {
    std::ostringstream& os;
    void operator()(std::monostate) {}
    void operator()(int64_t v) { os << "constant int " << v; }
    void operator()(double v) { os << "constant float " << v; }
    void operator()(bool v) { os << "constant bool " << (v ? "true" : "false"); }
    void operator()(const std::string& v) { os << "constant string '" << v << "'"; }
    void operator()(const std::vector<int64_t>& v) { os << "constant int list of " << v.size(); }
    void operator()(const std::vector<double>& v) { os << "constant float list of " << v.size(); }
    void operator()(const Tensor& t) { os << "constant tensor " << t.describe(); }
  };
  if (is_constant()) {
    std::visit(Describe{os}, constant_);
    return os.str();
  }
  os << (scalar_ ? "scalar " : "tensor ") << type_.str();
  if (!name_.empty()) os << " '" << name_ << "'";
  return os.str();
}

}  // namespace onnxport
