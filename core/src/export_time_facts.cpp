#include "export_time_facts.h"

#include <optional>
#include <vector>

namespace onnxport::core {

namespace {

// The value a fact node takes during export, if `n` is one.
std::optional<c10::IValue> export_time_value(const torch::jit::Node* n) {
  static const std::vector<c10::Symbol> false_facts = [] {
    std::vector<c10::Symbol> kinds;
    for (const char* name : {"prim::is_cuda", "prim::is_xpu", "prim::is_mkldnn", "prim::is_sparse",
                             "prim::is_sparse_csr", "prim::is_meta", "prim::is_vulkan", "prim::is_ipu",
                             "prim::is_nested", "prim::is_ort", "prim::is_mps", "prim::requires_grad",
                             "aten::is_grad_enabled", "aten::is_autocast_enabled", "aten::is_autocast_cpu_enabled"})
      kinds.push_back(c10::Symbol::fromQualString(name));
    return kinds;
  }();
  for (const auto& kind : false_facts)
    if (n->kind() == kind) return c10::IValue(false);
  if (n->kind() == c10::prim::device) return c10::IValue(c10::Device(c10::kCPU));
  return std::nullopt;
}

void replace_with_constant(torch::jit::Node* n, const c10::IValue& value) {
  torch::jit::WithInsertPoint here(n);
  torch::jit::Value* constant = n->owningGraph()->insertConstant(value);
  n->output()->replaceAllUsesWith(constant);
  n->destroy();
}

}  // namespace

size_t fold_export_time_facts(torch::jit::Block* block) {
  size_t folded = 0;
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    torch::jit::Node* n = *it++;
    for (auto* b : n->blocks()) folded += fold_export_time_facts(b);
    if (n->outputs().size() != 1) continue;
    if (auto value = export_time_value(n)) {
      replace_with_constant(n, *value);
      ++folded;
    }
  }
  return folded;
}

size_t fold_recorded_dtypes(torch::jit::Graph& graph) {
  size_t folded = 0;
  for (auto it = graph.nodes().begin(); it != graph.nodes().end();) {
    torch::jit::Node* n = *it++;
    if (n->kind() != c10::prim::dtype) continue;
    auto type = n->input()->type()->cast<c10::TensorType>();
    if (!type || !type->scalarType()) continue;
    replace_with_constant(n, c10::IValue(static_cast<int64_t>(*type->scalarType())));
    ++folded;
  }
  return folded;
}

}  // namespace onnxport::core
