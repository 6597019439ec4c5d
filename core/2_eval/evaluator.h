#pragma once
// The ONNX evaluator: runs a ModelProto with ATen, node by node in graph order, sub-graphs
// (If, Loop, Scan) through the same runner with the enclosing values visible. Kernels come from
// the standard table (kernel.h) for the default domain; other domains need a hook.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "2_eval/kernel.h"

namespace onnxport::core::eval {

// Why a model cannot be evaluated: the node, its op and domain, and what is missing.
class EvalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Called after each top-level node with its outputs (for per-node comparisons).
using NodeObserver = std::function<void(const onnx::NodeProto& node, const std::vector<EvalValue>& outputs)>;

// A kernel for an op of another domain (an op pack's evaluator hook), looked up by domain and op.
using DomainKernelLookup = std::function<const Kernel*(const std::string& domain, const std::string& op_type)>;

class ModelEvaluator {
 public:
  // `base_dir`: where the model's external data files are (the model file's directory).
  ModelEvaluator(const onnx::ModelProto& model, std::string base_dir, DomainKernelLookup other_domains = {});

  // The graph's inputs that initializers do not supply, in order.
  const std::vector<std::string>& input_names() const { return input_names_; }
  const std::vector<std::string>& output_names() const { return output_names_; }

  // Runs the graph on one value per input (by position), returning one value per output.
  std::vector<EvalValue> run(const std::vector<EvalValue>& inputs, const NodeObserver& observer = {}) const;

  // Nodes (at any depth) that no kernel covers at the model's opsets: "Op (domain) at opset N".
  std::vector<std::string> unsupported_nodes() const;
  // EvalError listing them all ("no kernel for A; B"), when there are any.
  void check_supported() const;

 private:
  struct Scope;
  std::vector<EvalValue> run_graph(const onnx::GraphProto& graph, const Scope* outer,
                                   const std::map<std::string, EvalValue>& bound, const NodeObserver* observer) const;
  const Kernel& kernel_for(const onnx::NodeProto& node) const;
  int opset_of(const std::string& domain) const;

  const onnx::ModelProto& model_;
  std::string base_dir_;
  DomainKernelLookup other_domains_;
  std::map<std::string, int> opsets_;  // "" is the default domain
  std::map<std::string, EvalValue> initializers_;
  std::vector<std::string> input_names_, output_names_;
};

// The initializer's data, read from its external file under `base_dir` when it has one.
at::Tensor load_initializer(const onnx::TensorProto& t, const std::string& base_dir);

}  // namespace onnxport::core::eval
