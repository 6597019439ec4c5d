#include "3_export/3_convert/custom_schemas.h"

#include <onnx/defs/data_type_utils.h>
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <map>
#include <mutex>
#include <sstream>

#include "1_base/onnx_ir.h"
#include "onnxport/errors.h"

namespace onnxport::core {

namespace {

// Upper bound of the version range ONNX is told about for a custom domain: a schema may be
// declared for any domain version, and custom_opsets may pick any version to import.
constexpr int kMaxCustomDomainVersion = 1000;

struct Registered {
  std::string definition;  // describe(): what must match for a second registration to be a no-op
  std::string pack;
};

std::mutex registered_mutex;
std::map<std::string, Registered> registered;  // CustomOpSchema::key() -> what this process registered

[[noreturn]] void fail(const std::string& message, const std::string& pack, const std::string& hint) {
  throw RegistryError(message, ErrorContext::for_pack(pack, hint));
}

std::string describe(const AttrValue& v) {
  std::ostringstream os;
  switch (v.kind()) {
    case AttrValue::Kind::Int: os << v.as_int(); break;
    case AttrValue::Kind::Float: os << v.as_float(); break;
    case AttrValue::Kind::String: os << '"' << v.as_string() << '"'; break;
    case AttrValue::Kind::Ints:
      for (int64_t x : v.as_ints()) os << x << ',';
      break;
    case AttrValue::Kind::Floats:
      for (double x : v.as_floats()) os << x << ',';
      break;
    case AttrValue::Kind::Strings:
      for (const auto& x : v.as_strings()) os << '"' << x << "\",";
      break;
    default: os << v.kind_name(); break;
  }
  return os.str();
}

std::string describe(const CustomOpSchema& s, const PackRef& pack) {
  std::ostringstream os;
  os << s.key();
  auto params = [&](const char* what, const std::vector<CustomOpSchema::Param>& ps) {
    for (const auto& p : ps) os << ' ' << what << ' ' << p.name << ':' << p.type << ':' << static_cast<int>(p.arity);
  };
  params("in", s.inputs());
  params("out", s.outputs());
  for (const auto& c : s.type_constraints()) {
    os << " constraint " << c.param << ':';
    for (DType t : c.allowed) os << static_cast<int>(t) << ',';
  }
  for (const auto& a : s.attributes()) {
    os << " attr " << a.name << ':' << static_cast<int>(a.type) << ':' << a.required;
    if (a.default_value) os << '=' << describe(*a.default_value);
  }
  const auto& rule = s.shape_rule();
  os << " infer " << static_cast<int>(rule.kind);
  for (const auto& [out, in] : rule.like) os << ' ' << out << '<' << in;
  // Callbacks cannot be compared: the same pack file is taken to mean the same callback.
  if (rule.kind == CustomOpSchema::ShapeRule::Kind::Callback) os << " from " << pack.describe();
  return os.str();
}

onnx::OpSchema::FormalParameterOption option_of(CustomOpSchema::Arity a) {
  switch (a) {
    case CustomOpSchema::Arity::Optional: return onnx::OpSchema::Optional;
    case CustomOpSchema::Arity::Variadic: return onnx::OpSchema::Variadic;
    case CustomOpSchema::Arity::Single: break;
  }
  return onnx::OpSchema::Single;
}

onnx::AttributeProto::AttributeType onnx_attr_type(AttrType t) {
  switch (t) {
    case AttrType::Int: return onnx::AttributeProto::INT;
    case AttrType::Ints: return onnx::AttributeProto::INTS;
    case AttrType::Float: return onnx::AttributeProto::FLOAT;
    case AttrType::Floats: return onnx::AttributeProto::FLOATS;
    case AttrType::String: return onnx::AttributeProto::STRING;
    case AttrType::Strings: return onnx::AttributeProto::STRINGS;
    case AttrType::Tensor: return onnx::AttributeProto::TENSOR;
    case AttrType::Tensors: return onnx::AttributeProto::TENSORS;
    case AttrType::Graph: return onnx::AttributeProto::GRAPH;
  }
  return onnx::AttributeProto::UNDEFINED;
}

// An optional attribute with its default (already fitted to the type by the SDK).
void add_attribute_with_default(onnx::OpSchema& o, const CustomOpSchema::Attribute& a) {
  const AttrValue& v = *a.default_value;
  const auto type = onnx_attr_type(a.type);
  switch (a.type) {
    case AttrType::Int: o.Attr(a.name, a.doc, type, v.as_int()); break;
    case AttrType::Float: o.Attr(a.name, a.doc, type, static_cast<float>(v.as_float())); break;
    case AttrType::String: o.Attr(a.name, a.doc, type, v.as_string()); break;
    case AttrType::Ints: o.Attr(a.name, a.doc, type, v.as_ints()); break;
    case AttrType::Floats:
      o.Attr(a.name, a.doc, type, std::vector<float>(v.as_floats().begin(), v.as_floats().end()));
      break;
    case AttrType::Strings: o.Attr(a.name, a.doc, type, v.as_strings()); break;
    case AttrType::Tensor: o.Attr(a.name, a.doc, type, to_tensor_proto(v.as_tensor(), "")); break;
    case AttrType::Tensors: {
      std::vector<onnx::TensorProto> tensors;
      for (const auto& t : v.as_tensors()) tensors.push_back(to_tensor_proto(t, ""));
      o.Attr(a.name, a.doc, type, tensors);
      break;
    }
    case AttrType::Graph: o.Attr(a.name, a.doc, type, false); break;
  }
}

// A node attribute as the SDK's callback sees it; sub-graphs are left out.
std::optional<ResolvedAttr> resolved_attr(const onnx::AttributeProto& a) {
  using T = ResolvedAttr::Type;
  switch (a.type()) {
    case onnx::AttributeProto::INT: return ResolvedAttr{a.name(), T::Int, AttrValue(a.i())};
    case onnx::AttributeProto::INTS:
      return ResolvedAttr{a.name(), T::Ints, AttrValue(std::vector<int64_t>(a.ints().begin(), a.ints().end()))};
    case onnx::AttributeProto::FLOAT: return ResolvedAttr{a.name(), T::Float, AttrValue(static_cast<double>(a.f()))};
    case onnx::AttributeProto::FLOATS:
      return ResolvedAttr{a.name(), T::Floats, AttrValue(std::vector<double>(a.floats().begin(), a.floats().end()))};
    case onnx::AttributeProto::STRING: return ResolvedAttr{a.name(), T::String, AttrValue(a.s())};
    case onnx::AttributeProto::STRINGS:
      return ResolvedAttr{a.name(), T::Strings,
                          AttrValue(std::vector<std::string>(a.strings().begin(), a.strings().end()))};
    case onnx::AttributeProto::TENSOR: return ResolvedAttr{a.name(), T::Tensor, AttrValue(from_tensor_proto(a.t()))};
    case onnx::AttributeProto::TENSORS: {
      std::vector<Tensor> tensors;
      for (const auto& t : a.tensors()) tensors.push_back(from_tensor_proto(t));
      return ResolvedAttr{a.name(), T::Tensors, AttrValue(std::move(tensors))};
    }
    default: return std::nullopt;
  }
}

bool has_elem_type(const onnx::TypeProto* t) {
  return t && t->has_tensor_type() && t->tensor_type().elem_type() != onnx::TensorProto::UNDEFINED;
}

onnx::InferenceFunction output_like_input(std::vector<std::pair<int, int>> like) {
  return [like = std::move(like)](onnx::InferenceContext& ctx) {
    for (const auto& [out, in] : like) {
      if (static_cast<size_t>(in) >= ctx.getNumInputs() || static_cast<size_t>(out) >= ctx.getNumOutputs()) continue;
      if (!has_elem_type(ctx.getInputType(in))) continue;
      onnx::propagateElemTypeFromInputToOutput(ctx, in, out);
      if (onnx::hasInputShape(ctx, in)) onnx::propagateShapeFromInputToOutput(ctx, in, out);
    }
  };
}

onnx::InferenceFunction callback_inference(SchemaInferenceFn fn, std::vector<std::string> attribute_names) {
  return [fn = std::move(fn), names = std::move(attribute_names)](onnx::InferenceContext& ctx) {
    SchemaInferenceInput in;
    for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
      const onnx::TypeProto* t = ctx.getInputType(i);
      in.inputs.push_back(has_elem_type(t) ? from_type_proto(*t) : TensorType{});
    }
    for (const auto& name : names)
      if (const auto* a = ctx.getAttribute(name))
        if (auto r = resolved_attr(*a)) in.attributes.push_back(std::move(*r));
    std::vector<TensorType> outs;
    try {
      outs = fn(in);
    } catch (const std::exception& e) {
      fail_shape_inference("the op pack's inference callback rejects the node: ", e.what());
    }
    if (outs.size() > ctx.getNumOutputs())
      fail_shape_inference("the op pack's inference callback returned ", outs.size(), " types for ",
                           ctx.getNumOutputs(), " outputs");
    for (size_t i = 0; i < outs.size(); ++i)
      if (outs[i].dtype != DType::Undefined) *ctx.getOutputType(i) = to_type_proto(outs[i]);
  };
}

std::string type_string(DType t) {
  onnx::TypeProto p;
  p.mutable_tensor_type()->set_elem_type(static_cast<int32_t>(t));
  return *onnx::Utils::DataTypeUtils::ToType(p);
}

onnx::OpSchema to_onnx(const CustomOpSchema& s, const PackRef& pack) {
  onnx::OpSchema o;
  o.SetName(s.name()).SetDomain(s.domain()).SinceVersion(s.since_version());
  o.SetDoc(s.doc_text());
  o.SetLocation(pack.file.empty() ? pack.id : pack.file, 0);
  int i = 0;
  for (const auto& p : s.inputs()) o.Input(i++, p.name, p.doc, p.type, option_of(p.arity));
  i = 0;
  for (const auto& p : s.outputs()) o.Output(i++, p.name, p.doc, p.type, option_of(p.arity));
  for (const auto& c : s.type_constraints()) {
    std::vector<std::string> allowed;
    for (DType t : c.allowed) allowed.push_back(type_string(t));
    o.TypeConstraint(c.param, allowed, c.doc);
  }
  for (const auto& a : s.attributes()) {
    if (a.default_value)
      add_attribute_with_default(o, a);
    else
      o.Attr(a.name, a.doc, onnx_attr_type(a.type), a.required);
  }
  const auto& rule = s.shape_rule();
  if (rule.kind == CustomOpSchema::ShapeRule::Kind::OutputLikeInput) {
    o.TypeAndShapeInferenceFunction(output_like_input(rule.like));
  } else if (rule.kind == CustomOpSchema::ShapeRule::Kind::Callback) {
    std::vector<std::string> names;
    for (const auto& a : s.attributes()) names.push_back(a.name);
    o.TypeAndShapeInferenceFunction(callback_inference(rule.fn, std::move(names)));
  }
  return o;
}

// ONNX only registers schemas of domains it knows, within their version range.
void ensure_domain(const CustomOpSchema& s, const PackRef& pack) {
  auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
  const auto known = ranges.Map().find(s.domain());
  if (known == ranges.Map().end()) {
    ranges.AddDomainToVersion(s.domain(), 1, kMaxCustomDomainVersion);
    return;
  }
  const auto [low, high] = known->second;
  if (s.since_version() < low || s.since_version() > high)
    fail("schema " + s.key() + ": ONNX knows domain " + s.domain() + " for versions " + std::to_string(low) + ".." +
             std::to_string(high),
         pack.describe(), "declare the schema for a version in that range");
}

void register_one(const CustomOpSchema& s, const PackRef& pack) {
  const std::string definition = describe(s, pack);
  if (auto it = registered.find(s.key()); it != registered.end()) {
    if (it->second.definition == definition) return;
    fail("schema " + s.key() + " from " + pack.describe() + " differs from the one " + it->second.pack +
             " registered earlier in this process",
         pack.describe(), "ONNX cannot replace a registered schema: export in a new process, or keep one definition");
  }
  if (const auto* existing = onnx::OpSchemaRegistry::Schema(s.name(), s.since_version(), s.domain());
      existing && existing->since_version() == s.since_version())
    fail("schema " + s.key() + " from " + pack.describe() + " is already defined by ONNX (" + existing->file() + ")",
         pack.describe(), "pick a domain of your own, e.g. com.yourcompany");
  ensure_domain(s, pack);
  onnx::OpSchema schema = to_onnx(s, pack);
  try {
    // RegisterSchema only prints what is wrong to stderr; Finalize (on a copy: it accumulates
    // the arities, so it must run once per schema) throws it.
    onnx::OpSchema probe = schema;
    probe.Finalize();
  } catch (const std::exception& e) {
    fail("schema " + s.key() + " from " + pack.describe() + " is not a valid ONNX schema: " + e.what(), pack.describe(),
         "check the type strings (\"T\" with a type_constraint, or e.g. \"tensor(int64)\")");
  }
  onnx::RegisterSchema(std::move(schema));
  const auto* done = onnx::OpSchemaRegistry::Schema(s.name(), s.since_version(), s.domain());
  if (!done || done->since_version() != s.since_version())
    fail("ONNX did not register schema " + s.key() + " from " + pack.describe(), pack.describe(),
         "this is an onnxport bug");
  registered.emplace(s.key(), Registered{definition, pack.describe()});
}

}  // namespace

void register_custom_schemas(const Registry& registry) {
  std::lock_guard<std::mutex> lock(registered_mutex);
  for (const auto& [key, entry] : registry.schemas()) register_one(entry.schema, entry.pack);
}

bool has_custom_schema(const std::string& domain, const std::string& op_type) {
  return onnx::OpSchemaRegistry::Schema(op_type, domain) != nullptr;
}

}  // namespace onnxport::core
