#include "3_export/2_prepare/straight_line_freeze.h"

#include <torch/csrc/jit/passes/common_subexpression_elimination.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/eliminate_no_ops.h>
#include <torch/csrc/jit/passes/lower_tuples.h>
#include <torch/csrc/jit/passes/peephole.h>
#include <torch/csrc/jit/passes/shape_analysis.h>

#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace onnxport::core {

namespace {

bool frozen_as_constant(const c10::IValue& v) {
  return (v.isTensor() && !v.toTensor().requires_grad()) || v.isInt() || v.isDouble() || v.isBool() || v.isString() ||
         v.isNone();
}

using AttributeReads = std::vector<std::pair<torch::jit::Node*, c10::IValue>>;

// Each prim::GetAttr of a plain value with the value it reads; nullopt when the forward is not
// one freeze_straight_line_forward takes.
std::optional<AttributeReads> attribute_reads(torch::jit::Graph& graph, const torch::jit::Module& module) {
  if (graph.inputs()[0]->type() != module.type()) return std::nullopt;
  std::unordered_map<const torch::jit::Value*, c10::intrusive_ptr<c10::ivalue::Object>> objects{
      {graph.inputs()[0], module._ivalue()}};
  AttributeReads reads;
  for (auto* n : graph.nodes()) {
    if (!n->blocks().empty()) return std::nullopt;
    if (n->kind() != c10::prim::GetAttr) {
      for (const auto* in : n->inputs())
        if (objects.count(in)) return std::nullopt;  // a module handed to an op, or written (prim::SetAttr)
      continue;
    }
    const auto owner = objects.find(n->input(0));
    if (owner == objects.end()) return std::nullopt;
    const auto slot = owner->second->type()->findAttributeSlot(n->s(c10::attr::name));
    if (!slot) return std::nullopt;
    c10::IValue value = owner->second->getSlot(*slot);
    if (value.isObject()) {
      objects.emplace(n->output(), value.toObject());
      continue;
    }
    if (!frozen_as_constant(value)) return std::nullopt;
    reads.emplace_back(n, std::move(value));
  }
  for (const auto* out : graph.outputs())
    if (objects.count(out)) return std::nullopt;
  return reads;
}

// Whether a node writes a module tensor the forward reads, or a view of one (a training-mode
// BatchNorm's running statistics, `self.steps += 1`): freeze_module keeps such an attribute as
// one, read through self, where turning it into a constant would let the run mutate a constant.
bool writes_a_read_tensor(const torch::jit::Graph& graph, const AttributeReads& reads) {
  std::unordered_set<const torch::jit::Value*> aliased;  // the tensors read, and values that may alias them
  for (const auto& [n, value] : reads)
    if (value.isTensor()) aliased.insert(n->output());
  for (const auto* n : graph.nodes()) {
    bool reads_aliased = false;
    for (const auto* in : n->inputs()) reads_aliased |= aliased.count(in) > 0;
    if (!reads_aliased) continue;
    const c10::FunctionSchema* schema = n->maybeSchema();
    if (!schema) {  // lists, tuples and other prim ops pass their inputs on
      if (n->kind().is_aten()) return true;
      for (const auto* out : n->outputs()) aliased.insert(out);
      continue;
    }
    const auto& args = schema->arguments();
    for (size_t i = 0; i < n->inputs().size() && i < args.size(); ++i)
      if (aliased.count(n->input(i)) && args[i].alias_info() && args[i].alias_info()->isWrite()) return true;
    const auto& returns = schema->returns();
    for (size_t i = 0; i < n->outputs().size() && i < returns.size(); ++i)
      if (returns[i].alias_info()) aliased.insert(n->output(i));  // a view, or an in-place op's result
  }
  return false;
}

}  // namespace

bool freeze_straight_line_forward(std::shared_ptr<torch::jit::Graph>& forward, const torch::jit::Module& module) {
  if (forward->inputs().empty()) return false;
  auto reads = attribute_reads(*forward, module);
  if (!reads || writes_a_read_tensor(*forward, *reads)) return false;
  // As freeze_module leaves them: a trace's sizes would otherwise fold `x.size(0)` (the peephole
  // pass) where dynamic axes need it at run time. prepare gives the trace's types back after.
  torch::jit::EraseShapeInformation(forward);
  for (auto& [n, value] : *reads) {
    torch::jit::WithInsertPoint at(n);
    n->output()->replaceAllUsesWith(forward->insertConstant(value, c10::nullopt, n->scope()));
  }
  // Last first: a chain's leaf read goes before the module read it starts from.
  for (auto it = forward->nodes().rbegin(); it != forward->nodes().rend(); ++it)
    if (it->kind() == c10::prim::GetAttr && !it->output()->hasUses()) it.destroyCurrent();
  torch::jit::ConstantPropagation(forward, /*ignore_custom_classes=*/true);
  torch::jit::EliminateCommonSubexpression(forward);
  torch::jit::PeepholeOptimize(forward);
  torch::jit::EliminateNoOps(forward);  // aten::detach, which has no meaning in an exported graph
  torch::jit::LowerSimpleTuples(forward);
  torch::jit::EliminateDeadCode(forward);
  return true;
}

}  // namespace onnxport::core
