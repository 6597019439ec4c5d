#include "3_export/2_prepare/attribute_writes.h"

#include <map>
#include <optional>
#include <set>

#include "onnxport/errors.h"
#include "3_export/2_prepare/torch_graph.h"

namespace onnxport::core {

namespace {

// "sub.attr" for a value reached from self by prim::GetAttr (self itself is ""), if it is one.
std::optional<std::string> attribute_path(const torch::jit::Value* v, const torch::jit::Value* self) {
  if (v == self) return std::string();
  const torch::jit::Node* n = v->node();
  if (n->kind() != c10::prim::GetAttr) return std::nullopt;
  auto owner = attribute_path(n->input(0), self);
  if (!owner) return std::nullopt;
  return owner->empty() ? n->s(c10::attr::name) : *owner + "." + n->s(c10::attr::name);
}

std::optional<std::string> written_path(const torch::jit::Node* n, const torch::jit::Value* self) {
  if (n->kind() != c10::prim::SetAttr) return std::nullopt;
  auto owner = attribute_path(n->input(0), self);
  if (!owner) return std::nullopt;
  return owner->empty() ? n->s(c10::attr::name) : *owner + "." + n->s(c10::attr::name);
}

void collect_writes(const torch::jit::Block* block, const torch::jit::Value* self, bool nested,
                    std::set<std::string>& written) {
  for (const auto* n : block->nodes()) {
    if (auto path = written_path(n, self)) {
      if (nested)
        throw ModelError("forward assigns self." + *path + " inside a loop or branch" +
                             (source_of(n).empty() ? "" : " (" + source_of(n) + ")") +
                             ", which onnxport cannot export: the value would depend on the path taken",
                         ErrorContext::with_hint("assign it outside the loop or branch, or return the value instead"));
      written.insert(*path);
    }
    for (const auto* b : n->blocks()) collect_writes(b, self, true, written);
  }
}

c10::IValue loaded_value(const torch::jit::Module& self, const std::string& path) {
  c10::IValue value = self._ivalue();
  for (size_t start = 0;;) {
    const size_t dot = path.find('.', start);
    value = value.toObjectRef().getAttr(path.substr(start, dot == std::string::npos ? dot : dot - start));
    if (dot == std::string::npos) return value;
    start = dot + 1;
  }
}

// Reads in `block` (and the blocks inside it) of the written attributes take `current`.
void replace_reads(torch::jit::Block* block, const torch::jit::Value* self,
                   const std::map<std::string, torch::jit::Value*>& current) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    torch::jit::Node* n = *it++;
    for (auto* b : n->blocks()) replace_reads(b, self, current);
    if (n->kind() != c10::prim::GetAttr) continue;
    auto path = attribute_path(n->output(), self);
    if (!path) continue;
    auto found = current.find(*path);
    if (found == current.end()) continue;
    n->output()->replaceAllUsesWith(found->second);
    n->destroy();
  }
}

}  // namespace

size_t fold_attribute_writes(torch::jit::Graph& graph, const torch::jit::Module& self_module) {
  if (graph.inputs().empty()) return 0;
  const torch::jit::Value* self = graph.inputs()[0];
  std::set<std::string> written;
  collect_writes(graph.block(), self, false, written);
  if (written.empty()) return 0;

  std::map<std::string, torch::jit::Value*> current;
  {
    torch::jit::WithInsertPoint at_start(graph.block()->nodes().front());
    for (const auto& path : written) current[path] = graph.insertConstant(loaded_value(self_module, path));
  }
  for (auto it = graph.nodes().begin(); it != graph.nodes().end();) {
    torch::jit::Node* n = *it++;
    if (auto path = written_path(n, self)) {
      current[*path] = n->input(1);
      n->destroy();
      continue;
    }
    for (auto* b : n->blocks()) replace_reads(b, self, current);
    if (n->kind() != c10::prim::GetAttr) continue;
    auto path = attribute_path(n->output(), self);
    if (!path || !current.count(*path)) continue;
    n->output()->replaceAllUsesWith(current[*path]);
    n->destroy();
  }
  return written.size();
}

}  // namespace onnxport::core
