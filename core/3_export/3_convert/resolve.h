#pragma once
// The resolve stage: every TorchScript node kind of the prepared graph (branches and loop bodies
// too) is looked up in the registry once, for the target opset, and recorded as mapped by an op
// pack, kept as a fallback node (operator_export_type), converted by the core itself, or missing.
// The coverage report, the fallback modes and the conversion all read this one result.
//
// Dispatch is overload-aware: a node whose schema names an overload (`aten::slice.t`, the list
// form of `aten::slice.Tensor`) goes to a mapping registered for that overload when there is one,
// else to the mapping registered for the op's name (every overload).
#include <torch/script.h>

#include <map>
#include <set>
#include <string>

#include "onnxport/options.h"
#include "onnxport/registry/registry.h"

namespace onnxport::core {

// "aten::slice.t" for a node whose schema is that overload, "prim::ListConstruct" for one
// without a named overload: the key the resolution is recorded under.
std::string dispatch_key(const torch::jit::Node* n);

struct ResolvedOp {
  const RegistryEntry* entry = nullptr;  // the op pack mapping picked for the target opset
  bool fallback = false;                 // kept as an ATen / fallthrough node
  bool core = false;                     // converted by the core (control flow, constants, attributes)
};

class Resolution {
 public:
  Resolution(const Registry& registry, int opset) : registry_(&registry), opset_(opset) {}

  // How a node of the graph converts (an ExportError if its kind was not resolved).
  const ResolvedOp& of(const torch::jit::Node* n) const;
  // An op the converter emits on its own behalf (writes through views need aten::slice_scatter,
  // ...): looked up on first use and remembered; nullptr if unmapped.
  const RegistryEntry* helper(const std::string& kind) const;

  const std::map<std::string, ResolvedOp>& ops() const { return ops_; }
  // Namespaces of the ops kept in their own domain (onnx_fallthrough): "aten", "vendor", ...
  std::set<std::string> fallthrough_domains(OperatorExportType type) const;
  int opset() const { return opset_; }
  const Registry& registry() const { return *registry_; }

 private:
  friend Resolution resolve_ops(const torch::jit::Graph&, const Registry&, const ExportOptions&, const std::string&);
  const Registry* registry_;
  int opset_;
  std::map<std::string, ResolvedOp> ops_;
  mutable std::map<std::string, const RegistryEntry*> helpers_;
};

// Throws UnsupportedOpError listing, at once, every op that is neither mapped nor kept as a
// fallback node: count, module paths and "supported from opset N" where a later opset has it.
Resolution resolve_ops(const torch::jit::Graph& graph, const Registry& registry, const ExportOptions& options,
                       const std::string& model_file);

}  // namespace onnxport::core
