#include "graph_builder.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "onnxport/errors.h"

namespace onnxport::core {

namespace {

constexpr int64_t kMaxInlineConstantElements = 64;    // larger constants become initializers
constexpr int64_t kMaxInferenceDataElements = 4096;   // constants whose data inference may read

std::string scope_prefix(const std::string& module_path) {
  // "features.0" -> "/features/features.0"
  std::string out, acc;
  size_t start = 0;
  while (start <= module_path.size() && !module_path.empty()) {
    size_t dot = module_path.find('.', start);
    std::string part = module_path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    acc += (acc.empty() ? "" : ".") + part;
    out += "/" + acc;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return out;
}

TensorType type_of_payload(const Value::Constant& c) {
  TensorType t;
  t.shape = std::vector<Dim>{};
  if (std::holds_alternative<int64_t>(c)) t.dtype = DType::Int64;
  else if (std::holds_alternative<double>(c)) t.dtype = DType::Float;
  else if (std::holds_alternative<bool>(c)) t.dtype = DType::Bool;
  else if (auto* v = std::get_if<std::vector<int64_t>>(&c)) {
    t.dtype = DType::Int64;
    t.shape = std::vector<Dim>{Dim::fixed(static_cast<int64_t>(v->size()))};
  } else if (auto* f = std::get_if<std::vector<double>>(&c)) {
    t.dtype = DType::Float;
    t.shape = std::vector<Dim>{Dim::fixed(static_cast<int64_t>(f->size()))};
  } else if (auto* tensor = std::get_if<Tensor>(&c)) {
    t.dtype = tensor->dtype();
    std::vector<Dim> dims;
    for (int64_t d : tensor->shape()) dims.push_back(Dim::fixed(d));
    t.shape = dims;
  }
  return t;
}

// The tensor an ONNX Constant/initializer gets for a constant payload.
Tensor tensor_of_payload(const Value::Constant& c, const std::string& describe) {
  if (auto* v = std::get_if<int64_t>(&c)) return Tensor::scalar_int64(*v);
  if (auto* v = std::get_if<double>(&c)) return Tensor::scalar_float(static_cast<float>(*v));
  if (auto* v = std::get_if<bool>(&c)) return Tensor::scalar_bool(*v);
  if (auto* v = std::get_if<std::vector<int64_t>>(&c)) return Tensor::ints(*v);
  if (auto* v = std::get_if<std::vector<double>>(&c)) return Tensor::floats(std::vector<float>(v->begin(), v->end()));
  if (auto* v = std::get_if<Tensor>(&c)) return *v;
  throw ExportError("cannot use " + describe + " as a tensor input");
}

void set_attribute(onnx::AttributeProto& p, const ResolvedAttr& a) {
  using T = ResolvedAttr::Type;
  p.set_name(a.name);
  switch (a.type) {
    case T::Int: p.set_type(onnx::AttributeProto::INT); p.set_i(a.value.as_int()); break;
    case T::Ints:
      p.set_type(onnx::AttributeProto::INTS);
      for (int64_t v : a.value.as_ints()) p.add_ints(v);
      break;
    case T::Float: p.set_type(onnx::AttributeProto::FLOAT); p.set_f(static_cast<float>(a.value.as_float())); break;
    case T::Floats:
      p.set_type(onnx::AttributeProto::FLOATS);
      for (double v : a.value.as_floats()) p.add_floats(static_cast<float>(v));
      break;
    case T::String: p.set_type(onnx::AttributeProto::STRING); p.set_s(a.value.as_string()); break;
    case T::Strings:
      p.set_type(onnx::AttributeProto::STRINGS);
      for (const auto& s : a.value.as_strings()) p.add_strings(s);
      break;
    case T::Tensor:
      p.set_type(onnx::AttributeProto::TENSOR);
      *p.mutable_t() = to_tensor_proto(a.value.as_tensor(), "");
      break;
    case T::Tensors:
      p.set_type(onnx::AttributeProto::TENSORS);
      for (const auto& t : a.value.as_tensors()) *p.add_tensors() = to_tensor_proto(t, "");
      break;
  }
}

}  // namespace

GraphBuilder::GraphBuilder(OnnxModel& model, BuilderOptions options) : model_(model), options_(std::move(options)) {
  model_.opset_imports[""] = options_.opset;
}

CoreValue* GraphBuilder::own(std::unique_ptr<CoreValue> v) {
  values_.push_back(std::move(v));
  return values_.back().get();
}

CoreValue* GraphBuilder::add_input(const std::string& name, const TensorType& type) {
  CoreValue* v = own(CoreValue::make_tensor(name, type));
  used_names_.insert(name);
  model_.inputs.push_back(GraphIO{name, type});
  model_.value_types[name] = to_type_proto(type);
  return v;
}

CoreValue* GraphBuilder::add_torch_constant(Value::Constant payload, TensorType type) {
  if (type.dtype == DType::Undefined) type = type_of_payload(payload);
  return own(CoreValue::make_constant(std::move(payload), std::move(type)));
}

CoreValue* GraphBuilder::add_parameter(const std::string& name, const Tensor& t) {
  CoreValue* v = own(CoreValue::make_constant(t, type_of_payload(t)));
  pending_initializer_names_[v] = name;
  return v;
}

Value* GraphBuilder::make_none() { return own(CoreValue::make_none_value()); }
Value* GraphBuilder::make_list(const std::vector<Value*>& items) { return own(CoreValue::make_list_value(items)); }

Value* GraphBuilder::add_constant(const Tensor& t) {
  CoreValue* v = own(CoreValue::make_constant(t, type_of_payload(t)));
  materialize(v);
  return v;
}

const std::string& GraphBuilder::materialize(Value* value) {
  auto* v = static_cast<CoreValue*>(value);
  if (!v->name().empty()) return v->name();
  if (v->is_none()) fail_node("None was passed where a tensor input is required");
  if (v->is_list()) fail_node("a list (" + v->describe() + ") was passed where a tensor input is required",
                              "a symbolic must pass list elements or concatenate them");
  if (!v->is_constant()) fail_node("internal: tensor value without a name");

  Tensor t = tensor_of_payload(v->constant(), v->describe());
  TensorType type = type_of_payload(Value::Constant{t});
  std::string name;
  auto pending = pending_initializer_names_.find(v);
  if (pending != pending_initializer_names_.end() || t.numel() > kMaxInlineConstantElements) {
    name = pending != pending_initializer_names_.end() ? pending->second : "const_" + std::to_string(next_constant_++);
    model_.initializers.push_back(Initializer{name, t});
    used_names_.insert(name);
  } else {
    OnnxNode node;
    node.origin = origin_;
    node.proto.set_op_type("Constant");
    node.proto.set_name(unique_node_name("Constant"));
    name = node.proto.name() + "_output_0";
    node.proto.add_output(name);
    auto* attr = node.proto.add_attribute();
    attr->set_name("value");
    attr->set_type(onnx::AttributeProto::TENSOR);
    *attr->mutable_t() = to_tensor_proto(t, "");
    model_.nodes.push_back(std::move(node));
    used_names_.insert(name);
  }
  if (t.numel() <= kMaxInferenceDataElements) constant_data_[name] = to_tensor_proto(t, name);
  model_.value_types[name] = to_type_proto(type);
  v->set_type(type);
  v->set_name(name);
  return v->name();
}

std::string GraphBuilder::unique_node_name(const std::string& op_type) {
  std::string base = scope_prefix(origin_.module_path) + "/" + op_type;
  int& count = name_counts_[base];
  std::string name = count == 0 ? base : base + "_" + std::to_string(count);
  ++count;
  while (used_names_.count(name)) name = base + "_" + std::to_string(count++);
  used_names_.insert(name);
  return name;
}

void GraphBuilder::fail_node(const std::string& message, const std::string& hint) {
  ErrorContext ctx;
  ctx.pack = origin_.pack_file.empty() ? origin_.pack : origin_.pack + " (" + origin_.pack_file + ")";
  ctx.torch_op = origin_.torch_op;
  ctx.module_path = origin_.module_path;
  ctx.source = origin_.source;
  ctx.hint = hint;
  throw ExportError(message, ctx);
}

std::vector<Value*> GraphBuilder::add_node(const std::string& full_name, const std::vector<Value*>& inputs,
                                           const Attrs& attrs, int num_outputs) {
  std::string domain, op_type = full_name;
  if (auto sep = full_name.find("::"); sep != std::string::npos) {
    domain = full_name.substr(0, sep);
    op_type = full_name.substr(sep + 2);
    if (domain == "onnx" || domain == "ai.onnx") domain.clear();
  }
  if (!domain.empty() && !options_.custom_domains.count(domain))
    fail_node("g.op(\"" + full_name + "\") emits custom domain '" + domain + "' that no op pack declared",
              "call r.declare_domain(\"" + domain + "\", VERSION) in the pack, or pass --custom-opset " + domain + "=VERSION");

  OnnxNode node;
  node.origin = origin_;
  node.proto.set_op_type(op_type);
  if (!domain.empty()) node.proto.set_domain(domain);
  node.proto.set_name(unique_node_name(op_type));
  for (Value* in : inputs) node.proto.add_input(in == nullptr || in->is_none() ? std::string() : materialize(in));
  for (const Attr& a : attrs) {
    try {
      set_attribute(*node.proto.add_attribute(), resolve_attr(a));
    } catch (Error& e) {
      e.add_context(ErrorContext{{}, origin_.torch_op, origin_.pack, origin_.module_path, origin_.source, {}});
      throw;
    }
  }
  std::vector<CoreValue*> outs;
  std::vector<Value*> result;
  for (int i = 0; i < num_outputs; ++i) {
    std::string out_name = node.proto.name() + "_output_" + std::to_string(i);
    used_names_.insert(out_name);
    node.proto.add_output(out_name);
    outs.push_back(own(CoreValue::make_tensor(out_name, TensorType{})));
    result.push_back(outs.back());
  }
  if (domain.empty()) {
    if (model_.opset_imports.count(domain) == 0) model_.opset_imports[domain] = options_.opset;
    verify_schema(node, domain);
    infer_types(node, outs);
  } else {
    model_.opset_imports[domain] = options_.custom_domains.at(domain);
  }
  model_.nodes.push_back(std::move(node));
  return result;
}

void GraphBuilder::verify_schema(const OnnxNode& node, const std::string& domain) {
  const auto* schema = onnx::OpSchemaRegistry::Schema(node.proto.op_type(), options_.opset, domain);
  if (!schema) {
    const auto* latest = onnx::OpSchemaRegistry::Schema(node.proto.op_type(), domain);
    fail_node("ONNX has no operator '" + node.proto.op_type() + "' at opset " + std::to_string(options_.opset),
              latest ? "it exists from opset " + std::to_string(latest->since_version()) + "; export with --opset " +
                           std::to_string(latest->since_version()) + " or later"
                     : "check the op name in the symbolic");
  }
  if (!options_.strict) return;
  if (schema->Deprecated())
    fail_node("ONNX operator '" + node.proto.op_type() + "' is deprecated at opset " + std::to_string(options_.opset));
  try {
    schema->Verify(node.proto);
  } catch (const std::exception& e) {
    fail_node("g.op(\"" + node.proto.op_type() + "\") violates the ONNX schema at opset " +
                  std::to_string(options_.opset) + ": " + e.what(),
              "fix the symbolic's inputs/attributes (strict mode)");
  }
}

void GraphBuilder::infer_types(OnnxNode& node, const std::vector<CoreValue*>& outputs) {
  const auto* schema = onnx::OpSchemaRegistry::Schema(node.proto.op_type(), options_.opset, "");
  if (!schema || !schema->has_type_and_shape_inference_function()) return;
  std::unordered_map<std::string, onnx::TypeProto*> types;
  std::unordered_map<std::string, const onnx::TensorProto*> data;
  std::unordered_map<std::string, const onnx::SparseTensorProto*> sparse;
  for (const auto& in : node.proto.input()) {
    if (in.empty()) continue;
    if (auto it = model_.value_types.find(in); it != model_.value_types.end()) types[in] = &it->second;
    if (auto it = constant_data_.find(in); it != constant_data_.end()) data[in] = &it->second;
  }
  onnx::shape_inference::InferenceContextImpl ctx(node.proto, types, data, sparse, nullptr, nullptr);
  try {
    schema->GetTypeAndShapeInferenceFunction()(ctx);
  } catch (const std::exception& e) {
    if (options_.strict)
      fail_node("ONNX shape inference rejects " + node.proto.op_type() + ": " + e.what(),
                "the symbolic built a node whose inputs don't fit together");
    return;
  }
  for (size_t i = 0; i < outputs.size() && i < ctx.getNumOutputs(); ++i) {
    const onnx::TypeProto* t = ctx.getOutputType(i);
    if (!t || !t->has_tensor_type() || t->tensor_type().elem_type() == 0) continue;
    model_.value_types[outputs[i]->name()] = *t;
    outputs[i]->set_type(from_type_proto(*t));
  }
  // Constant nodes built by symbolics stay visible to maybe_*() and to later inference.
  if (node.proto.op_type() == "Constant" && node.proto.attribute_size() == 1 &&
      node.proto.attribute(0).has_t()) {
    const auto& tp = node.proto.attribute(0).t();
    Tensor t = from_tensor_proto(tp);
    if (t.numel() <= kMaxInferenceDataElements) constant_data_[outputs[0]->name()] = to_tensor_proto(t, outputs[0]->name());
  }
}

void GraphBuilder::name_output(Value* value, const std::string& name) {
  const std::string current = materialize(value);
  if (current == name) return;
  // Rename the producing node's output when this graph-internal value has a producer.
  bool is_input = false;
  for (const auto& in : model_.inputs) is_input |= in.name == current;
  bool is_initializer = false;
  for (const auto& init : model_.initializers) is_initializer |= init.name == current;
  bool already_output = false;
  for (const auto& out : model_.outputs) already_output |= out.name == current;
  if (!is_input && !is_initializer && !already_output && !used_names_.count(name)) {
    for (auto& node : model_.nodes) {
      for (auto& out : *node.proto.mutable_output())
        if (out == current) out = name;
      for (auto& in : *node.proto.mutable_input())
        if (in == current) in = name;
    }
    if (auto it = model_.value_types.find(current); it != model_.value_types.end()) {
      model_.value_types[name] = it->second;
    }
    if (auto it = constant_data_.find(current); it != constant_data_.end()) constant_data_[name] = it->second;
    static_cast<CoreValue*>(value)->set_name(name);
    used_names_.insert(name);
    return;
  }
  if (used_names_.count(name))
    throw ConfigError("output name '" + name + "' is already used by another value in the graph",
                      ErrorContext{{}, {}, {}, {}, {}, "choose distinct --output-names"});
  OnnxNode node;
  node.origin = origin_;
  node.proto.set_op_type("Identity");
  node.proto.set_name(unique_node_name("Identity"));
  node.proto.add_input(current);
  node.proto.add_output(name);
  used_names_.insert(name);
  if (auto it = model_.value_types.find(current); it != model_.value_types.end()) model_.value_types[name] = it->second;
  model_.nodes.push_back(std::move(node));
}

}  // namespace onnxport::core
