#include "onnxport/registry/registry.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <utility>

#include "onnxport/errors.h"

namespace onnxport {

std::string PackRef::describe() const { return id + " (" + (file.empty() ? std::string("in-process") : file) + ")"; }

namespace {

std::string describe_key(const std::string& torch_op, int since_opset) {
  return torch_op + " (since opset " + std::to_string(since_opset) + ")";
}

[[noreturn]] void fail(const std::string& message, const std::string& hint) {
  ErrorContext ctx;
  ctx.hint = hint;
  throw RegistryError(message, ctx);
}

void check_unique_within_pack(const PackRef& pack, const Registrar& registrar) {
  std::set<std::pair<std::string, int>> seen;
  for (const Registration& r : registrar.registrations()) {
    if (!seen.emplace(r.torch_op, r.since_opset).second) {
      fail("op pack " + pack.describe() + " registers " + describe_key(r.torch_op, r.since_opset) + " twice",
           "remove one of the two registrations from the pack");
    }
  }
}

RegistryEntry make_entry(const PackRef& pack, const Registration& r) {
  RegistryEntry e;
  e.torch_op = r.torch_op;
  e.since_opset = r.since_opset;
  e.fn = r.fn;
  e.pack = pack;
  e.is_override = r.is_override;
  return e;
}

// Resolves a key registered by two packs: exactly one of them must be an override, and that
// one wins whatever the load order; the loser's pack is recorded on the winner.
void merge_entry(RegistryEntry& existing, RegistryEntry incoming) {
  if (existing.is_override == incoming.is_override) {
    const std::string what = existing.is_override ? "both override" : "both register";
    fail("op packs " + existing.pack.describe() + " and " + incoming.pack.describe() + " " + what + " " +
             describe_key(incoming.torch_op, incoming.since_opset),
         existing.is_override ? "keep only one of the overriding packs"
                              : "remove one of the packs, or register the replacement with Registrar::add_override");
  }
  if (existing.is_override) {
    existing.overridden.push_back(std::move(incoming.pack));
    return;
  }
  incoming.overridden = std::move(existing.overridden);
  incoming.overridden.push_back(std::move(existing.pack));
  existing = std::move(incoming);
}

// Registrar::declare_domain already rejected malformed declarations; only conflicts remain.
void add_domain(std::map<std::string, Registry::DomainEntry>& domains, const PackRef& pack, const DomainDecl& d) {
  auto [it, inserted] = domains.emplace(d.domain, Registry::DomainEntry{d.version, pack});
  if (!inserted && it->second.version != d.version) {
    fail("domain " + d.domain + " is declared with version " + std::to_string(it->second.version) + " by " +
             it->second.pack.describe() + " and version " + std::to_string(d.version) + " by " + pack.describe(),
         "make the packs agree on the domain version, or pin it with custom_opsets");
  }
}

bool declares_domain(const Registrar& registrar, const std::string& domain) {
  for (const DomainDecl& d : registrar.domains())
    if (d.domain == domain) return true;
  return false;
}

void add_evaluator(std::map<std::string, Registry::EvaluatorEntry>& evaluators, const PackRef& pack,
                   const Registrar& registrar, const EvaluatorDecl& e) {
  const std::string key = Registry::evaluator_key(e.domain, e.op_type);
  if (!declares_domain(registrar, e.domain))
    fail("op pack " + pack.describe() + " registers an evaluator for " + key + ", whose domain it does not declare",
         "call r.declare_domain(\"" + e.domain + "\", VERSION) in the pack");
  auto [it, inserted] = evaluators.emplace(key, Registry::EvaluatorEntry{e.fn, pack});
  if (!inserted)
    fail("the evaluator of " + key + " is registered by " + it->second.pack.describe() +
             (it->second.pack.describe() == pack.describe() ? " twice" : " and by " + pack.describe()),
         "register each op's evaluator in one pack, once");
}

void add_schema(std::map<std::string, Registry::SchemaEntry>& schemas, const PackRef& pack, const Registrar& registrar,
                const CustomOpSchema& schema) {
  const bool declared = declares_domain(registrar, schema.domain());
  if (!declared)
    fail("op pack " + pack.describe() + " declares schema " + schema.key() + " for domain " + schema.domain() +
             ", which it does not declare",
         "call r.declare_domain(\"" + schema.domain() + "\", VERSION) in the pack");
  auto [it, inserted] = schemas.emplace(schema.key(), Registry::SchemaEntry{schema, pack});
  if (!inserted)
    fail("schema " + schema.key() + " is declared by " + it->second.pack.describe() +
             (it->second.pack.describe() == pack.describe() ? " twice" : " and by " + pack.describe()),
         "declare each op's schema in one pack, once per since-version");
}

}  // namespace

void Registry::add_pack(const PackRef& pack, const Registrar& registrar) {
  check_unique_within_pack(pack, registrar);
  // Build the result on copies and swap them in at the end: a failure leaves no trace.
  auto table = table_;
  auto domains = domains_;
  auto schemas = schemas_;
  auto evaluators = evaluators_;
  for (const Registration& r : registrar.registrations()) {
    auto& by_opset = table[r.torch_op];
    auto found = by_opset.find(r.since_opset);
    if (found == by_opset.end()) {
      by_opset.emplace(r.since_opset, make_entry(pack, r));
    } else {
      merge_entry(found->second, make_entry(pack, r));
    }
  }
  for (const DomainDecl& d : registrar.domains()) add_domain(domains, pack, d);
  for (const CustomOpSchema& s : registrar.schemas()) add_schema(schemas, pack, registrar, s);
  for (const EvaluatorDecl& e : registrar.evaluators()) add_evaluator(evaluators, pack, registrar, e);
  table_.swap(table);
  domains_.swap(domains);
  schemas_.swap(schemas);
  evaluators_.swap(evaluators);
}

const Registry::EvaluatorEntry* Registry::evaluator_for(const std::string& domain, const std::string& op_type) const {
  auto it = evaluators_.find(evaluator_key(domain, op_type));
  return it == evaluators_.end() ? nullptr : &it->second;
}

void Registry::add_python_pack(const PackRef& pack, const PythonPackContents& contents) {
  auto exact = exact_;
  for (const PythonSymbolic& s : contents.symbolics) {
    auto& by_opset = exact[s.torch_op];
    for (const auto& [opset, entry] : by_opset)
      if (entry.pack.id != pack.id)
        fail("Python op packs " + entry.pack.describe() + " and " + pack.describe() + " both register a symbolic for " +
                 s.torch_op,
             "keep one of the two registrations (torch.onnx would silently keep the last one loaded)");
    for (int opset : s.opsets) {
      RegistryEntry e;
      e.torch_op = s.torch_op;
      e.since_opset = opset;
      e.fn = s.fn;
      e.pack = pack;
      e.is_override = true;
      e.exact_opset = true;
      e.registered_opset = s.registered_opset;
      if (const RegistryEntry* replaced = lookup(s.torch_op, opset); replaced && !replaced->exact_opset)
        e.overridden.push_back(replaced->pack);
      if (!by_opset.emplace(opset, std::move(e)).second)
        fail("Python op pack " + pack.describe() + " registers two symbolics for " + s.torch_op + " at opset " +
                 std::to_string(opset),
             "register one symbolic per op and opset");
    }
  }
  exact_.swap(exact);
}

void Registry::remove_python_pack(const std::string& id) {
  for (auto op = exact_.begin(); op != exact_.end();) {
    for (auto e = op->second.begin(); e != op->second.end();)
      e = e->second.pack.id == id ? op->second.erase(e) : std::next(e);
    op = op->second.empty() ? exact_.erase(op) : std::next(op);
  }
}

const RegistryEntry* Registry::lookup(const std::string& torch_op, int opset) const {
  if (auto python = exact_.find(torch_op); python != exact_.end())
    if (auto at = python->second.find(opset); at != python->second.end()) return &at->second;
  auto op = table_.find(torch_op);
  if (op == table_.end()) return nullptr;
  auto after = op->second.upper_bound(opset);  // first since-opset > opset
  if (after == op->second.begin()) return nullptr;
  return &std::prev(after)->second;
}

std::optional<int> Registry::earliest_opset(const std::string& torch_op) const {
  std::optional<int> earliest;
  for (const auto* table : {&table_, &exact_})
    if (auto op = table->find(torch_op); op != table->end() && !op->second.empty())
      earliest = std::min(earliest.value_or(op->second.begin()->first), op->second.begin()->first);
  return earliest;
}

bool Registry::has_op(const std::string& torch_op) const { return table_.count(torch_op) || exact_.count(torch_op); }

std::vector<const RegistryEntry*> Registry::entries() const {
  std::vector<const RegistryEntry*> out;
  for (const auto* table : {&table_, &exact_})
    for (const auto& [op, by_opset] : *table)
      for (const auto& [opset, entry] : by_opset) out.push_back(&entry);
  std::stable_sort(out.begin(), out.end(),
                   [](const RegistryEntry* a, const RegistryEntry* b) { return a->torch_op < b->torch_op; });
  return out;
}

}  // namespace onnxport
