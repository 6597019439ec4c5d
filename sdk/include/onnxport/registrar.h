#pragma once
// What an op pack registers: (torch op, since-opset, symbolic) triples and the custom ONNX
// domains it emits. The host hands a Registrar to the pack's entry point.
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "onnxport/args.h"
#include "onnxport/graph.h"
#include "onnxport/op_evaluator.h"
#include "onnxport/schema.h"
#include "onnxport/torch_node.h"

namespace onnxport {

using Symbolic = std::function<std::vector<Value*>(Graph&, const TorchNode&, const Args&)>;

struct Registration {
  // "aten::relu", "vendor::fancy": every overload of the op; "aten::slice.t": only the nodes
  // whose schema is that overload (they prefer it over the name's mapping).
  std::string torch_op;
  int since_opset = 1;  // used for every target opset >= since_opset (until a later entry)
  Symbolic fn;
  bool is_override = false;  // may replace another pack's entry for the same key
};

struct DomainDecl {
  std::string domain;  // "com.vendor"
  int version = 1;
};

class Registrar {
 public:
  // fn may return Value* (one output) or std::vector<Value*>.
  template <class F>
  void add(const std::string& torch_op, int since_opset, F&& fn) {
    add_symbolic(torch_op, since_opset, wrap(std::forward<F>(fn)), false);
  }
  // Same, but explicitly replaces an entry another pack registered for the same key.
  template <class F>
  void add_override(const std::string& torch_op, int since_opset, F&& fn) {
    add_symbolic(torch_op, since_opset, wrap(std::forward<F>(fn)), true);
  }
  // A symbolic for nodes that read or make complex values (Value::is_complex: real tensors with a
  // trailing dimension of 2). A node with a complex input or output is converted only by such
  // an entry; its complex outputs are marked complex by the host.
  template <class F>
  void add_complex(const std::string& torch_op, int since_opset, F&& fn) {
    add_symbolic(complex_key(torch_op), since_opset, wrap(std::forward<F>(fn)), false);
  }
  // For ops that act on the real and the imaginary part alike (reshape, slice, cat, sum, ...):
  // every symbolic this pack registered so far for these ops also converts complex values, by
  // running once on the real parts and once on the imaginary parts. Every op named must have
  // been registered by this pack.
  void add_complex_componentwise(const std::vector<std::string>& torch_ops);
  // The registry key of an op's complex entry: "aten::reshape[complex]".
  static std::string complex_key(const std::string& torch_op) { return torch_op + "[complex]"; }

  void declare_domain(const std::string& domain, int version);
  // Optional: the ONNX schema of a custom-domain op the pack emits (see schema.h). The domain
  // must be declared by this pack. Validated here: a malformed schema fails the pack's load.
  void add_schema(CustomOpSchema schema);
  // Optional: how to compute a custom-domain op the pack emits (see op_evaluator.h), so that
  // `onnxport run` and `verify` can run models that contain it. The domain must be declared by
  // this pack.
  void add_evaluator(const std::string& domain, const std::string& op_type, OpEvaluator fn);

  void add_symbolic(const std::string& torch_op, int since_opset, Symbolic fn, bool is_override);
  const std::vector<Registration>& registrations() const { return registrations_; }
  const std::vector<DomainDecl>& domains() const { return domains_; }
  const std::vector<CustomOpSchema>& schemas() const { return schemas_; }
  const std::vector<EvaluatorDecl>& evaluators() const { return evaluators_; }

 private:
  template <class F>
  static Symbolic wrap(F&& fn) {
    using R = std::invoke_result_t<F&, Graph&, const TorchNode&, const Args&>;
    if constexpr (std::is_convertible_v<R, Value*>) {
      return [f = std::forward<F>(fn)](Graph& g, const TorchNode& n, const Args& a) {
        return std::vector<Value*>{f(g, n, a)};
      };
    } else {
      return Symbolic(std::forward<F>(fn));
    }
  }
  std::vector<Registration> registrations_;
  std::vector<DomainDecl> domains_;
  std::vector<CustomOpSchema> schemas_;
  std::vector<EvaluatorDecl> evaluators_;  // last: packs built before it keep their layout
};

}  // namespace onnxport
