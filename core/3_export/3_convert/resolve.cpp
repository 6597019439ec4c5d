#include "3_export/3_convert/resolve.h"

#include <sstream>

#include "3_export/3_convert/convert.h"
#include "3_export/3_convert/fallback.h"
#include "onnxport/errors.h"
#include "3_export/2_prepare/torch_graph.h"

namespace onnxport::core {

namespace {

bool converted_by_core(const std::string& kind) {
  for (const auto& [op, since] : core_builtin_ops())
    if (op == kind) return true;
  return false;
}

struct MissingOp {
  size_t count = 0;
  std::set<std::string> module_paths;  // the first few
};

void visit_nodes(const torch::jit::Block* block, const std::function<void(const torch::jit::Node*)>& fn) {
  for (const auto* n : block->nodes()) {
    fn(n);
    for (const auto* b : n->blocks()) visit_nodes(b, fn);
  }
}

[[noreturn]] void report_missing(const std::map<std::string, MissingOp>& missing, const Registry& registry, int opset,
                                 const std::string& model_file) {
  std::ostringstream os;
  os << missing.size() << " operator" << (missing.size() > 1 ? "s have" : " has") << " no mapping at opset " << opset
     << ":";
  bool later_opset = false;
  const char* separator = " ";  // one line, the ops separated by "; "
  for (const auto& [kind, m] : missing) {
    os << separator << kind << " x" << m.count << " in ";
    separator = "; ";
    bool first = true;
    for (const auto& p : m.module_paths) {
      os << (first ? "" : ", ") << p;
      first = false;
    }
    auto from = registry.earliest_opset(kind);
    if (const auto dot = kind.find('.', kind.find("::")); dot != std::string::npos) {  // an overload's key
      if (!from)
        from = registry.earliest_opset(kind.substr(0, dot));
      else if (auto by_name = registry.earliest_opset(kind.substr(0, dot)))
        from = std::min(*from, *by_name);
    }
    if (from && *from > opset) {
      os << " (supported from opset " << *from << ")";
      later_opset = true;
    }
    if (kind == "prim::DictConstruct")
      os << " (a dict the model writes to, hands on, or builds with keys known only at run time: onnxport "
            "exports dicts with constant keys that are only read by key or returned)";
    if (kind == "prim::PythonOp")
      os << " (a torch.autograd.Function call: a .pt file cannot hold one; export the module with onnxport.export "
            "in Python, which converts it with the Function's symbolic)";
  }
  throw UnsupportedOpError(
      os.str(),
      ErrorContext::for_file(
          model_file, later_opset
                          ? "raise --opset, or add an op pack mapping the rest (--plugin-dir)"
                          : "add an op pack that maps them (--plugin-dir DIR); `onnxport ops` lists what is mapped"));
}

}  // namespace

std::string dispatch_key(const torch::jit::Node* n) {
  std::string key = n->kind().toQualString();
  if (const auto* schema = n->maybeSchema(); schema && !schema->overload_name().empty())
    key += "." + schema->overload_name();
  return key;
}

const ResolvedOp& Resolution::of(const torch::jit::Node* n) const {
  const std::string key = dispatch_key(n);
  auto it = ops_.find(key);
  if (it == ops_.end()) throw ExportError("internal: " + key + " was not resolved before conversion");
  return it->second;
}

const RegistryEntry* Resolution::helper(const std::string& kind) const {
  auto [it, inserted] = helpers_.emplace(kind, nullptr);
  if (inserted) it->second = registry_->lookup(kind, opset_);
  return it->second;
}

std::set<std::string> Resolution::fallthrough_domains(OperatorExportType type) const {
  std::set<std::string> domains;
  if (type != OperatorExportType::OnnxFallthrough) return domains;
  for (const auto& [key, op] : ops_)
    if (op.fallback) domains.insert(key.substr(0, key.find("::")));
  return domains;
}

Resolution resolve_ops(const torch::jit::Graph& graph, const Registry& registry, const ExportOptions& options,
                       const std::string& model_file) {
  Resolution resolution(registry, options.opset_version);
  std::map<std::string, MissingOp> missing;
  visit_nodes(graph.block(), [&](const torch::jit::Node* n) {
    const std::string kind = n->kind().toQualString();
    const std::string key = dispatch_key(n);
    auto [it, first_time] = resolution.ops_.emplace(key, ResolvedOp{});
    ResolvedOp& op = it->second;
    if (first_time) {
      op.core = converted_by_core(kind);
      if (!op.core) {
        op.entry = key != kind ? registry.lookup(key, options.opset_version) : nullptr;
        if (!op.entry) op.entry = registry.lookup(kind, options.opset_version);
        op.fallback = falls_back(options, kind, op.entry != nullptr);
      }
    }
    if (op.core || op.entry || op.fallback) return;
    // Mapped for complex values only: the converter finds that entry when the node is complex.
    if (registry.lookup(Registrar::complex_key(kind), options.opset_version)) return;
    MissingOp& m = missing[key];
    ++m.count;
    const std::string path = module_path_of(n);
    if (m.module_paths.size() < 5) m.module_paths.insert(path.empty() ? "<top>" : path);
  });
  if (!missing.empty()) report_missing(missing, registry, options.opset_version, model_file);
  return resolution;
}

}  // namespace onnxport::core
