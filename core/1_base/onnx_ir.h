#pragma once
// Core-owned ONNX IR: the nodes symbolics create, initializers that borrow parameter memory,
// graph inputs/outputs and the value types ONNX inference produced.
#include <onnx/onnx_pb.h>

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnxport/tensor.h"
#include "onnxport/types.h"
#include "onnxport/value.h"

namespace onnxport::core {

// Where a node came from: the op pack and the TorchScript node it converted.
struct NodeOrigin {
  std::string pack;         // pack id
  std::string pack_file;    // the pack's shared library (for messages)
  std::string torch_op;     // "aten::_convolution"
  std::string module_path;  // "features.0"
  std::string source;       // "model.py:12"
};

struct OnnxNode {
  onnx::NodeProto proto;
  NodeOrigin origin;
};

struct Initializer {
  std::string name;
  Tensor tensor;
  std::string doc;  // how the value was derived at export, when it is not the parameter as saved
};

struct GraphIO {
  std::string name;
  TensorType type;        // a sequence or optional output: the type of its elements
  bool sequence = false;  // a list whose length is only known at run time
  bool optional = false;  // a tensor or nothing (a value None on some paths), known at run time
  // An input that stays in the graph even where no node reads it (with drop_unused_inputs).
  bool keep = false;
  // An input a scripted forward declares Optional: kept though no node reads it, it is declared
  // optional (from opset 15, where ONNX has optional types), as torch.onnx declares it.
  bool declared_optional = false;
};

struct OnnxModel {
  std::vector<OnnxNode> nodes;
  std::vector<Initializer> initializers;
  std::vector<GraphIO> inputs;
  std::vector<GraphIO> outputs;
  std::map<std::string, int> opset_imports;                      // "" is the default domain
  std::unordered_map<std::string, onnx::TypeProto> value_types;  // from per-node inference
};

// The host-side Value: the SDK class with its fields reachable by the core.
class CoreValue : public Value {
 public:
  static std::unique_ptr<CoreValue> make_tensor(std::string name, TensorType type, bool scalar = false);
  static std::unique_ptr<CoreValue> make_constant(Constant payload, TensorType type);
  static std::unique_ptr<CoreValue> make_none_value();
  static std::unique_ptr<CoreValue> make_list_value(std::vector<Value*> items);
  static std::unique_ptr<CoreValue> make_sequence(std::string name, TensorType element_type);

  void set_name(std::string n) { name_ = std::move(n); }
  void set_type(TensorType t) { type_ = std::move(t); }
  void set_scalar(bool s) { scalar_ = s; }
  void set_complex(bool c) { complex_ = c; }
  void set_sequence(TensorType element_type) {
    kind_ = Kind::Sequence;
    type_ = std::move(element_type);
  }
  void set_optional(TensorType element_type) {
    kind_ = Kind::Optional;
    type_ = std::move(element_type);
  }
};

// A tensor's dtype and (fully static) shape.
TensorType type_of_tensor(const Tensor& t);
// TensorType <-> onnx::TypeProto.
TensorType from_type_proto(const onnx::TypeProto& t);
onnx::TypeProto to_type_proto(const TensorType& t);
onnx::TypeProto sequence_type_proto(const TensorType& element);
onnx::TypeProto optional_type_proto(const TensorType& element);
// The TypeProto of a tensor, sequence or optional value, or of a graph input or output.
onnx::TypeProto type_proto_of(const Value& v);
onnx::TypeProto type_proto_of(const GraphIO& io);

// Names a node's sub-graphs (If branches, Loop bodies, at any depth) read from enclosing
// graphs: uses of outer values that the node's own input list does not show.
std::vector<std::string> captured_names(const onnx::NodeProto& node);
// Renames every use of `from` inside the node's sub-graphs.
void rename_captured(onnx::NodeProto& node, const std::string& from, const std::string& to);
// The node's attribute of that name, or nullptr.
const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const char* name);
// ONNX's default domain ("" or "ai.onnx"), where the standard ops' schemas live.
bool is_standard_domain(const onnx::NodeProto& node);
// Whether some opset of the linked ONNX defines `op_type` in the default domain. A node of the
// default domain whose op it does not define (MQBench's FixedPerTensorAffine, written as torch.onnx
// writes it) has no schema to check it by: the export warns of it and the checker passes over it.
bool onnx_defines(const std::string& op_type);
// Replaces every read of a name in `renames` (node inputs, sub-graph captures) by its new name.
// Graph outputs and the nodes' own outputs are left alone.
void replace_uses(std::vector<OnnxNode>& nodes, const std::unordered_map<std::string, std::string>& renames);
// Replaces one node's reads (see replace_uses).
void replace_uses(onnx::NodeProto& node, const std::unordered_map<std::string, std::string>& renames);
// Tensor -> TensorProto (copies the bytes; used for small constants only).
onnx::TensorProto to_tensor_proto(const Tensor& t, const std::string& name);
Tensor from_tensor_proto(const onnx::TensorProto& t);

int ir_version_for_opset(int opset);

}  // namespace onnxport::core
