#pragma once
// The host's implementation of the SDK Graph: turns g.op calls into ONNX nodes, checks them
// against ONNX's schemas (strict mode), and types their outputs with ONNX's per-node inference.
#include <functional>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "1_base/onnx_ir.h"
#include "onnxport/errors.h"
#include "onnxport/graph.h"
#include "onnxport/options.h"

namespace onnxport::core {

// Computes one node on small constant inputs (nullopt: leave the node in the graph). The core
// passes the ONNX evaluator (2_eval/fold_kernels.h); the builder itself stays free of torch.
using ConstantEvaluator =
    std::function<std::optional<Tensor>(const onnx::NodeProto&, const std::vector<Tensor>&, int opset)>;

struct BuilderOptions {
  int opset = kDefaultOpset;
  bool training = false;
  bool strict = true;
  std::map<std::string, int> custom_domains;  // declared by packs, overridden by custom_opsets
  // Ids of Python op packs: torch.onnx symbolics declare no domains, so a domain they emit that
  // custom_opsets does not set is imported at version 1, as torch.onnx does.
  std::set<std::string> packs_with_open_domains;
  // Nodes whose inputs are all small constants are computed as they are made, so that sizes,
  // ranks and flags computed from constants stay constants; unset: nothing is folded eagerly.
  ConstantEvaluator evaluate;
};

class GraphBuilder : public Graph {
 public:
  GraphBuilder(OnnxModel& model, BuilderOptions options);

  int opset() const override { return options_.opset; }
  bool training() const override { return options_.training; }

  // The node being converted: every node created until the next call carries this origin.
  void set_origin(NodeOrigin origin) { origin_ = std::move(origin); }
  const NodeOrigin& origin() const { return origin_; }
  // Strict schema/inference checking; switched off for dry runs whose result is discarded.
  bool strict() const { return options_.strict; }
  void set_strict(bool strict) { options_.strict = strict; }

  // Values the driver creates for TorchScript inputs, constants and parameters.
  CoreValue* add_input(const std::string& name, const TensorType& type);
  CoreValue* add_torch_constant(Value::Constant payload, TensorType type);
  CoreValue* add_parameter(const std::string& name, const Tensor& t);
  CoreValue* own(std::unique_ptr<CoreValue> v);

  // The ONNX name of a tensor value, creating its Constant/initializer if it has none yet.
  const std::string& materialize(Value* v);
  // An ONNX optional holding nothing, of the given element type (the Optional op's `type`
  // attribute, which g.op's attributes cannot express).
  Value* empty_optional(const TensorType& element);
  // Makes input `v` of the sub-graph being built an ONNX optional of its type (a Subgraph's
  // inputs declare tensors and sequences only).
  void declare_optional_input(Value* v);
  // Gives an ONNX output the requested name (renaming the producer, or adding an Identity).
  void name_output(Value* v, const std::string& name);

 protected:
  std::vector<Value*> add_node(const std::string& name, const std::vector<Value*>& inputs, const Attrs& attrs,
                               int num_outputs) override;
  Value* add_constant(const Tensor& t) override;
  Value* make_none() override;
  Value* make_list(const std::vector<Value*>& items) override;

 private:
  // Nodes go to the innermost open sub-graph, or to the model.
  std::vector<OnnxNode>& current_nodes() { return scopes_.empty() ? model_.nodes : scopes_.back().nodes; }
  void add_to_current(OnnxNode node);
  Value* fold_small_constants(const OnnxNode& node, const std::vector<Value*>& inputs);
  onnx::GraphProto build_subgraph(const std::string& name, const Subgraph& subgraph);
  void type_control_flow_outputs(const onnx::NodeProto& node, const std::vector<CoreValue*>& outputs);
  std::string unique_node_name(const std::string& op_type);
  void infer_types(OnnxNode& node, const std::vector<CoreValue*>& outputs);
  // False for a default-domain op no ONNX opset defines, which is written unchecked.
  bool verify_schema(const OnnxNode& node, const std::string& domain);
  ErrorContext node_context(const std::string& hint) const;  // the node being made: pack, op, module
  [[noreturn]] void fail_node(const std::string& message, const std::string& hint = "");
  // What ONNX's schema (or a pack's declared schema) says about the node: a SchemaError.
  [[noreturn]] void reject_by_schema(const std::string& message, const std::string& hint = "");

  struct Scope {
    std::vector<OnnxNode> nodes;
    std::vector<onnx::ValueInfoProto> inputs;
    std::unordered_set<std::string> produced;
  };
  std::vector<Scope> scopes_;  // open sub-graphs, innermost last
  OnnxModel& model_;
  BuilderOptions options_;
  NodeOrigin origin_;
  std::deque<std::unique_ptr<CoreValue>> values_;
  std::unordered_map<const Value*, std::string> pending_initializer_names_;
  std::unordered_map<std::string, onnx::TensorProto> constant_data_;  // small constants, for inference
  std::unordered_map<std::string, int> name_counts_;
  std::pair<std::string, std::string> prefix_of_path_;  // the last module path's node-name prefix
  std::unordered_set<std::string> used_names_;
  std::unordered_set<std::string> schemaless_outputs_;  // outputs of custom-domain ops ONNX has no schema for
  int next_constant_ = 0;
};

}  // namespace onnxport::core
