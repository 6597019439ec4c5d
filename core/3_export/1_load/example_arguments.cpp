#include "3_export/1_load/example_arguments.h"

#include <unistd.h>

#include <cstring>
#include <optional>

#include "1_base/npy.h"
#include "1_base/torch_tensors.h"
#include "onnxport/errors.h"
#include "onnxport/export.h"

namespace onnxport::core {

namespace {

// A drawn input must fit in this machine's memory: the shape is checked before allocating.
void check_fits_in_memory(const InputSpec& spec) {
  const uint64_t memory = static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(::sysconf(_SC_PAGE_SIZE));
  uint64_t bytes = dtype_size(spec.dtype);
  for (int64_t d : spec.shape) {
    if (d == 0) return;
    if (bytes > memory / static_cast<uint64_t>(d)) {
      bytes = memory + 1;
      break;
    }
    bytes *= static_cast<uint64_t>(d);
  }
  if (bytes > memory)
    throw ConfigError("--input '" + spec.text() + "': input '" + spec.name + "' would need more than this machine's " +
                          std::to_string(memory >> 30) + " GiB of memory",
                      ErrorContext::with_hint("give the shape the model takes, e.g. 1x3x224x224"));
}

std::string given_text(const InputSpec& spec) {
  switch (spec.kind) {
    case InputSpec::Kind::Tensor: return "a tensor";
    case InputSpec::Kind::None: return "None";
    case InputSpec::Kind::Value: return spec.value_list ? "a list of " + spec.value_type + "s" : "a " + spec.value_type;
    case InputSpec::Kind::Tuple: return "a tuple of " + std::to_string(spec.elements.size());
    case InputSpec::Kind::List: return "a list of " + std::to_string(spec.elements.size());
    case InputSpec::Kind::Dict: return "a dict";
  }
  return "?";
}

// The value type a spec gives an argument of this type as ("int" for int, "float" for float and
// Scalar, "bool", "str"); empty for the types no value spec gives.
std::string value_type_of(const c10::TypePtr& type) {
  switch (type->kind()) {
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType: return "int";
    case c10::TypeKind::FloatType:
    case c10::TypeKind::NumberType: return "float";
    case c10::TypeKind::BoolType: return "bool";
    case c10::TypeKind::StringType: return "str";
    default: return "";
  }
}

// The form of one element of this type, without a name: "SHAPE[:DTYPE]", "int=VALUE", "(E,E)".
std::string element_form(const c10::TypePtr& type) {
  if (const std::string value = value_type_of(type); !value.empty())
    return value + (value == "bool" ? "=1" : value == "str" ? "=TEXT" : "=VALUE");
  switch (type->kind()) {
    case c10::TypeKind::TensorType: return "SHAPE[:DTYPE]";
    case c10::TypeKind::OptionalType: return element_form(type->expectRef<c10::OptionalType>().getElementType());
    case c10::TypeKind::ListType: {
      const auto element = element_form(type->expectRef<c10::ListType>().getElementType());
      return "[" + element + "," + element + "]";
    }
    case c10::TypeKind::TupleType: {
      std::string form = "(";
      const auto& elements = type->expectRef<c10::TupleType>().elements();
      for (size_t i = 0; i < elements.size(); ++i) form += (i ? "," : "") + element_form(elements[i]);
      return form + ")";
    }
    case c10::TypeKind::DictType: return "{KEY:" + element_form(type->expectRef<c10::DictType>().getValueType()) + "}";
    default: return "?";
  }
}

// Numbers and strings from their text (checked by InputSpec::parse).
c10::IValue scalar_value(const std::string& type, const std::string& text) {
  if (type == "int") return static_cast<int64_t>(std::stoll(text));
  if (type == "float") return std::stod(text);
  if (type == "bool") return text == "1" || text == "true";
  return text;
}

class ArgumentMaker {
 public:
  explicit ArgumentMaker(uint64_t seed) : gen_(at::detail::createCPUGenerator(seed)) {}

  at::Tensor tensor(const InputSpec& spec) {
    if (!spec.npy_file.empty()) {
      Tensor t = read_npy(spec.npy_file);
      at::Tensor a = at::empty(t.shape(), at::TensorOptions().dtype(scalar_type_of(t.dtype())));
      if (t.nbytes() > 0) std::memcpy(a.data_ptr(), t.data(), t.nbytes());
      return a;
    }
    check_fits_in_memory(spec);
    auto opts = at::TensorOptions().dtype(scalar_type_of(spec.dtype));
    if (is_floating(spec.dtype) || spec.dtype == DType::Complex64 || spec.dtype == DType::Complex128)
      return at::randn(spec.shape, gen_, opts);  // complex: real and imaginary parts standard normal
    if (spec.dtype == DType::Bool)
      return at::randint(0, 2, spec.shape, gen_, at::TensorOptions().dtype(at::kLong)).to(at::kBool);
    if (spec.int_range) return at::randint(spec.int_range->first, spec.int_range->second + 1, spec.shape, gen_, opts);
    // Small non-negative integers keep index-like inputs (embeddings, gathers) valid.
    return at::randint(0, 8, spec.shape, gen_, opts);
  }

