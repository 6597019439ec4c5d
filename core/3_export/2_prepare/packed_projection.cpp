#include "3_export/2_prepare/packed_projection.h"

#include <torch/csrc/jit/ir/constants.h>

#include <optional>
#include <vector>

namespace onnxport::core {

namespace {

std::optional<int64_t> constant_int(const torch::jit::Value* v) {
  if (auto k = torch::jit::constant_as<int64_t>(v)) return *k;
  return std::nullopt;
}

std::optional<int64_t> rank_of(const torch::jit::Value* v) {
  const auto type = v->type()->cast<c10::TensorType>();
  if (!type || !type->dim()) return std::nullopt;
  return static_cast<int64_t>(*type->dim());
}

// `dim` as a non-negative axis of a tensor of rank `rank`.
std::optional<int64_t> axis(const torch::jit::Value* dim, std::optional<int64_t> rank) {
  const auto d = constant_int(dim);
  if (!d || !rank) return std::nullopt;
  const int64_t a = *d < 0 ? *d + *rank : *d;
  if (a < 0 || a >= *rank) return std::nullopt;
  return a;
}

// The node producing `v` when it is of `kind` and `v` has no other use.
torch::jit::Node* sole_producer(torch::jit::Value* v, c10::Symbol kind) {
  torch::jit::Node* n = v->node();
  if (n->kind() != kind || v->uses().size() != 1) return nullptr;
  return n;
}

struct PackedSplit {
  torch::jit::Value* proj;                // the packed projection, [..., n * E]
  int64_t parts;                          // n
  std::vector<torch::jit::Node*> selects; // the parts taken, each select(result, 0, i)
};

std::optional<PackedSplit> match(torch::jit::Node* squeeze_or_contiguous) {
  torch::jit::Value* result = squeeze_or_contiguous->output();
  torch::jit::Node* squeeze = squeeze_or_contiguous;
  if (squeeze->kind() == c10::aten::contiguous) squeeze = sole_producer(squeeze->input(0), c10::aten::squeeze);
  if (!squeeze || squeeze->kind() != c10::aten::squeeze || squeeze->inputs().size() != 2) return std::nullopt;
  torch::jit::Node* transpose = sole_producer(squeeze->input(0), c10::aten::transpose);
  if (!transpose) return std::nullopt;
  torch::jit::Node* unsqueeze = sole_producer(transpose->input(0), c10::aten::unsqueeze);
  if (!unsqueeze) return std::nullopt;
  torch::jit::Node* unflatten = sole_producer(unsqueeze->input(0), c10::aten::unflatten);
  if (!unflatten) return std::nullopt;

  torch::jit::Value* proj = unflatten->input(0);
  const auto proj_rank = rank_of(proj);
  const auto sizes = torch::jit::constant_as<std::vector<int64_t>>(unflatten->input(2));
  if (!proj_rank || !sizes || sizes->size() != 2 || (*sizes)[0] < 1) return std::nullopt;
  if (axis(unflatten->input(1), proj_rank) != *proj_rank - 1) return std::nullopt;  // the last axis split
  const int64_t r = *proj_rank + 2;  // the unsqueezed rank: [1, ..., n, E]
  if (axis(unsqueeze->input(1), r) != 0) return std::nullopt;
  const auto a = axis(transpose->input(1), r), b = axis(transpose->input(2), r);
  if (!a || !b || std::min(*a, *b) != 0 || std::max(*a, *b) != r - 2) return std::nullopt;  // [n, ..., 1, E]
  if (axis(squeeze->input(1), r) != r - 2) return std::nullopt;                            // [n, ..., E]

  PackedSplit split{proj, (*sizes)[0], {}};
  for (const auto& use : result->uses()) {
    torch::jit::Node* select = use.user;
    if (select->kind() != c10::aten::select || use.offset != 0 || axis(select->input(1), r - 1) != 0) return std::nullopt;
    const auto part = constant_int(select->input(2));
    if (!part || *part < -split.parts || *part >= split.parts) return std::nullopt;
    split.selects.push_back(select);
  }
  if (split.selects.empty()) return std::nullopt;
  return split;
}

void rewrite(torch::jit::Graph& graph, const PackedSplit& split) {
  torch::jit::Node* first = split.selects.front();
  for (auto* select : split.selects)
    if (select->isBefore(first)) first = select;
  torch::jit::WithInsertPoint at(first);
  torch::jit::Node* chunk = graph.insertNode(graph.create(
      c10::aten::unsafe_chunk,
      {split.proj, graph.insertConstant(split.parts), graph.insertConstant(static_cast<int64_t>(-1))}, 1));
  chunk->output()->setType(c10::ListType::ofTensors());
  torch::jit::Node* parts = graph.insertNode(graph.createListUnpack(chunk->output(), split.parts));
  for (auto* select : split.selects) {
    int64_t part = *constant_int(select->input(2));
    if (part < 0) part += split.parts;
    parts->outputs()[part]->setType(select->output()->type());
    select->output()->replaceAllUsesWith(parts->outputs()[part]);
  }
}

}  // namespace

size_t fold_packed_projection_splits(torch::jit::Graph& graph) {
  std::vector<PackedSplit> found;
  for (auto* n : graph.nodes())
    if (n->kind() == c10::aten::contiguous || n->kind() == c10::aten::squeeze) {
      // A squeeze that a contiguous reads is matched from the contiguous.
      if (n->kind() == c10::aten::squeeze && n->output()->uses().size() == 1 &&
          n->output()->uses()[0].user->kind() == c10::aten::contiguous)
        continue;
      if (auto split = match(n)) found.push_back(*split);
    }
  for (const auto& split : found) rewrite(graph, split);
  return found.size();  // the chains left without uses go with the caller's dead-code pass
}

}  // namespace onnxport::core
