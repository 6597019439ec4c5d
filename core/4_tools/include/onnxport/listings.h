#pragma once
// What an Exporter has loaded, listed: every mapping (torch op, since-opset, pack) and every op
// pack found. The CLI's `ops`/`plugins` and the Python package's onnxport.ops()/plugins() show
// these lists; the JSON forms are the same for both.
#include <functional>
#include <string>
#include <vector>

#include "onnxport/export.h"
#include "onnxport/registry/registry.h"

namespace onnxport {

// One mapping: a registry entry, or an op the core converts itself (pack "core").
struct Mapping {
  std::string op;
  int since_opset = 0;
  PackRef pack;
  bool is_override = false;
  std::vector<PackRef> overridden;
  // A Python pack's symbolic: used at since_opset only, as torch.onnx dispatches it.
  bool opset_only = false;
  int registered_opset = 0;  // the opset register_custom_op_symbolic was given
  // With an opset filter: whether an export at that opset converts the op with this mapping.
  bool used = true;
};

// The mappings usable at `opset` (0: any) of pack `pack` (empty: every pack); with an opset, each
// says whether it is the one used there.
std::vector<Mapping> list_mappings(Exporter& exporter, int opset = 0, const std::string& pack = "");

// A JSON array of {op, since_opset, pack, file, override[, overrides][, opset_only,
// registered_opset][, used]}; with `in_reference`, each
// row also says whether another exporter's list has the op (in_torch_onnx).
std::string mappings_json(const std::vector<Mapping>& rows,
                          const std::function<bool(const std::string& op)>& in_reference = {});

// A JSON array of {id, version, file, api_version, abi_tag, domains, op_count, schemas,
// evaluators, status, error}.
std::string packs_json(const Exporter& exporter);

}  // namespace onnxport