  // What the spec gives, by its own form alone (no schema: a module handed over in C++).
  c10::IValue untyped(const InputSpec& spec) {
    switch (spec.kind) {
      case InputSpec::Kind::Tensor: return tensor(spec);
      case InputSpec::Kind::None: return {};
      case InputSpec::Kind::Value: {
        if (!spec.value_list) return scalar_value(spec.value_type, spec.values[0]);
        std::vector<c10::IValue> items;
        for (const auto& v : spec.values) items.push_back(scalar_value(spec.value_type, v));
        return list_of(std::move(items), scalar_value(spec.value_type, "0").type());
      }
      case InputSpec::Kind::Tuple:
      case InputSpec::Kind::List: {
        std::vector<c10::IValue> items;
        for (const auto& e : spec.elements) items.push_back(untyped(e));
        if (spec.kind == InputSpec::Kind::Tuple) return c10::ivalue::Tuple::create(std::move(items));
        const c10::TypePtr element = items.empty() ? c10::TensorType::get() : items.front().type();
        return list_of(std::move(items), element);
      }
      case InputSpec::Kind::Dict: {
        c10::TypePtr value_type = c10::TensorType::get();
        std::vector<std::pair<std::string, c10::IValue>> items;
        for (const auto& e : spec.elements) items.emplace_back(e.name, untyped(e));
        if (!items.empty()) value_type = items.front().second.type();
        return dict_of(std::move(items), value_type);
      }
    }
    return {};
  }

  // What the spec gives as an argument of `type`; nullopt when it does not fit (the caller says why).
  std::optional<c10::IValue> typed(const InputSpec& spec, const c10::TypePtr& type) {
    using K = c10::TypeKind;
    const bool scalar_value_spec = spec.kind == InputSpec::Kind::Value && !spec.value_list;
    switch (type->kind()) {
      case K::AnyType: return untyped(spec);
      case K::OptionalType:
        if (spec.kind == InputSpec::Kind::None) return c10::IValue();
        return typed(spec, type->expectRef<c10::OptionalType>().getElementType());
      case K::NoneType:
        if (spec.kind == InputSpec::Kind::None) return c10::IValue();
        return std::nullopt;
      case K::UnionType:
        for (const auto& member : type->expectRef<c10::UnionType>().containedTypes())
          if (auto fitted = typed(spec, member)) return fitted;
        return std::nullopt;
      case K::TensorType:
        if (spec.kind == InputSpec::Kind::Tensor) return tensor(spec);
        return std::nullopt;
      case K::IntType:
      case K::SymIntType:
        if (scalar_value_spec && spec.value_type == "int") return untyped(spec);
        return number_from_file(spec, [](const at::Tensor& t) { return !t.is_floating_point() && !t.is_complex() && t.scalar_type() != at::kBool; },
                                [](const at::Tensor& t) { return c10::IValue(t.item<int64_t>()); });
      case K::FloatType:
        if (scalar_value_spec && (spec.value_type == "float" || spec.value_type == "int"))
          return scalar_value("float", spec.values[0]);
        return number_from_file(spec, [](const at::Tensor& t) { return !t.is_complex() && t.scalar_type() != at::kBool; },
                                [](const at::Tensor& t) { return c10::IValue(t.item<double>()); });
      case K::NumberType:
        if (scalar_value_spec && spec.value_type != "str") return untyped(spec);
        return number_from_file(spec, [](const at::Tensor& t) { return !t.is_complex(); },
                                [](const at::Tensor& t) { return c10::IValue(t.item()); });
      case K::BoolType:
        if (scalar_value_spec && spec.value_type == "bool") return untyped(spec);
        return number_from_file(spec, [](const at::Tensor& t) { return t.scalar_type() == at::kBool; },
                                [](const at::Tensor& t) { return c10::IValue(t.item<bool>()); });
      case K::StringType:
        if (scalar_value_spec && spec.value_type == "str") return untyped(spec);
        return std::nullopt;
      case K::ListType: {
        const auto element = type->expectRef<c10::ListType>().getElementType();
        auto items = typed_elements(spec, std::vector<c10::TypePtr>(), element);
        if (!items) return std::nullopt;
        return list_of(std::move(*items), element);
      }
      case K::TupleType: {
        const auto& elements = type->expectRef<c10::TupleType>().elements();
        auto items = typed_elements(spec, std::vector<c10::TypePtr>(elements.begin(), elements.end()), nullptr);
        if (!items) return std::nullopt;
        return c10::ivalue::Tuple::create(std::move(*items));
      }
      case K::DictType: {
        const auto& dict_type = type->expectRef<c10::DictType>();
        if (spec.kind != InputSpec::Kind::Dict || dict_type.getKeyType()->kind() != K::StringType) return std::nullopt;
        std::vector<std::pair<std::string, c10::IValue>> items;
        for (const auto& e : spec.elements) {
          auto value = typed(e, dict_type.getValueType());
          if (!value) return std::nullopt;
          items.emplace_back(e.name, std::move(*value));
        }
        return dict_of(std::move(items), dict_type.getValueType());
      }
      default: return std::nullopt;
    }
  }

