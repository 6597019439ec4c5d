#include "1_base/onnx_ir.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <unordered_set>

#include <cstring>

#include "onnxport/errors.h"

namespace onnxport::core {

std::unique_ptr<CoreValue> CoreValue::make_tensor(std::string name, TensorType type, bool scalar) {
  auto v = std::make_unique<CoreValue>();
  v->kind_ = Kind::Tensor;
  v->name_ = std::move(name);
  v->type_ = std::move(type);
  v->scalar_ = scalar;
  return v;
}

std::unique_ptr<CoreValue> CoreValue::make_constant(Constant payload, TensorType type) {
  auto v = std::make_unique<CoreValue>();
  v->kind_ = Kind::Tensor;
  v->scalar_ = !std::holds_alternative<Tensor>(payload);
  v->constant_ = std::move(payload);
  v->type_ = std::move(type);
  return v;
}

std::unique_ptr<CoreValue> CoreValue::make_none_value() {
  auto v = std::make_unique<CoreValue>();
  v->kind_ = Kind::None;
  return v;
}

std::unique_ptr<CoreValue> CoreValue::make_list_value(std::vector<Value*> items) {
  auto v = std::make_unique<CoreValue>();
  v->kind_ = Kind::List;
  v->elements_ = std::move(items);
  return v;
}

std::unique_ptr<CoreValue> CoreValue::make_sequence(std::string name, TensorType element_type) {
  auto v = make_tensor(std::move(name), TensorType{});
  v->set_sequence(std::move(element_type));
  return v;
}

onnx::TypeProto sequence_type_proto(const TensorType& element) {
  onnx::TypeProto out;
  *out.mutable_sequence_type()->mutable_elem_type() = to_type_proto(element);
  return out;
}

onnx::TypeProto optional_type_proto(const TensorType& element) {
  onnx::TypeProto out;
  *out.mutable_optional_type()->mutable_elem_type() = to_type_proto(element);
  return out;
}

onnx::TypeProto type_proto_of(const Value& v) {
  if (v.is_sequence()) return sequence_type_proto(v.type());
  if (v.is_optional()) return optional_type_proto(v.type());
  return to_type_proto(v.type());
}

onnx::TypeProto type_proto_of(const GraphIO& io) {
  if (io.sequence) return sequence_type_proto(io.type);
  if (io.optional) return optional_type_proto(io.type);
  return to_type_proto(io.type);
}

namespace {
void collect_captured(const onnx::GraphProto& g, std::unordered_set<std::string>& defined,
                      std::vector<std::string>& out) {
  for (const auto& in : g.input()) defined.insert(in.name());
  for (const auto& init : g.initializer()) defined.insert(init.name());
  for (const auto& n : g.node()) {
    for (const auto& in : n.input())
      if (!in.empty() && !defined.count(in)) out.push_back(in);
    for (const auto& a : n.attribute())
      if (a.has_g()) collect_captured(a.g(), defined, out);
    for (const auto& o : n.output()) defined.insert(o);
  }
  for (const auto& o : g.output())
    if (!defined.count(o.name())) out.push_back(o.name());
}

void rename_in_graph(onnx::GraphProto& g, const std::string& from, const std::string& to) {
  for (auto& n : *g.mutable_node()) {
    for (auto& in : *n.mutable_input())
      if (in == from) in = to;
    rename_captured(n, from, to);
  }
  for (auto& o : *g.mutable_output())
    if (o.name() == from) o.set_name(to);
}
}  // namespace

std::vector<std::string> captured_names(const onnx::NodeProto& node) {
  std::vector<std::string> out;
  for (const auto& a : node.attribute()) {
    if (!a.has_g()) continue;
    std::unordered_set<std::string> defined;
    collect_captured(a.g(), defined, out);
  }
  return out;
}

void rename_captured(onnx::NodeProto& node, const std::string& from, const std::string& to) {
  for (auto& a : *node.mutable_attribute())
    if (a.has_g()) rename_in_graph(*a.mutable_g(), from, to);
}

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const char* name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

bool is_standard_domain(const onnx::NodeProto& node) { return node.domain().empty() || node.domain() == "ai.onnx"; }

bool onnx_defines(const std::string& op_type) { return onnx::OpSchemaRegistry::Schema(op_type, "") != nullptr; }

void replace_uses(onnx::NodeProto& node, const std::unordered_map<std::string, std::string>& renames) {
  if (renames.empty()) return;
  for (auto& name : *node.mutable_input())
    if (auto r = renames.find(name); r != renames.end()) name = r->second;
  for (const auto& name : captured_names(node))
    if (auto r = renames.find(name); r != renames.end()) rename_captured(node, name, r->second);
}

void replace_uses(std::vector<OnnxNode>& nodes, const std::unordered_map<std::string, std::string>& renames) {
  for (auto& node : nodes) replace_uses(node.proto, renames);
}

TensorType type_of_tensor(const Tensor& t) {
  TensorType type;
  type.dtype = t.dtype();
  std::vector<Dim> dims;
  for (int64_t d : t.shape()) dims.push_back(Dim::fixed(d));
  type.shape = dims;
  return type;
}

TensorType from_type_proto(const onnx::TypeProto& t) {
  TensorType out;
  if (!t.has_tensor_type()) return out;
  const auto& tt = t.tensor_type();
  out.dtype = static_cast<DType>(tt.elem_type());
  if (tt.has_shape()) {
    std::vector<Dim> dims;
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value())
        dims.push_back(Dim::fixed(d.dim_value()));
      else if (d.has_dim_param() && !d.dim_param().empty())
        dims.push_back(Dim::named(d.dim_param()));
      else
        dims.push_back(Dim::unknown());
    }
    out.shape = std::move(dims);
  }
  return out;
}

