// What several passes ask of a model: readers and producers of values, initializers by name,
// known value types, and a free name for a bias a fusion creates.
#include <algorithm>

#include "3_export/5_passes/passes.h"

namespace onnxport::core {

ValueUses::ValueUses(const OnnxModel& model) {
  for (size_t i = 0; i < model.nodes.size(); ++i) {
    const auto& p = model.nodes[i].proto;
    for (const auto& in : p.input()) ++readers[in];
    for (const auto& in : captured_names(p)) ++readers[in];
    for (const auto& out : p.output()) producer[out] = i;
  }
  for (const auto& out : model.outputs) ++readers[out.name];
}

int ValueUses::count(const std::string& name) const {
  auto it = readers.find(name);
  return it == readers.end() ? 0 : it->second;
}

const Initializer* find_initializer(const OnnxModel& model, const std::string& name) {
  for (const auto& i : model.initializers)
    if (i.name == name) return &i;
  return nullptr;
}

std::optional<Tensor> constant_value(const OnnxModel& model, const std::string& name, const ValueUses& uses) {
  if (const Initializer* init = find_initializer(model, name)) return init->tensor;
  const auto made = uses.producer.find(name);
  if (made == uses.producer.end()) return std::nullopt;
  const auto& p = model.nodes[made->second].proto;
  if (!p.domain().empty() || p.op_type() != "Constant" || p.attribute_size() != 1 || !p.attribute(0).has_t())
    return std::nullopt;
  return from_tensor_proto(p.attribute(0).t());
}

std::string NewConstants::add(OnnxModel& model, const std::string& base, const Tensor& value) {
  if (!gathered_) {
    taken_ = value_names(model);
    for (const auto& init : model.initializers) taken_.insert(init.name);
    gathered_ = true;
  }
  std::string name = base + "_target";
  for (int k = 1; taken_.count(name); ++k) name = base + "_target_" + std::to_string(k);
  taken_.insert(name);
  OnnxNode node;
  node.proto.set_op_type("Constant");
  node.proto.add_output(name);
  auto* attr = node.proto.add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  *attr->mutable_t() = to_tensor_proto(value, "");  // unnamed: equal constants merge in CSE
  nodes_.push_back(std::move(node));
  model.value_types[name] = to_type_proto(type_of_tensor(value));
  return name;
}

void NewConstants::place(OnnxModel& model) {
  model.nodes.insert(model.nodes.begin(), std::make_move_iterator(nodes_.begin()),
                     std::make_move_iterator(nodes_.end()));
  nodes_.clear();
}

std::unordered_map<std::string, TensorType> known_types(const OnnxModel& model) {
  std::unordered_map<std::string, TensorType> types;
  for (const auto& in : model.inputs)
    if (!in.sequence) types[in.name] = in.type;
  for (const auto& init : model.initializers) types[init.name] = type_of_tensor(init.tensor);
  for (const auto& [name, proto] : model.value_types)
    if (proto.has_tensor_type()) types.emplace(name, from_type_proto(proto));
  return types;
}

std::optional<TensorType> TypeLookup::operator()(const std::string& name) const {
  for (const auto& in : model_.inputs)
    if (in.name == name && !in.sequence) return in.type;
  if (const Initializer* init = find_initializer(model_, name)) return type_of_tensor(init->tensor);
  const auto t = model_.value_types.find(name);
  if (t == model_.value_types.end() || !t->second.has_tensor_type()) return std::nullopt;
  return from_type_proto(t->second);
}

std::optional<std::vector<Dim>> TypeLookup::dims(const std::string& name) const {
  const auto t = (*this)(name);
  if (!t || !t->shape) return std::nullopt;
  return t->shape;
}

std::optional<std::vector<int64_t>> transpose_perm(const onnx::NodeProto& transpose, std::optional<size_t> rank) {
  if (const auto* attr = find_attribute(transpose, "perm"))
    return std::vector<int64_t>(attr->ints().begin(), attr->ints().end());
  if (!rank) return std::nullopt;
  std::vector<int64_t> reversed;
  for (size_t i = 0; i < *rank; ++i) reversed.push_back(static_cast<int64_t>(*rank - 1 - i));
  return reversed;
}

std::string module_of(const std::string& parameter, const std::string& suffix) {
  const bool ends_in_suffix = parameter.size() > suffix.size() &&
                              parameter.compare(parameter.size() - suffix.size(), suffix.size(), suffix) == 0;
  return ends_in_suffix ? parameter.substr(0, parameter.size() - suffix.size()) : "";
}

std::unordered_set<std::string> value_names(const OnnxModel& model) {
  std::unordered_set<std::string> names;
  for (const auto& in : model.inputs) names.insert(in.name);
  for (const auto& out : model.outputs) names.insert(out.name);
  for (const auto& n : model.nodes)
    for (const auto& out : n.proto.output()) names.insert(out);
  return names;
}

std::string bias_name_for(const std::string& weight_name, const std::string& fallback, const OnnxModel& model,
                          const ValueUses& uses) {
  const std::string module = module_of(weight_name, ".weight");
  std::string name = module.empty() ? weight_name + "_fused_bias" : module + ".bias";
  if (find_initializer(model, name) || uses.readers.count(name) || uses.producer.count(name)) name = fallback;
  return name;
}

std::string node_key(const onnx::NodeProto& p, const std::unordered_map<std::string, int>* versions) {
  std::string key = p.domain() + '\x1d' + p.op_type() + '\x1e' + std::to_string(p.output_size());
  for (const auto& in : p.input()) {
    key += '\x1f' + in;
    if (versions)
      if (auto v = versions->find(in); v != versions->end()) key += '\x1c' + std::to_string(v->second);
  }
  std::vector<const onnx::AttributeProto*> attrs;
  for (const auto& a : p.attribute()) attrs.push_back(&a);
  std::sort(attrs.begin(), attrs.end(), [](auto* a, auto* b) { return a->name() < b->name(); });
  for (const auto* a : attrs) key += '\x1e' + a->SerializeAsString();
  return key;
}

void apply_rewrite(OnnxModel& model, const std::vector<bool>& drop, const std::unordered_set<std::string>& replaced,
                   std::vector<Initializer> added) {
  std::vector<OnnxNode> kept;
  kept.reserve(model.nodes.size());
  for (size_t i = 0; i < model.nodes.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(model.nodes[i]));
  model.nodes = std::move(kept);
  std::vector<Initializer> inits;
  for (auto& init : model.initializers)
    if (!replaced.count(init.name)) inits.push_back(std::move(init));
  for (auto& init : added) inits.push_back(std::move(init));
  model.initializers = std::move(inits);
}

}  // namespace onnxport::core