 private:
  // A number argument given as a 0-d .npy file of a fitting dtype.
  template <typename Fits, typename Read>
  std::optional<c10::IValue> number_from_file(const InputSpec& spec, Fits fits, Read read) {
    if (spec.kind != InputSpec::Kind::Tensor || spec.npy_file.empty()) return std::nullopt;
    const at::Tensor t = tensor(spec);
    if (t.dim() != 0 || !fits(t)) return std::nullopt;
    return read(t);
  }

  // The elements of a list or tuple spec (or a list of values) typed one by one: each by
  // `types[i]` (a tuple) or all by `all` (a list).
  std::optional<std::vector<c10::IValue>> typed_elements(const InputSpec& spec, const std::vector<c10::TypePtr>& types,
                                                         const c10::TypePtr& all) {
    std::vector<InputSpec> elements = spec.elements;
    if (spec.kind == InputSpec::Kind::Value && spec.value_list) {
      elements.clear();
      for (const auto& v : spec.values) {
        InputSpec one = spec;
        one.value_list = false;
        one.values = {v};
        elements.push_back(std::move(one));
      }
    } else if (spec.kind != InputSpec::Kind::Tuple && spec.kind != InputSpec::Kind::List) {
      return std::nullopt;
    }
    if (!all && elements.size() != types.size()) return std::nullopt;
    std::vector<c10::IValue> items;
    for (size_t i = 0; i < elements.size(); ++i) {
      auto item = typed(elements[i], all ? all : types[i]);
      if (!item) return std::nullopt;
      items.push_back(std::move(*item));
    }
    return items;
  }

  static c10::IValue list_of(std::vector<c10::IValue> items, const c10::TypePtr& element) {
    c10::impl::GenericList list(element);
    for (auto& item : items) list.push_back(std::move(item));
    return list;
  }

  static c10::IValue dict_of(std::vector<std::pair<std::string, c10::IValue>> items, const c10::TypePtr& value) {
    c10::impl::GenericDict dict(c10::StringType::get(), value);
    for (auto& [key, item] : items) dict.insert(key, std::move(item));
    return dict;
  }

  at::Generator gen_;
};

}  // namespace

std::string input_form(const std::string& name, const c10::TypePtr& type) {
  if (type->kind() == c10::TypeKind::OptionalType)
    return input_form(name, type->expectRef<c10::OptionalType>().getElementType()) + " (or " + name + ":none)";
  if (type->kind() == c10::TypeKind::TensorType) return name + ":SHAPE[:DTYPE] or " + name + "=FILE.npy";
  if (type->kind() == c10::TypeKind::ListType) {
    const std::string value = value_type_of(type->expectRef<c10::ListType>().getElementType());
    if (!value.empty()) return name + ":" + value + "[]=V,V";
  }
  return name + ":" + element_form(type);
}

std::vector<torch::jit::IValue> make_example_arguments(const std::vector<InputSpec>& specs, uint64_t seed,
                                                       const c10::FunctionSchema& schema, const std::string& method) {
  ArgumentMaker maker(seed);
  std::vector<torch::jit::IValue> out;
  const auto& arguments = schema.arguments();
  const size_t first = !arguments.empty() && arguments[0].name() == "self" ? 1 : 0;
  std::string declared;  // "x: Tensor, sr: int"
  for (size_t i = first; i < arguments.size(); ++i)
    declared += (declared.empty() ? "" : ", ") + arguments[i].name() + ": " + arguments[i].type()->annotation_str();
  if (first + specs.size() > arguments.size())
    throw ConfigError(method + " takes " + std::to_string(arguments.size() - first) +
                          (arguments.size() - first == 1 ? " argument (" : " arguments (") + declared + "), " +
                          std::to_string(specs.size()) + " --input were given",
                      ErrorContext::with_hint("give one --input per argument, in order"));
  for (size_t k = 0; k < specs.size(); ++k) {
    const auto& argument = arguments[first + k];
    if (auto fitted = maker.typed(specs[k], argument.type())) {
      out.push_back(std::move(*fitted));
      continue;
    }
    throw ConfigError("--input '" + specs[k].text() + "': argument '" + argument.name() + "' of " + method + " is " +
                          argument.type()->annotation_str() + ", the spec gives " + given_text(specs[k]),
                      ErrorContext::with_hint("give it as --input " + input_form(specs[k].name, argument.type())));
  }
  for (size_t i = first + specs.size(); i < arguments.size(); ++i)
    if (!arguments[i].default_value())
      throw ConfigError("no --input for argument '" + arguments[i].name() + "' of " + method + " (" + declared + ")",
                        ErrorContext::with_hint("give it as --input " +
                                                input_form(arguments[i].name(), arguments[i].type())));
  return out;
}

}  // namespace onnxport::core

namespace onnxport {

std::vector<torch::jit::IValue> make_example_inputs(const std::vector<InputSpec>& specs, uint64_t seed) {
  std::vector<torch::jit::IValue> out;
  core::ArgumentMaker maker(seed);
  for (const auto& spec : specs) out.push_back(maker.untyped(spec));
  return out;
}

}  // namespace onnxport
