#include "3_export/2_prepare/dict_values.h"

#include <optional>

#include <torch/csrc/jit/ir/constants.h>

namespace onnxport::core {

namespace {

// The dict's keys in insertion order (later duplicates overwrite, as in TorchScript), with the
// value each ends up holding; nullopt when a key is not a constant string or int.
struct ConstantKeyDict {
  std::vector<c10::IValue> keys;
  std::vector<torch::jit::Value*> values;

  std::optional<size_t> find(const c10::IValue& key) const {
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == key) return i;
    return std::nullopt;
  }
};

std::optional<ConstantKeyDict> constant_keys(const torch::jit::Node* dict) {
  ConstantKeyDict out;
  for (size_t i = 0; i + 1 < dict->inputs().size(); i += 2) {
    auto key = torch::jit::toIValue(dict->input(i));
    if (!key || !(key->isString() || key->isInt())) return std::nullopt;
    if (auto at = out.find(*key)) {
      out.values[*at] = dict->input(i + 1);
      continue;
    }
    out.keys.push_back(*key);
    out.values.push_back(dict->input(i + 1));
  }
  return out;
}

std::string key_text(const c10::IValue& key) {
  return key.isString() ? key.toStringRef() : std::to_string(key.toInt());
}

bool is_reader_kind(c10::Symbol kind) {
  static const c10::Symbol get = c10::Symbol::fromQualString("aten::get");
  return kind == c10::aten::len || kind == c10::aten::values || kind == c10::aten::__getitem__ || kind == get ||
         kind == c10::aten::__contains__;
}

// Whether every use of the dict reads it (as the dict argument of len, values, [k], get(k),
// `k in d` with k constant) or returns it: a dict written to (d[k] = v, update, pop) or handed to
// anything else is left as it is, since a read after a write must see the write.
bool only_read_or_returned(const torch::jit::Node* dict) {
  const torch::jit::Graph& graph = *dict->owningGraph();
  for (const auto& use : dict->output()->uses()) {
    if (use.user == graph.return_node()) continue;
    if (use.offset != 0 || use.user->outputs().size() != 1 || !is_reader_kind(use.user->kind())) return false;
    const bool keyed = use.user->kind() != c10::aten::len && use.user->kind() != c10::aten::values;
    if (keyed && (use.user->inputs().size() < 2 || !torch::jit::toIValue(use.user->input(1)))) return false;
  }
  return true;
}

// Replaces a reader of the dict (only_read_or_returned) by what it gives; false for a key the dict
// does not hold, which stays a KeyError at run time, as in TorchScript.
bool resolve_reader(torch::jit::Node* user, const ConstantKeyDict& dict) {
  torch::jit::Graph& graph = *user->owningGraph();
  const c10::Symbol kind = user->kind();
  std::optional<size_t> found;
  if (user->inputs().size() >= 2) found = dict.find(*torch::jit::toIValue(user->input(1)));
  if (kind == c10::aten::__getitem__ && !found) return false;
  torch::jit::WithInsertPoint at(user);
  torch::jit::Value* result = nullptr;
  if (kind == c10::aten::len) {
    result = graph.insertConstant(static_cast<int64_t>(dict.keys.size()));
  } else if (kind == c10::aten::values) {
    result = graph.insertNode(graph.createList(user->output()->type()->containedType(0), dict.values))->output();
  } else if (kind == c10::aten::__contains__) {
    result = graph.insertConstant(found.has_value());
  } else if (found) {  // d[k], d.get(k[, default])
    result = dict.values[*found];
  } else {  // d.get(k[, default]) of a key it does not hold
    result = user->inputs().size() == 3 ? user->input(2) : graph.insertConstant(c10::IValue());
  }
  if (!result->type()->isSubtypeOf(*user->output()->type())) {
    // A value read from a dict of Union or Optional values is refined where it is used.
    auto* cast = graph.insertNode(graph.create(c10::prim::unchecked_cast, {result}, 1));
    cast->output()->setType(user->output()->type());
    result = cast->output();
  }
  user->output()->replaceAllUsesWith(result);
  user->destroy();
  return true;
}

}  // namespace

size_t resolve_constant_key_dicts(torch::jit::Graph& graph, std::vector<std::string>& output_names) {
  size_t rewritten = 0;
  // Output index -> key names of the returned dict it held, collected first: outputs move as
  // dicts are expanded.
  std::vector<std::vector<std::string>> returned(graph.outputs().size());
  std::vector<std::vector<torch::jit::Value*>> returned_values(graph.outputs().size());
  bool any = false;
  for (auto it = graph.block()->nodes().begin(); it != graph.block()->nodes().end();) {
    torch::jit::Node* n = *it++;
    if (n->kind() != c10::prim::DictConstruct) continue;
    auto dict = constant_keys(n);
    if (!dict || !only_read_or_returned(n)) continue;
    std::vector<torch::jit::Use> uses = n->output()->uses();
    for (const auto& use : uses)
      if (use.user != graph.return_node() && resolve_reader(use.user, *dict)) ++rewritten;
    for (size_t i = 0; i < graph.outputs().size(); ++i) {
      if (graph.outputs()[i] != n->output()) continue;
      for (const auto& key : dict->keys) returned[i].push_back(key_text(key));
      returned_values[i] = dict->values;
      any = true;
      ++rewritten;
    }
  }
  if (!any) return rewritten;
  std::vector<std::string>& names = output_names;
  names.clear();
  std::vector<torch::jit::Value*> outputs;
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    if (returned_values[i].empty() && returned[i].empty()) {
      outputs.push_back(graph.outputs()[i]);
      names.emplace_back();
      continue;
    }
    outputs.insert(outputs.end(), returned_values[i].begin(), returned_values[i].end());
    names.insert(names.end(), returned[i].begin(), returned[i].end());
  }
  while (!graph.outputs().empty()) graph.eraseOutput(0);
  for (auto* v : outputs) graph.registerOutput(v);
  std::vector<torch::jit::Node*> unused;
  for (auto* n : graph.block()->nodes())
    if (n->kind() == c10::prim::DictConstruct && !n->hasUses()) unused.push_back(n);
  for (auto* n : unused) n->destroy();
  return rewritten;
}

}  // namespace onnxport::core
