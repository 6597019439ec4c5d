#include "3_export/2_prepare/module_tensor_reads.h"

#include <unordered_map>

namespace onnxport::core {

namespace {

using ObjectOf = std::unordered_map<const torch::jit::Value*, c10::intrusive_ptr<c10::ivalue::Object>>;
using TensorOf = std::unordered_map<const torch::jit::Value*, at::Tensor>;

void find_reads(const torch::jit::Block* block, ObjectOf& objects, TensorOf& tensors,
                std::vector<std::tuple<const torch::jit::Node*, size_t, at::Tensor>>& reads) {
  for (const auto* n : block->nodes()) {
    for (const auto* sub : n->blocks()) find_reads(sub, objects, tensors, reads);
    if (n->kind() == c10::prim::GetAttr) {
      const auto owner = objects.find(n->input(0));
      if (owner == objects.end()) continue;
      const auto slot = owner->second->type()->findAttributeSlot(n->s(c10::attr::name));
      if (!slot) continue;
      const c10::IValue value = owner->second->getSlot(*slot);
      if (value.isObject()) objects.emplace(n->output(), value.toObject());
      if (value.isTensor() && value.toTensor().defined()) tensors.emplace(n->output(), value.toTensor());
      continue;
    }
    if (n->outputs().empty()) continue;
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      const auto read = tensors.find(n->input(i));
      if (read != tensors.end()) reads.emplace_back(n, i, read->second);
    }
  }
}

void nodes_by_first_output(torch::jit::Block* block, std::unordered_map<size_t, torch::jit::Node*>& nodes) {
  for (auto* n : block->nodes()) {
    for (auto* sub : n->blocks()) nodes_by_first_output(sub, nodes);
    if (!n->outputs().empty()) nodes.emplace(n->output(0)->unique(), n);
  }
}

}  // namespace

ModuleTensorReads::ModuleTensorReads(const torch::jit::Graph& graph, const torch::jit::Module& module) {
  if (graph.inputs().empty()) return;
  ObjectOf objects{{graph.inputs()[0], module._ivalue()}};
  TensorOf tensors;
  std::vector<std::tuple<const torch::jit::Node*, size_t, at::Tensor>> reads;
  find_reads(graph.block(), objects, tensors, reads);
  for (auto& [node, input, tensor] : reads)
    reads_.push_back({node->output(0)->unique(), node->kind(), input, std::move(tensor)});
}

std::vector<at::Tensor> ModuleTensorReads::read_as(c10::Symbol kind, size_t input) const {
  std::vector<at::Tensor> tensors;
  for (const Read& read : reads_)
    if (read.reader_kind == kind && read.input == input) tensors.push_back(read.tensor);
  return tensors;
}

size_t ModuleTensorReads::restore(torch::jit::Graph& graph) const {
  if (reads_.empty()) return 0;
  std::unordered_map<size_t, torch::jit::Node*> nodes;
  nodes_by_first_output(graph.block(), nodes);
  size_t restored = 0;
  for (const Read& read : reads_) {
    const auto found = nodes.find(read.reader);
    if (found == nodes.end() || read.input >= found->second->inputs().size()) continue;
    torch::jit::Node* reader = found->second;
    const torch::jit::Value* now = reader->input(read.input);
    if (now->node()->kind() != c10::prim::Constant) continue;
    const auto constant = torch::jit::toIValue(now);
    if (!constant || !constant->isTensor()) continue;
    const at::Tensor& pooled = constant->toTensor();
    // Only a pooled one: the same values in another tensor. A tensor freezing computed from
    // this one (a folded transpose) is not.
    if (pooled.data_ptr() == read.tensor.data_ptr() || read.tensor.requires_grad() ||
        pooled.sizes() != read.tensor.sizes() || pooled.scalar_type() != read.tensor.scalar_type() ||
        !pooled.equal(read.tensor))
      continue;
    torch::jit::WithInsertPoint at(reader);
    reader->replaceInput(read.input, graph.insertConstant(read.tensor, c10::nullopt, reader->scope()));
    ++restored;
  }
  return restored;
}

}  // namespace onnxport::core