onnx::TypeProto to_type_proto(const TensorType& t) {
  onnx::TypeProto out;
  auto* tt = out.mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(t.dtype));
  if (t.shape) {
    auto* shape = tt->mutable_shape();
    for (const Dim& d : *t.shape) {
      auto* dim = shape->add_dim();
      if (d.kind == Dim::Kind::Static)
        dim->set_dim_value(d.value);
      else if (d.kind == Dim::Kind::Symbolic)
        dim->set_dim_param(d.symbol);
    }
  }
  return out;
}

onnx::TensorProto to_tensor_proto(const Tensor& t, const std::string& name) {
  onnx::TensorProto p;
  if (!name.empty()) p.set_name(name);
  p.set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.shape()) p.add_dims(d);
  if (t.dtype() == DType::String) throw ExportError("string tensors cannot be ONNX constants here");
  p.set_raw_data(t.data(), t.nbytes());
  return p;
}

Tensor from_tensor_proto(const onnx::TensorProto& p) {
  const DType dtype = static_cast<DType>(p.data_type());
  std::vector<int64_t> shape(p.dims().begin(), p.dims().end());
  // Checked before anything is allocated: the dims come from the file.
  int64_t n = 1, nbytes = static_cast<int64_t>(dtype_size(dtype));
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || __builtin_mul_overflow(nbytes, d, &nbytes))
      throw ExportError("malformed tensor '" + p.name() + "': its dims have no size");
  if (p.has_raw_data()) {
    if (static_cast<int64_t>(p.raw_data().size()) != nbytes)
      throw ExportError("malformed tensor '" + p.name() + "': " + std::to_string(p.raw_data().size()) +
                        " bytes of data for " + std::to_string(nbytes));
    std::vector<uint8_t> bytes(p.raw_data().begin(), p.raw_data().end());
    return Tensor(dtype, shape, std::move(bytes));
  }
  const auto typed_count = std::max({p.float_data_size(), p.double_data_size(), p.int64_data_size(), p.int32_data_size()});
  if (n > typed_count)
    throw ExportError("malformed tensor '" + p.name() + "': " + std::to_string(typed_count) + " values for " +
                      std::to_string(n) + " elements");
  std::vector<uint8_t> bytes(static_cast<size_t>(nbytes));
  auto copy_from = [&](const auto& field, auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n && i < field.size(); ++i) {
      T v = static_cast<T>(field.Get(static_cast<int>(i)));
      std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
    }
  };
  switch (dtype) {
    case DType::Float: copy_from(p.float_data(), float{}); break;
    case DType::Double: copy_from(p.double_data(), double{}); break;
    case DType::Int64: copy_from(p.int64_data(), int64_t{}); break;
    case DType::Int32: copy_from(p.int32_data(), int32_t{}); break;
    case DType::Bool:
    case DType::UInt8:
    case DType::Int8: copy_from(p.int32_data(), uint8_t{}); break;
    default: throw ExportError(std::string("cannot read constant of type ") + dtype_name(dtype));
  }
  return Tensor(dtype, shape, std::move(bytes));
}

int ir_version_for_opset(int opset) {
  if (opset <= 8) return 3;
  if (opset == 9) return 4;
  if (opset == 10) return 5;
  if (opset == 11) return 6;
  if (opset <= 14) return 7;
  return 8;
}

}  // namespace onnxport::core
