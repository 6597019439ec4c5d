#include "3_export/3_convert/graph_builder.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "1_base/onnx_release.h"
#include "3_export/3_convert/custom_schemas.h"
#include "onnxport/errors.h"

namespace onnxport::core {

namespace {

// "float32[2,5,?]" for a tensor type as ONNX inference sees it (for error messages).
std::string describe_type(const onnx::TypeProto& type) {
  if (!type.has_tensor_type()) return "non-tensor";
  const auto& t = type.tensor_type();
  std::string text = dtype_name(static_cast<DType>(t.elem_type()));
  if (!t.has_shape()) return text + "[*]";
  text += "[";
  for (int i = 0; i < t.shape().dim_size(); ++i) {
    const auto& d = t.shape().dim(i);
    text += (i ? "," : "") + (d.has_dim_value() ? std::to_string(d.dim_value()) : std::string("?"));
  }
  return text + "]";
}

constexpr int64_t kMaxInlineConstantElements = 64;   // larger constants become initializers
constexpr int64_t kMaxInferenceDataElements = 4096;  // constants whose data inference may read

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
  if (std::holds_alternative<int64_t>(c))
    t.dtype = DType::Int64;
  else if (std::holds_alternative<double>(c))
    t.dtype = DType::Float;
  else if (std::holds_alternative<bool>(c))
    t.dtype = DType::Bool;
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

// The tensor an ONNX Constant/initializer gets for a constant value's payload.
Tensor tensor_of_payload(const Value& value) {
  const Value::Constant& c = value.constant();
  if (auto* v = std::get_if<int64_t>(&c)) return Tensor::scalar_int64(*v);
  if (auto* v = std::get_if<double>(&c)) return Tensor::scalar_float(static_cast<float>(*v));
  if (auto* v = std::get_if<bool>(&c)) return Tensor::scalar_bool(*v);
  if (auto* v = std::get_if<std::vector<int64_t>>(&c)) return Tensor::ints(*v);
  if (auto* v = std::get_if<std::vector<double>>(&c)) return Tensor::floats(std::vector<float>(v->begin(), v->end()));
  if (auto* v = std::get_if<Tensor>(&c)) return *v;
  throw ExportError("cannot use " + value.describe() + " as a tensor input");
}

void set_attribute(onnx::AttributeProto& p, const ResolvedAttr& a) {
  using T = ResolvedAttr::Type;
  p.set_name(a.name);
  switch (a.type) {
    case T::Int:
      p.set_type(onnx::AttributeProto::INT);
      p.set_i(a.value.as_int());
      break;
    case T::Ints:
      p.set_type(onnx::AttributeProto::INTS);
      for (int64_t v : a.value.as_ints()) p.add_ints(v);
      break;
    case T::Float:
      p.set_type(onnx::AttributeProto::FLOAT);
      p.set_f(static_cast<float>(a.value.as_float()));
      break;
    case T::Floats:
      p.set_type(onnx::AttributeProto::FLOATS);
      for (double v : a.value.as_floats()) p.add_floats(static_cast<float>(v));
      break;
    case T::String:
      p.set_type(onnx::AttributeProto::STRING);
      p.set_s(a.value.as_string());
      break;
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
    case T::Graph: break;  // built by GraphBuilder::build_subgraph
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
  if (v->is_list())
    fail_node("a list (" + v->describe() + ") was passed where a tensor input is required",
              "a symbolic must pass list elements or concatenate them");
  if (!v->is_constant()) fail_node("internal: tensor value without a name");

  Tensor t = tensor_of_payload(*v);
  TensorType type = type_of_payload(Value::Constant{t});
  std::string name;
  auto pending = pending_initializer_names_.find(v);
  // Constant-1 (opset < 9) holds floating types only: other constants become initializers.
  const bool constant_op_holds = opset() >= 9 || is_floating(t.dtype());
  if (pending != pending_initializer_names_.end() || t.numel() > kMaxInlineConstantElements || !constant_op_holds) {
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
    // Always in the outermost graph: a constant first used inside a branch may be used after it.
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
  if (origin_.module_path != prefix_of_path_.first)
    prefix_of_path_ = {origin_.module_path, scope_prefix(origin_.module_path)};
  std::string base = prefix_of_path_.second + "/" + op_type;
  int& count = name_counts_[base];
  std::string name = count == 0 ? base : base + "_" + std::to_string(count);
  ++count;
  while (used_names_.count(name)) name = base + "_" + std::to_string(count++);
  used_names_.insert(name);
  return name;
}

ErrorContext GraphBuilder::node_context(const std::string& hint) const {
  ErrorContext ctx;
  ctx.pack = origin_.pack_file.empty() ? origin_.pack : origin_.pack + " (" + origin_.pack_file + ")";
  ctx.torch_op = origin_.torch_op;
  ctx.module_path = origin_.module_path;
  ctx.source = origin_.source;
  ctx.hint = hint;
  return ctx;
}

void GraphBuilder::fail_node(const std::string& message, const std::string& hint) {
  throw ExportError(message, node_context(hint));
}

void GraphBuilder::reject_by_schema(const std::string& message, const std::string& hint) {
  throw SchemaError(message, node_context(hint));
}

std::vector<Value*> GraphBuilder::add_node(const std::string& full_name, const std::vector<Value*>& inputs,
                                           const Attrs& attrs, int num_outputs) {
  std::string domain, op_type = full_name;
  if (auto sep = full_name.find("::"); sep != std::string::npos) {
    domain = full_name.substr(0, sep);
    op_type = full_name.substr(sep + 2);
    if (domain == "onnx" || domain == "ai.onnx") domain.clear();
  }
  if (!domain.empty() && !options_.custom_domains.count(domain) && options_.packs_with_open_domains.count(origin_.pack))
    options_.custom_domains.emplace(domain, 1);
  if (!domain.empty() && !options_.custom_domains.count(domain))
    fail_node("g.op(\"" + full_name + "\") emits custom domain '" + domain + "' that no op pack declared",
              "call r.declare_domain(\"" + domain + "\", VERSION) in the pack, or pass --custom-opset " + domain +
                  "=VERSION");

  OnnxNode node;
  node.origin = origin_;
  node.proto.set_op_type(op_type);
  if (!domain.empty()) node.proto.set_domain(domain);
  node.proto.set_name(unique_node_name(op_type));
  bool has_subgraphs = false;
  for (const Attr& a : attrs) {
    try {
      const ResolvedAttr resolved = resolve_attr(a);
      auto* proto = node.proto.add_attribute();
      set_attribute(*proto, resolved);
      if (resolved.type == ResolvedAttr::Type::Graph) {
        proto->set_type(onnx::AttributeProto::GRAPH);
        *proto->mutable_g() = build_subgraph(node.proto.name() + "/" + resolved.name, resolved.value.as_graph());
        has_subgraphs = true;
      }
    } catch (Error& e) {
      e.add_context(ErrorContext::for_node({}, origin_.torch_op, origin_.module_path, origin_.source, origin_.pack));
      throw;
    }
  }
  if (domain.empty() && !has_subgraphs && num_outputs == 1)
    if (Value* folded = fold_small_constants(node, inputs)) return {folded};
  for (Value* in : inputs) node.proto.add_input(in == nullptr || in->is_none() ? std::string() : materialize(in));
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
    if (!verify_schema(node, domain))  // written as torch.onnx writes it; convert_to_onnx warns and lists it
      for (const auto& out : node.proto.output()) schemaless_outputs_.insert(out);
    if (has_subgraphs)
      type_control_flow_outputs(node.proto, outs);
    else
      infer_types(node, outs);
  } else {
    model_.opset_imports[domain] = options_.custom_domains.at(domain);
    if (has_custom_schema(domain, op_type)) {  // declared by an op pack: checked like standard ops
      verify_schema(node, domain);
      infer_types(node, outs);
    } else {
      for (const auto& out : node.proto.output()) schemaless_outputs_.insert(out);
    }
  }
  add_to_current(std::move(node));
  return result;
}

Value* GraphBuilder::fold_small_constants(const OnnxNode& node, const std::vector<Value*>& inputs) {
  if (inputs.empty() || node.proto.op_type() == "Constant" || node.proto.op_type() == "Identity") return nullptr;
  std::vector<Tensor> constants;
  for (Value* in : inputs) {
    // Parameters stay initializers (training mode, export_params=false); only small values fold.
    if (!in || !in->is_constant() || pending_initializer_names_.count(in)) return nullptr;
    Tensor t = tensor_of_payload(*in);
    if (t.numel() > kMaxInlineConstantElements) return nullptr;
    constants.push_back(std::move(t));
  }
  if (!options_.evaluate) return nullptr;
  std::optional<Tensor> folded = options_.evaluate(node.proto, constants, options_.opset);
  if (!folded) return nullptr;
  return add_torch_constant(*folded, {});
}

void GraphBuilder::add_to_current(OnnxNode node) {
  if (!scopes_.empty())
    for (const auto& out : node.proto.output()) scopes_.back().produced.insert(out);
  current_nodes().push_back(std::move(node));
}

onnx::GraphProto GraphBuilder::build_subgraph(const std::string& name, const Subgraph& subgraph) {
  if (!subgraph.build) fail_node("sub-graph '" + name + "' has no build function");
  scopes_.emplace_back();
  std::vector<Value*> inputs;
  for (size_t i = 0; i < subgraph.inputs.size(); ++i) {
    const auto& spec = subgraph.inputs[i];
    std::string in_name = name + "_input_" + std::to_string(i);
    while (used_names_.count(in_name)) in_name += "_";
    used_names_.insert(in_name);
    CoreValue* v = spec.sequence ? own(CoreValue::make_sequence(in_name, spec.type))
                                 : own(CoreValue::make_tensor(in_name, spec.type));
    model_.value_types[in_name] = type_proto_of(*v);
    onnx::ValueInfoProto vi;
    vi.set_name(in_name);
    *vi.mutable_type() = model_.value_types[in_name];
    scopes_.back().inputs.push_back(std::move(vi));
    inputs.push_back(v);
  }
  std::vector<Value*> outputs;
  try {
    outputs = subgraph.build(*this, inputs);
    // Outputs must be produced inside the sub-graph, once each: outer values, inputs and
    // constants pass through an Identity.
    std::unordered_set<std::string> named;
    for (Value*& out : outputs) {
      if (!out) fail_node("sub-graph '" + name + "' returned a null output");
      if (out->is_list()) fail_node("sub-graph '" + name + "' returned a list; return a sequence or its elements");
      const std::string current = materialize(out);
      if (scopes_.back().produced.count(current) && named.insert(current).second) continue;
      if (out->is_sequence() && options_.opset < 14) {
        // Identity takes sequences from opset 14; before that a sub-graph input passes through.
        bool is_input = false;
        for (const auto& in : scopes_.back().inputs) is_input |= in.name() == current;
        if (is_input && named.insert(current).second) continue;
        fail_node("sub-graph '" + name +
                      "' returns a sequence it did not build, which needs opset 14 (Identity on sequences)",
                  "export with --opset 14 or later");
      }
      Value* copy = add_node("Identity", {out}, {}, 1)[0];
      if (out->is_sequence()) static_cast<CoreValue*>(copy)->set_sequence(out->type());
      if (out->is_optional()) static_cast<CoreValue*>(copy)->set_optional(out->type());
      model_.value_types[copy->name()] = type_proto_of(*copy);
      named.insert(copy->name());
      out = copy;
    }
  } catch (...) {
    scopes_.pop_back();
    throw;
  }
  Scope scope = std::move(scopes_.back());
  scopes_.pop_back();
  onnx::GraphProto g;
  g.set_name(name);
  for (auto& n : scope.nodes) *g.add_node() = std::move(n.proto);
  for (auto& in : scope.inputs) *g.add_input() = std::move(in);
  std::unordered_set<std::string> outputs_named;
  for (Value* out : outputs) {
    auto* vi = g.add_output();
    vi->set_name(out->name());
    *vi->mutable_type() = type_proto_of(*out);
    outputs_named.insert(out->name());
  }
  for (const auto& n : g.node())
    for (const auto& out : n.output()) {
      auto t = model_.value_types.find(out);
      if (outputs_named.count(out) || t == model_.value_types.end()) continue;
      if (t->second.has_tensor_type() && t->second.tensor_type().elem_type() == 0) continue;
      auto* vi = g.add_value_info();
      vi->set_name(out);
      *vi->mutable_type() = t->second;
    }
  return g;
}

namespace {
// The type two control-flow paths agree on: dims that differ become unknown, ranks that
// differ drop the shape.
onnx::TypeProto merge_types(const onnx::TypeProto& a, const onnx::TypeProto& b) {
  if (a.has_sequence_type() || b.has_sequence_type()) return a;
  if (a.has_optional_type() && b.has_optional_type()) {
    onnx::TypeProto out;
    *out.mutable_optional_type()->mutable_elem_type() =
        merge_types(a.optional_type().elem_type(), b.optional_type().elem_type());
    return out;
  }
  onnx::TypeProto out = a;
  const auto& ta = a.tensor_type();
  const auto& tb = b.tensor_type();
  auto* tt = out.mutable_tensor_type();
  if (ta.elem_type() != tb.elem_type()) tt->set_elem_type(0);
  if (!ta.has_shape() || !tb.has_shape() || ta.shape().dim_size() != tb.shape().dim_size()) {
    tt->clear_shape();
    return out;
  }
  for (int i = 0; i < ta.shape().dim_size(); ++i) {
    const auto& da = ta.shape().dim(i);
    const auto& db = tb.shape().dim(i);
    const bool same = (da.has_dim_value() && db.has_dim_value() && da.dim_value() == db.dim_value()) ||
                      (da.has_dim_param() && db.has_dim_param() && da.dim_param() == db.dim_param());
    if (!same) tt->mutable_shape()->mutable_dim(i)->Clear();
  }
  return out;
}

// A loop-carried value may change size from one iteration to the next: keep dtype and rank.
onnx::TypeProto without_dims(onnx::TypeProto t, bool add_leading_dim) {
  if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return t;
  auto* shape = t.mutable_tensor_type()->mutable_shape();
  for (auto& d : *shape->mutable_dim()) d.Clear();
  if (add_leading_dim) shape->add_dim();
  return t;
}

const onnx::GraphProto* graph_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name && a.has_g()) return &a.g();
  return nullptr;
}
}  // namespace

void GraphBuilder::type_control_flow_outputs(const onnx::NodeProto& node, const std::vector<CoreValue*>& outputs) {
  std::vector<onnx::TypeProto> types;
  if (node.op_type() == "If") {
    const auto* then_g = graph_attribute(node, "then_branch");
    const auto* else_g = graph_attribute(node, "else_branch");
    if (!then_g || !else_g) return;
    if (then_g->output_size() != else_g->output_size() || then_g->output_size() != static_cast<int>(outputs.size()))
      fail_node("If: the branches return " + std::to_string(then_g->output_size()) + " and " +
                std::to_string(else_g->output_size()) + " values for " + std::to_string(outputs.size()) + " outputs");
    for (int i = 0; i < then_g->output_size(); ++i) {
      const auto& a = then_g->output(i).type();
      const auto& b = else_g->output(i).type();
      if (a.has_sequence_type() != b.has_sequence_type())
        fail_node("If: output " + std::to_string(i) + " is a sequence in one branch and a tensor in the other");
      if (a.has_optional_type() != b.has_optional_type())
        fail_node("If: output " + std::to_string(i) + " is an optional in one branch and a tensor in the other");
      if (options_.opset < 11 && merge_types(a, b).SerializeAsString() != a.SerializeAsString())
        fail_node("If: output " + std::to_string(i) +
                      " has different shapes in the two branches, which ONNX If "
                      "allows from opset 11",
                  "export with --opset 11 or later");
      types.push_back(merge_types(a, b));
    }
  } else if (node.op_type() == "Loop") {
    const auto* body = graph_attribute(node, "body");
    if (!body) return;
    const int carried = body->input_size() - 2;
    for (int i = 1; i < body->output_size(); ++i) types.push_back(without_dims(body->output(i).type(), i > carried));
  }
  for (size_t i = 0; i < outputs.size() && i < types.size(); ++i) {
    const auto& t = types[i];
    if (t.has_sequence_type())
      outputs[i]->set_sequence(from_type_proto(t.sequence_type().elem_type()));
    else if (t.has_optional_type())
      outputs[i]->set_optional(from_type_proto(t.optional_type().elem_type()));
    else if (t.tensor_type().elem_type() != 0)
      outputs[i]->set_type(from_type_proto(t));
    else
      continue;
    model_.value_types[outputs[i]->name()] = t;
  }
}

bool GraphBuilder::verify_schema(const OnnxNode& node, const std::string& domain) {
  const int version = domain.empty() ? options_.opset : options_.custom_domains.at(domain);
  // "opset 17" / "com.vendor version 2", and the flag that changes it
  const std::string at = domain.empty() ? "opset " : domain + " version ";
  const std::string flag = domain.empty() ? "--opset " : "--custom-opset " + domain + "=";
  const std::string op = domain.empty() ? node.proto.op_type() : domain + "::" + node.proto.op_type();
  const auto* schema = onnx::OpSchemaRegistry::Schema(node.proto.op_type(), version, domain);
  if (!schema) {
    // An op no ONNX opset defines, in the default domain (MQBench's FixedPerTensorAffine): torch.onnx
    // writes it, and the deployment tools that asked for it rewrite it. Only its name is known.
    if (domain.empty() && !onnx_defines(node.proto.op_type())) return false;
    // The op's first version, not its latest (Schema(op, domain)): ONNX 1.17 has GridSample-20 and
    // -22, and the opset to ask for is 16, where it began.
    const onnx::OpSchema* first = nullptr;
    const auto* latest = onnx::OpSchemaRegistry::Schema(node.proto.op_type(), domain);
    for (int v = version + 1; latest && !first && v <= latest->since_version(); ++v)
      first = onnx::OpSchemaRegistry::Schema(node.proto.op_type(), v, domain);
    reject_by_schema("ONNX has no operator '" + op + "' at " + at + std::to_string(version),
                     first ? "it exists from " + at + std::to_string(first->since_version()) + "; export with " +
                                 flag + std::to_string(first->since_version()) + " or later"
                           : "check the op name in the symbolic");
  }
  if (!options_.strict) return true;
  if (schema->Deprecated())
    reject_by_schema("ONNX operator '" + op + "' is deprecated at " + at + std::to_string(version));
  try {
    schema->Verify(node.proto);
  } catch (const std::exception& e) {
    reject_by_schema("g.op(\"" + op + "\") violates " +
                         (domain.empty() ? "the ONNX schema" : "the schema its op pack declared") + " at " + at +
                         std::to_string(version) + ": " + e.what(),
                     "fix the symbolic's inputs/attributes (strict mode)");
  }
  return true;
}

void GraphBuilder::infer_types(OnnxNode& node, const std::vector<CoreValue*>& outputs) {
  const std::string& domain = node.proto.domain();
  const int version = domain.empty() ? options_.opset : options_.custom_domains.at(domain);
  const auto* schema = onnx::OpSchemaRegistry::Schema(node.proto.op_type(), version, domain);
  if (!schema || !schema->has_type_and_shape_inference_function()) return;
  std::unordered_map<std::string, onnx::TypeProto*> types;
  std::unordered_map<std::string, const onnx::TensorProto*> data;
  std::unordered_map<std::string, const onnx::SparseTensorProto*> sparse;
  bool untyped_input = false;
  for (const auto& in : node.proto.input()) {
    if (in.empty()) continue;
    if (auto it = model_.value_types.find(in); it != model_.value_types.end()) types[in] = &it->second;
    untyped_input = untyped_input || schemaless_outputs_.count(in);
    if (auto it = constant_data_.find(in); it != constant_data_.end()) data[in] = &it->second;
  }
  auto ctx = onnx_release::node_inference_context(node.proto, types, data, sparse);
  try {
    schema->GetTypeAndShapeInferenceFunction()(ctx);
  } catch (const std::exception& e) {
    // An input from a custom-domain op without a schema has no type to check against: the
    // outputs stay untyped until the torch node's types fill them in.
    if (options_.strict && !untyped_input) {
      std::string inputs;
      for (const auto& in : node.proto.input())
        if (auto it = types.find(in); it != types.end())
          inputs += (inputs.empty() ? "" : ", ") + describe_type(*it->second);
      reject_by_schema("ONNX shape inference rejects " + node.proto.op_type() + "(" + inputs + "): " + e.what(),
                       "the symbolic built a node whose inputs don't fit together");
    }
    return;
  }
  for (size_t i = 0; i < outputs.size() && i < ctx.getNumOutputs(); ++i) {
    const onnx::TypeProto* t = ctx.getOutputType(i);
    if (t && t->has_sequence_type() && t->sequence_type().elem_type().has_tensor_type()) {
      model_.value_types[outputs[i]->name()] = *t;
      outputs[i]->set_sequence(from_type_proto(t->sequence_type().elem_type()));
      continue;
    }
    if (t && t->has_optional_type() && t->optional_type().elem_type().has_tensor_type()) {
      model_.value_types[outputs[i]->name()] = *t;
      outputs[i]->set_optional(from_type_proto(t->optional_type().elem_type()));
      continue;
    }
    if (!t || !t->has_tensor_type() || t->tensor_type().elem_type() == 0) continue;
    model_.value_types[outputs[i]->name()] = *t;
    outputs[i]->set_type(from_type_proto(*t));
  }
  // Constant nodes built by symbolics stay visible to maybe_*() and to later inference.
  if (node.proto.op_type() == "Constant" && node.proto.attribute_size() == 1 && node.proto.attribute(0).has_t()) {
    const auto& tp = node.proto.attribute(0).t();
    Tensor t = from_tensor_proto(tp);
    if (t.numel() <= kMaxInferenceDataElements)
      constant_data_[outputs[0]->name()] = to_tensor_proto(t, outputs[0]->name());
  }
}

Value* GraphBuilder::empty_optional(const TensorType& element) {
  OnnxNode node;
  node.origin = origin_;
  node.proto.set_op_type("Optional");
  node.proto.set_name(unique_node_name("Optional"));
  auto* type = node.proto.add_attribute();
  type->set_name("type");
  type->set_type(onnx::AttributeProto::TYPE_PROTO);
  *type->mutable_tp() = to_type_proto(element);
  const std::string out_name = node.proto.name() + "_output_0";
  used_names_.insert(out_name);
  node.proto.add_output(out_name);
  CoreValue* out = own(CoreValue::make_tensor(out_name, TensorType{}));
  verify_schema(node, "");
  infer_types(node, {out});
  if (!out->is_optional()) fail_node("Optional: ONNX inferred no optional type for " + element.str());
  add_to_current(std::move(node));
  return out;
}

void GraphBuilder::declare_optional_input(Value* v) {
  auto* input = static_cast<CoreValue*>(v);
  if (scopes_.empty()) fail_node("declare_optional_input: no sub-graph is being built");
  for (auto& vi : scopes_.back().inputs)
    if (vi.name() == input->name()) {
      input->set_optional(input->type());
      *vi.mutable_type() = model_.value_types[vi.name()] = type_proto_of(*input);
      return;
    }
  fail_node("declare_optional_input: '" + input->name() + "' is no input of this sub-graph");
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
      rename_captured(node.proto, current, name);
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
                      ErrorContext::with_hint("choose distinct --output-names"));
  OnnxNode node;
  node.origin = origin_;
  node.proto.set_op_type("Identity");
  node.proto.set_name(unique_node_name("Identity"));
  node.proto.add_input(current);
  node.proto.add_output(name);
  used_names_.insert(name);
  if (auto it = model_.value_types.find(current); it != model_.value_types.end()) model_.value_types[name] = it->second;
  add_to_current(std::move(node));
}

}  // namespace onnxport::core
