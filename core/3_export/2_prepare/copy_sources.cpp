#include "3_export/2_prepare/copy_sources.h"

namespace onnxport::core {

namespace {

size_t rewrite_block(torch::jit::Block* block) {
  size_t changed = 0;
  for (auto* n : block->nodes()) {
    for (auto* sub : n->blocks()) changed += rewrite_block(sub);
    if (n->kind() != c10::aten::copy_ || n->inputs().size() < 2) continue;
    auto* source = n->input(1)->node();
    if (source->kind() != c10::aten::expand || n->input(1)->uses().size() != 1) continue;
    n->replaceInput(1, source->input(0));
    source->destroy();
    ++changed;
  }
  return changed;
}

}  // namespace

size_t copy_unexpanded_sources(torch::jit::Graph& graph) { return rewrite_block(graph.block()); }

}  // namespace onnxport::core
