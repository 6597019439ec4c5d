#pragma once
// An op pack's evaluator for the ops it emits in its custom domains: `onnxport run` and
// `onnxport verify` call it for every node of that op. It sees the node's attributes and its
// inputs as plain buffers (no torch types) and returns one tensor per output.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "onnxport/tensor.h"

namespace onnxport {

// The node being evaluated, as the host reads it from the model.
class EvalNode {
 public:
  virtual ~EvalNode() = default;
  virtual const std::string& domain() const = 0;
  virtual const std::string& op_type() const = 0;
  virtual const std::string& name() const = 0;
  virtual int opset() const = 0;            // the model's import of the node's domain
  virtual size_t output_count() const = 0;  // outputs the node names
  // Attributes by name; nullopt when absent or of another type.
  virtual std::optional<int64_t> attr_int(const std::string& name) const = 0;
  virtual std::optional<double> attr_float(const std::string& name) const = 0;
  virtual std::optional<std::string> attr_string(const std::string& name) const = 0;
  virtual std::optional<std::vector<int64_t>> attr_ints(const std::string& name) const = 0;
  virtual std::optional<std::vector<double>> attr_floats(const std::string& name) const = 0;
};

// Inputs are contiguous, row-major and borrowed for the call; an omitted optional input is an
// undefined Tensor. Returns a tensor per output (owning its bytes: Tensor(dtype, shape, bytes)).
// Throw ArgumentError to refuse a node: the host names the node, op and pack.
using OpEvaluator = std::function<std::vector<Tensor>(const EvalNode& node, const std::vector<Tensor>& inputs)>;

struct EvaluatorDecl {
  std::string domain;   // "com.vendor": declared by the same pack
  std::string op_type;  // "FancyOp"
  OpEvaluator fn;
};

}  // namespace onnxport
