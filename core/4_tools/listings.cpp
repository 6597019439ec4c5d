#include "onnxport/listings.h"

#include <nlohmann/json.hpp>

#include "onnxport/core_ops.h"
#include "onnxport/registry/loader.h"

namespace onnxport {

std::vector<Mapping> list_mappings(Exporter& exporter, int opset, const std::string& pack) {
  std::vector<Mapping> out;
  const Registry& registry = exporter.registry();
  for (const auto* e : registry.entries()) {
    if ((opset > 0 && (e->exact_opset ? e->since_opset != opset : e->since_opset > opset)) ||
        (!pack.empty() && e->pack.id != pack))
      continue;
    const bool used = opset == 0 || registry.lookup(e->torch_op, opset) == e;
    out.push_back({e->torch_op, e->since_opset, e->pack, e->is_override, e->overridden, e->exact_opset,
                   e->registered_opset, used});
  }
  for (const auto& core_op : core_converted_ops())
    if ((opset == 0 || core_op.since_opset <= opset) && (pack.empty() || pack == "core"))
      out.push_back({core_op.torch_op, core_op.since_opset, {"core", ""}});
  return out;
}

std::string mappings_json(const std::vector<Mapping>& rows, const std::function<bool(const std::string&)>& in_reference) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : rows) {
    nlohmann::json row = {{"op", m.op},
                          {"since_opset", m.since_opset},
                          {"pack", m.pack.id},
                          {"file", m.pack.file},
                          {"override", m.is_override}};
    if (!m.overridden.empty()) {
      row["overrides"] = nlohmann::json::array();
      for (const auto& p : m.overridden) row["overrides"].push_back(p.id);
    }
    if (m.opset_only) {
      row["opset_only"] = true;
      row["registered_opset"] = m.registered_opset;
    }
    if (!m.used) row["used"] = false;
    if (in_reference) row["in_torch_onnx"] = in_reference(m.op);
    out.push_back(row);
  }
  return out.dump(2);
}

std::string packs_json(const Exporter& exporter) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : exporter.loader().packs()) {
    nlohmann::json domains = nlohmann::json::object();
    for (const auto& d : p.domains) domains[d.domain] = d.version;
    out.push_back({{"id", p.id},
                   {"version", p.version},
                   {"file", p.file},
                   {"api_version", p.api_version},
                   {"abi_tag", p.abi_tag},
                   {"domains", domains},
                   {"op_count", p.op_count},
                   {"schemas", p.schemas},
                   {"evaluators", p.evaluators},
                   {"status", p.state_name()},
                   {"error", p.error}});
  }
  return out.dump(2);
}

}  // namespace onnxport
