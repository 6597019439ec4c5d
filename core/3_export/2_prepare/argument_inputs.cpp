#include "3_export/2_prepare/argument_inputs.h"

#include <cctype>

#include "onnxport/errors.h"

namespace onnxport::core {

namespace {

bool holds_tensor(const c10::IValue& v) {
  if (v.isTensor()) return true;
  if (v.isTuple())
    for (const auto& e : v.toTupleRef().elements())
      if (holds_tensor(e)) return true;
  if (v.isList())
    for (const auto& e : v.toListRef())
      if (holds_tensor(e)) return true;
  if (v.isGenericDict())
    for (const auto& entry : v.toGenericDict())
      if (holds_tensor(entry.value())) return true;
  return false;
}

bool is_number(const c10::IValue& v) { return v.isInt() || v.isDouble() || v.isBool(); }

// TorchScript takes a name's ".N" ending as its own uniquing suffix.
std::string debug_name(std::string name) {
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

// Replaces graph inputs by the leaves of their example values, at `position` onwards.
class ArgumentFlattener {
 public:
  ArgumentFlattener(torch::jit::Graph& graph, bool dynamic_numbers)
      : graph_(graph), dynamic_numbers_(dynamic_numbers), first_node_(graph.block()->nodes().front()) {}

  // The value standing for `v` in the graph: a new input for a tensor (or a kept number), a
  // constant for what holds no tensor, or the construct of its elements.
  torch::jit::Value* leaf_or_construct(const c10::IValue& v, const c10::TypePtr& declared, const std::string& name) {
    if (v.isTensor() || (dynamic_numbers_ && is_number(v))) {
      torch::jit::Value* input = graph_.insertInput(position_++);
      input->setDebugName(debug_name(name));
      input->setType(v.isTensor() ? c10::TypePtr(c10::TensorType::get()) : v.type());
      leaves_.push_back(v);
      names_.push_back(name);
      return input;
    }
    torch::jit::WithInsertPoint at(first_node_);
    if (!holds_tensor(v)) {
      if (auto constant = torch::jit::tryInsertConstant(graph_, v)) return *constant;
      throw ConfigError("--input '" + name + "': onnxport cannot make a " + v.type()->annotation_str() +
                            " a constant of the graph",
                        ErrorContext::with_hint("give it as a tensor, a number, a string, None, or a tuple, list or "
                                                "dict of them"));
    }
    const c10::TypePtr type = unoptional(declared);
    std::vector<torch::jit::Value*> elements;
    if (v.isTuple()) {
      const auto& items = v.toTupleRef().elements();
      auto tuple = type->cast<c10::TupleType>();
      for (size_t i = 0; i < items.size(); ++i)
        elements.push_back(leaf_or_construct(items[i], tuple ? tuple->elements().at(i) : items[i].type(),
                                             name + "." + std::to_string(i)));
      return graph_.insertNode(graph_.createTuple(elements))->output();
    }
    if (v.isList()) {
      const auto items = v.toListRef();
      auto list = type->cast<c10::ListType>();
      const c10::TypePtr element = list ? list->getElementType() : c10::TensorType::get();
      for (size_t i = 0; i < items.size(); ++i)
        elements.push_back(leaf_or_construct(items[i], element, name + "." + std::to_string(i)));
      return graph_.insertNode(graph_.createList(element, elements))->output();
    }
    auto dict_type = type->cast<c10::DictType>();
    const c10::TypePtr value_type = dict_type ? dict_type->getValueType() : c10::TensorType::get();
    std::vector<torch::jit::Value*> keys;
    for (const auto& entry : v.toGenericDict()) {
      keys.push_back(graph_.insertConstant(entry.key()));
      elements.push_back(leaf_or_construct(entry.value(), value_type, name + "." + entry.key().toStringRef()));
    }
    torch::jit::Node* dict = graph_.insertNode(graph_.createDict(c10::StringType::get(), value_type, keys, elements));
    dicts_.push_back(dict);
    return dict->output();
  }

  // d["key"] of the dict made here is the value given for "key" (the interpreter would otherwise
  // look it up at run time, and no ONNX op takes a dict). Only when every use is such a read: a
  // dict the graph writes to, iterates or passes on keeps its lookups.
  void fold_constant_key_reads() {
    for (torch::jit::Node* dict : dicts_) fold_constant_key_reads(dict);
    dicts_.clear();
  }

  static void fold_constant_key_reads(torch::jit::Node* dict) {
    for (const auto& use : dict->output()->uses())
      if (use.user->kind() != c10::aten::__getitem__) return;
    for (const auto& use : std::vector<torch::jit::Use>(dict->output()->uses())) {
      torch::jit::Node* read = use.user;
      if (read->kind() != c10::aten::__getitem__ || read->inputs().size() != 2) continue;
      const auto key = torch::jit::toIValue(read->input(1));
      if (!key || !key->isString()) continue;
      for (size_t i = 0; i + 1 < dict->inputs().size(); i += 2)
        if (torch::jit::toIValue(dict->input(i))->toStringRef() == key->toStringRef()) {
          read->output()->replaceAllUsesWith(dict->input(i + 1));
          read->destroy();
          break;
        }
    }
  }

  void at(size_t position) { position_ = position; }
  size_t position() const { return position_; }
  std::vector<c10::IValue>& leaves() { return leaves_; }
  std::vector<std::string>& names() { return names_; }

 private:
  static c10::TypePtr unoptional(const c10::TypePtr& t) {
    if (auto optional = t->cast<c10::OptionalType>()) return optional->getElementType();
    return t;
  }

  torch::jit::Graph& graph_;
  const bool dynamic_numbers_;
  torch::jit::Node* first_node_;
  size_t position_ = 0;
  std::vector<c10::IValue> leaves_;
  std::vector<std::string> names_;
  std::vector<torch::jit::Node*> dicts_;
};

}  // namespace

void flatten_whole_arguments(torch::jit::Graph& graph, std::vector<torch::jit::IValue>& inputs, size_t self_inputs,
                             const std::vector<InputSpec>& specs, bool dynamic_numbers,
                             std::vector<std::string>& names) {
  ArgumentFlattener flattener(graph, dynamic_numbers);
  flattener.at(self_inputs);
  for (size_t k = 0; k < inputs.size() && flattener.position() < graph.inputs().size(); ++k) {
    const std::string name = k < specs.size() ? specs[k].name : "input_" + std::to_string(k);
    const size_t position = flattener.position();
    torch::jit::Value* original = graph.inputs()[position];
    if (inputs[k].isTensor() || (dynamic_numbers && is_number(inputs[k]))) {  // stays as it is
      if (is_number(inputs[k])) original->setType(inputs[k].type());  // an Optional[int], a Scalar: its value's
      flattener.leaves().push_back(inputs[k]);
      flattener.names().push_back(k < specs.size() ? specs[k].name : "");
      flattener.at(position + 1);
      continue;
    }
    torch::jit::Value* replacement = flattener.leaf_or_construct(inputs[k], original->type(), name);
    // The new inputs went in before the original, which has moved past them.
    torch::jit::Value* moved = graph.inputs()[flattener.position()];
    moved->replaceAllUsesWith(replacement);
    graph.eraseInput(flattener.position());
    flattener.fold_constant_key_reads();
  }
  inputs = std::move(flattener.leaves());
  names = std::move(flattener.names());
}

namespace {

std::string element_name(const InputSpec& collection, const InputSpec& element, size_t i, const std::string& name) {
  return name + "." + (collection.kind == InputSpec::Kind::Dict ? element.name : std::to_string(i));
}

void collect_input_specs(const c10::IValue& value, const InputSpec& spec, const std::string& name,
                         const std::function<bool(const std::string&)>& is_input, std::vector<InputSpec>& out) {
  if (value.isTensor() || (is_number(value) && is_input(name))) {
    out.push_back(spec);
    out.back().name = name;
    return;
  }
  if (!holds_tensor(value)) return;
  for (size_t i = 0; i < spec.elements.size(); ++i) {
    const InputSpec& element = spec.elements[i];
    const c10::IValue item = value.isTuple()  ? value.toTupleRef().elements().at(i)
                             : value.isList() ? value.toListRef().at(i)
                                              : value.toGenericDict().at(element.name);
    collect_input_specs(item, element, element_name(spec, element, i, name), is_input, out);
  }
}

c10::IValue rebuilt(const c10::IValue& whole, const std::string& name, const std::vector<at::Tensor>& leaves,
                    size_t& next, const std::function<bool(const std::string&)>& is_input) {
  if (whole.isTensor()) return leaves.at(next++);
  if (is_number(whole) && is_input(name)) {
    const at::Tensor& t = leaves.at(next++);
    if (whole.isInt()) return t.item<int64_t>();
    if (whole.isDouble()) return t.item<double>();
    return t.item<bool>();
  }
  if (!holds_tensor(whole)) return whole;
  if (whole.isTuple()) {
    std::vector<c10::IValue> items;
    const auto& elements = whole.toTupleRef().elements();
    for (size_t i = 0; i < elements.size(); ++i)
      items.push_back(rebuilt(elements[i], name + "." + std::to_string(i), leaves, next, is_input));
    return c10::ivalue::Tuple::create(std::move(items));
  }
  if (whole.isList()) {
    c10::impl::GenericList list(whole.toList().elementType());
    const auto elements = whole.toListRef();
    for (size_t i = 0; i < elements.size(); ++i)
      list.push_back(rebuilt(elements[i], name + "." + std::to_string(i), leaves, next, is_input));
    return list;
  }
  const auto dict = whole.toGenericDict();
  c10::impl::GenericDict out(dict.keyType(), dict.valueType());
  for (const auto& entry : dict)
    out.insert(entry.key(), rebuilt(entry.value(), name + "." + entry.key().toStringRef(), leaves, next, is_input));
  return out;
}

}  // namespace

std::vector<InputSpec> graph_input_specs(const std::vector<torch::jit::IValue>& whole,
                                         const std::vector<InputSpec>& specs,
                                         const std::function<bool(const std::string&)>& is_input) {
  std::vector<InputSpec> out;
  for (size_t k = 0; k < whole.size() && k < specs.size(); ++k)
    collect_input_specs(whole[k], specs[k], specs[k].name, is_input, out);
  return out;
}

std::vector<torch::jit::IValue> arguments_from_graph_inputs(const std::vector<torch::jit::IValue>& whole,
                                                            const std::vector<InputSpec>& specs,
                                                            const std::vector<at::Tensor>& leaves,
                                                            const std::function<bool(const std::string&)>& is_input) {
  std::vector<torch::jit::IValue> out;
  size_t next = 0;
  for (size_t k = 0; k < whole.size(); ++k)
    out.push_back(rebuilt(whole[k], k < specs.size() ? specs[k].name : "", leaves, next, is_input));
  return out;
}

void numbers_as_tensor_inputs(torch::jit::Graph& graph, std::vector<torch::jit::IValue>& inputs, size_t self_inputs) {
  for (size_t k = 0; k < inputs.size(); ++k) {
    torch::jit::Value* input = graph.inputs()[k + self_inputs];
    const auto kind = input->type()->kind();
    c10::Symbol read_back;
    at::Tensor example;
    if (kind == c10::TypeKind::IntType && inputs[k].isInt()) {
      read_back = c10::aten::Int;
      example = at::scalar_tensor(inputs[k].toInt(), at::kLong);
    } else if (kind == c10::TypeKind::FloatType && inputs[k].isDouble()) {
      read_back = c10::aten::Float;
      example = at::scalar_tensor(inputs[k].toDouble(), at::kDouble);
    } else if (kind == c10::TypeKind::BoolType && inputs[k].isBool()) {
      read_back = c10::aten::Bool;
      example = at::scalar_tensor(inputs[k].toBool(), at::kBool);
    } else {
      continue;
    }
    torch::jit::Value* tensor = graph.insertInput(k + self_inputs);
    if (input->hasDebugName()) tensor->setDebugName(input->debugName());
    tensor->setType(c10::TensorType::create(example));
    torch::jit::WithInsertPoint at(graph.block()->nodes().front());
    torch::jit::Node* number = graph.insertNode(graph.create(read_back, {tensor}));
    number->output()->setType(input->type());
    input->replaceAllUsesWith(number->output());
    graph.eraseInput(k + self_inputs + 1);
    inputs[k] = example;
  }
}

}  // namespace onnxport::core
