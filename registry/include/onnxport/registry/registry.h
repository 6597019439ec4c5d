#pragma once
// The symbolic registry: (torch op, since-opset) -> symbolic, with the pack that provided it.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "onnxport/registrar.h"
#include "onnxport/registry/python_packs.h"

namespace onnxport {

struct PackRef {
  std::string id;                // "nn"
  std::string file;              // absolute path of the .so ("" for packs registered in-process)
  std::string describe() const;  // "nn (/abs/libonnxport_nn.so)"
};

struct RegistryEntry {
  std::string torch_op;
  int since_opset = 1;
  Symbolic fn;
  PackRef pack;
  bool is_override = false;
  std::vector<PackRef> overridden;  // packs whose entry for this key this one replaced
  // A Python pack's symbolic: serves target opset `since_opset` only (torch.onnx's dispatch,
  // python_packs.h), ahead of every since-opset entry of the op.
  bool exact_opset = false;
  int registered_opset = 0;  // for exact entries: the opset the symbolic was registered at
};

class Registry {
 public:
  // Adds every registration and domain of one pack, atomically: on a duplicate key without
  // override (against an earlier pack, or twice within the pack) nothing is added and a
  // RegistryError names both packs' files and the key.
  void add_pack(const PackRef& pack, const Registrar& registrar);

  // A Python pack's symbolics, each for the target opsets torch.onnx dispatches it at. They
  // override C++ packs' entries (as register_custom_op_symbolic overrides torch.onnx's built-ins);
  // two Python packs mapping one op is a RegistryError naming both files, and nothing is added.
  void add_python_pack(const PackRef& pack, const PythonPackContents& contents);
  // Drops every entry of the pack with this id (the Python package's in-process symbolics are
  // re-read before each export).
  void remove_python_pack(const std::string& id);

  // The Python entry for exactly this opset if any, else the greatest since-opset <= opset, or
  // nullptr.
  const RegistryEntry* lookup(const std::string& torch_op, int opset) const;
  // Smallest since-opset registered for the op (for "supported from opset N" hints).
  std::optional<int> earliest_opset(const std::string& torch_op) const;
  bool has_op(const std::string& torch_op) const;

  // All entries, sorted by op then since-opset (a Python pack's after the op's C++ entries).
  std::vector<const RegistryEntry*> entries() const;

  // Custom domains declared by packs: domain -> (version, pack). Two packs declaring one
  // domain with different versions: RegistryError.
  struct DomainEntry {
    int version = 1;
    PackRef pack;
  };
  const std::map<std::string, DomainEntry>& domains() const { return domains_; }

  // ONNX schemas packs declared for their custom-domain ops, keyed by CustomOpSchema::key().
  // A schema's domain must be declared by the same pack; two packs declaring one key is a
  // RegistryError naming both.
  struct SchemaEntry {
    CustomOpSchema schema;
    PackRef pack;
  };
  const std::map<std::string, SchemaEntry>& schemas() const { return schemas_; }

  // Evaluators packs registered for their custom-domain ops (op_evaluator.h), keyed by
  // "domain::op_type". Same rules as schemas: the pack declares the domain; one pack per op.
  struct EvaluatorEntry {
    OpEvaluator fn;
    PackRef pack;
  };
  const EvaluatorEntry* evaluator_for(const std::string& domain, const std::string& op_type) const;
  // The key evaluators are stored, listed and cached under: "com.vendor::FancyOp".
  static std::string evaluator_key(const std::string& domain, const std::string& op_type) {
    return domain + "::" + op_type;
  }

 private:
  std::map<std::string, std::map<int, RegistryEntry>> table_;
  std::map<std::string, std::map<int, RegistryEntry>> exact_;  // Python packs: op -> target opset
  std::map<std::string, DomainEntry> domains_;
  std::map<std::string, SchemaEntry> schemas_;
  std::map<std::string, EvaluatorEntry> evaluators_;
};

}  // namespace onnxport
