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
};

// The mappings usable at `opset` (0: any) of pack `pack` (empty: every pack).
std::vector<Mapping> list_mappings(Exporter& exporter, int opset = 0, const std::string& pack = "");

// A JSON array of {op, since_opset, pack, file, override[, overrides]}; with `in_reference`, each
// row also says whether another exporter's list has the op (in_torch_onnx).
std::string mappings_json(const std::vector<Mapping>& rows,
                          const std::function<bool(const std::string& op)>& in_reference = {});

// A JSON array of {id, version, file, api_version, abi_tag, domains, op_count, schemas,
// evaluators, status, error}.
std::string packs_json(const Exporter& exporter);

}  // namespace onnxport
