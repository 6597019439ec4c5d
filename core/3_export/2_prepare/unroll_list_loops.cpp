#include "3_export/2_prepare/unroll_list_loops.h"

#include <optional>
#include <unordered_map>

namespace onnxport::core {

namespace {

std::optional<int64_t> constant_int(const torch::jit::Value* v) {
  if (auto k = torch::jit::constant_as<int64_t>(v)) return *k;
  return std::nullopt;
}

bool is_constant_true(const torch::jit::Value* v) {
  auto b = torch::jit::constant_as<bool>(v);
  return b && *b;
}

bool builds_list(const torch::jit::Block* body) {
  for (const auto* n : body->nodes())
    if (n->kind() == c10::aten::append) return true;
  for (const auto* v : body->outputs())
    if (v->type()->kind() == c10::TypeKind::ListType) return true;
  return false;
}

// A for-loop (constant trip count, condition constant true before and in the body) that builds
// a list, with no nested blocks (their values would need remapping inside sub-blocks too).
std::optional<int64_t> unrollable_trips(const torch::jit::Node* loop) {
  if (loop->kind() != c10::prim::Loop) return std::nullopt;
  const auto trips = constant_int(loop->input(0));
  const torch::jit::Block* body = loop->blocks()[0];
  if (!trips || *trips < 0 || *trips > kMaxUnrolledTrips) return std::nullopt;
  if (!is_constant_true(loop->input(1)) || !is_constant_true(body->outputs()[0])) return std::nullopt;
  for (const auto* n : body->nodes())
    if (!n->blocks().empty()) return std::nullopt;
  if (!builds_list(body)) return std::nullopt;
  return trips;
}

void unroll(torch::jit::Node* loop, int64_t trips) {
  torch::jit::Graph& graph = *loop->owningGraph();
  torch::jit::Block* body = loop->blocks()[0];
  // Loop inputs: trip count, condition, initial carried values; body inputs: counter, carried.
  std::vector<torch::jit::Value*> carried(loop->inputs().begin() + 2, loop->inputs().end());
  torch::jit::WithInsertPoint before(loop);
  for (int64_t k = 0; k < trips; ++k) {
    std::unordered_map<torch::jit::Value*, torch::jit::Value*> env;
    env[body->inputs()[0]] = graph.insertConstant(k);
    for (size_t i = 0; i < carried.size(); ++i) env[body->inputs()[i + 1]] = carried[i];
    auto lookup = [&](torch::jit::Value* v) {
      auto it = env.find(v);
      return it == env.end() ? v : it->second;
    };
    for (auto* n : body->nodes()) {
      torch::jit::Node* copy = graph.insertNode(graph.createClone(n, lookup));
      for (size_t i = 0; i < n->outputs().size(); ++i) env[n->outputs()[i]] = copy->outputs()[i];
    }
    for (size_t i = 0; i < carried.size(); ++i) carried[i] = lookup(body->outputs()[i + 1]);
  }
  for (size_t i = 0; i < loop->outputs().size(); ++i) loop->outputs()[i]->replaceAllUsesWith(carried[i]);
  loop->destroy();
}

}  // namespace

size_t unroll_list_loops(torch::jit::Graph& graph) {
  size_t unrolled = 0;
  for (auto it = graph.nodes().begin(); it != graph.nodes().end();) {
    torch::jit::Node* n = *it++;
    if (auto trips = unrollable_trips(n)) {
      unroll(n, *trips);
      ++unrolled;
    }
  }
  return unrolled;
}

}  // namespace onnxport::core
