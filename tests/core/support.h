#pragma once
// Helpers for the core tests: tensors and types from literals, hand-made ONNX nodes and
// attributes, and readers for what the core produced (attributes, initializers, node lists).
#include <onnx/onnx_pb.h>

#include <cstring>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "1_base/onnx_ir.h"
#include "3_export/5_passes/passes.h"  // find_initializer
#include "onnxport/tensor.h"
#include "onnxport/types.h"

namespace onnxport::core_test {

using core::Initializer;
using core::OnnxModel;
using core::OnnxNode;

// ---- tensors and types -------------------------------------------------------------------

inline Tensor float_tensor(std::vector<int64_t> shape, const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return Tensor(DType::Float, std::move(shape), std::move(bytes));
}

inline Tensor int64_tensor(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(int64_t));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return Tensor(DType::Int64, std::move(shape), std::move(bytes));
}

inline TensorType tensor_type(DType dtype, std::vector<int64_t> dims) {
  std::vector<Dim> shape;
  for (int64_t d : dims) shape.push_back(Dim::fixed(d));
  return TensorType{dtype, std::move(shape)};
}
inline TensorType float_type(std::vector<int64_t> dims) { return tensor_type(DType::Float, std::move(dims)); }
inline TensorType scalar_type(DType dtype) { return tensor_type(dtype, {}); }

// ---- hand-made ONNX nodes ----------------------------------------------------------------

inline onnx::AttributeProto attr_i(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}
inline onnx::AttributeProto attr_f(const std::string& name, float v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}
inline onnx::AttributeProto attr_ints(const std::string& name, std::initializer_list<int64_t> v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
  return a;
}
inline onnx::AttributeProto attr_g(const std::string& name, onnx::GraphProto g) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::GRAPH);
  *a.mutable_g() = std::move(g);
  return a;
}
inline onnx::AttributeProto attr_t(const std::string& name, const Tensor& t) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::TENSOR);
  *a.mutable_t() = core::to_tensor_proto(t, "");
  return a;
}

inline onnx::NodeProto node_proto(const std::string& op, const std::vector<std::string>& inputs,
                                  const std::vector<std::string>& outputs,
                                  const std::vector<onnx::AttributeProto>& attrs = {}) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(op + "_" + (outputs.empty() ? std::string("node") : outputs[0]));
  for (const auto& i : inputs) n.add_input(i);
  for (const auto& o : outputs) n.add_output(o);
  for (const auto& a : attrs) *n.add_attribute() = a;
  return n;
}

// A sub-graph of one node whose first output is the graph's output (an If's branch): the node
// reads values of the outer graph by name.
inline onnx::GraphProto one_node_branch(const std::string& name, onnx::NodeProto node) {
  onnx::GraphProto g;
  g.set_name(name);
  g.add_output()->set_name(node.output(0));
  *g.add_node() = std::move(node);
  return g;
}

inline OnnxNode onnx_node(const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs,
                          const std::vector<onnx::AttributeProto>& attrs = {}) {
  OnnxNode n;
  n.proto = node_proto(op, inputs, outputs, attrs);
  return n;
}

inline OnnxNode constant_node(const std::string& output, const Tensor& t) {
  return onnx_node("Constant", {}, {output}, {attr_t("value", t)});
}

// A graph input/output with its type also recorded in value_types (as the builder does).
inline void add_input(OnnxModel& m, const std::string& name, const TensorType& type) {
  m.inputs.push_back(core::GraphIO{name, type});
  m.value_types[name] = core::to_type_proto(type);
}
inline void add_output(OnnxModel& m, const std::string& name, const TensorType& type = {}) {
  m.outputs.push_back(core::GraphIO{name, type});
}

// ---- readers -----------------------------------------------------------------------------

inline const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

inline const onnx::AttributeProto& attr(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = find_attr(n, name);
  if (!a) throw std::out_of_range(n.op_type() + " node " + n.name() + " has no attribute " + name);
  return *a;
}

inline std::vector<std::string> op_types(const std::vector<OnnxNode>& nodes) {
  std::vector<std::string> out;
  for (const auto& n : nodes) out.push_back(n.proto.op_type());
  return out;
}
inline std::vector<std::string> op_types(const onnx::GraphProto& g) {
  std::vector<std::string> out;
  for (const auto& n : g.node()) out.push_back(n.op_type());
  return out;
}

inline std::vector<std::string> inputs_of(const onnx::NodeProto& n) { return {n.input().begin(), n.input().end()}; }
inline std::vector<std::string> outputs_of(const onnx::NodeProto& n) { return {n.output().begin(), n.output().end()}; }

inline std::vector<std::string> initializer_names(const OnnxModel& m) {
  std::vector<std::string> out;
  for (const auto& i : m.initializers) out.push_back(i.name);
  return out;
}

inline const Tensor& initializer(const OnnxModel& m, const std::string& name) {
  const Initializer* i = find_initializer(m, name);
  if (!i) throw std::out_of_range("no initializer " + name);
  return i->tensor;
}

inline std::vector<int64_t> dims_of(const onnx::TypeProto& t) {
  std::vector<int64_t> out;
  for (const auto& d : t.tensor_type().shape().dim()) out.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return out;
}

}  // namespace onnxport::core_test
