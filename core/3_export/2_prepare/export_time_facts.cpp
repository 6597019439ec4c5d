#include "3_export/2_prepare/export_time_facts.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/runtime/operator.h>

namespace onnxport::core {

namespace {

// The value a fact node takes during export, if `n` is one.
std::optional<c10::IValue> export_time_value(const torch::jit::Node* n) {
  static const std::vector<c10::Symbol> false_facts = [] {
    std::vector<c10::Symbol> kinds;
    for (const char* name :
         {"prim::is_cuda", "prim::is_xpu", "prim::is_mkldnn", "prim::is_sparse", "prim::is_sparse_csr", "prim::is_meta",
          "prim::is_vulkan", "prim::is_ipu", "prim::is_nested", "prim::is_ort", "prim::is_mps", "prim::requires_grad",
          "aten::is_grad_enabled", "aten::is_autocast_enabled", "aten::is_autocast_cpu_enabled"})
      kinds.push_back(c10::Symbol::fromQualString(name));
    return kinds;
  }();
  for (const auto& kind : false_facts)
    if (n->kind() == kind) return c10::IValue(false);
  if (n->kind() == c10::prim::device) return c10::IValue(c10::Device(c10::kCPU));
  return std::nullopt;
}

// aten::format of constants: TorchScript's constant propagation leaves it, but the reasons
// TransformerEncoder gives for skipping its fast path are such strings, and whether one is
// empty decides the branch.
std::optional<c10::IValue> formatted_constant_text(const torch::jit::Node* n) {
  if (n->kind() != c10::aten::format) return std::nullopt;
  torch::jit::Stack stack;
  for (const auto* input : n->inputs()) {
    auto value = torch::jit::toIValue(input);
    if (!value) return std::nullopt;
    stack.push_back(std::move(*value));
  }
  stack.emplace_back(static_cast<int64_t>(n->inputs().size()));  // a vararg op takes its input count
  try {
    n->getOperation()(stack);
  } catch (const c10::Error&) {
    return std::nullopt;
  }
  if (stack.size() != 1 || !stack.front().isString()) return std::nullopt;
  return stack.front();
}

// The types a value of static type `type` can have at run time: a Union's (Optional's) members,
// else the type itself.
std::vector<c10::TypePtr> run_time_types(const c10::TypePtr& type) {
  if (auto optional = type->cast<c10::OptionalType>()) return {optional->getElementType(), c10::NoneType::get()};
  if (auto as_union = type->cast<c10::UnionType>()) {
    auto members = as_union->containedTypes();
    return {members.begin(), members.end()};
  }
  return {type};
}

// `isinstance(x, T)` when x's static type decides it: true when every type x can have is a T,
// false when none of them can be one (neither is a subtype of the other). PyTorch 2's
// gaussian_nll_loss tests `isinstance(var, float)` of an argument that a scripted module passes a
// Tensor. Undecided (Any, a Union with a T among others, a class hierarchy) stays for the op packs.
std::optional<c10::IValue> static_isinstance(const torch::jit::Node* n) {
  if (n->kind() != c10::prim::isinstance || n->inputs().size() != 1 || !n->hasAttribute(c10::attr::types))
    return std::nullopt;
  const auto& candidates = n->tys(c10::attr::types);
  const auto is_one_of = [&](const c10::TypePtr& type) {
    return std::any_of(candidates.begin(), candidates.end(), [&](const c10::TypePtr& c) { return type->isSubtypeOf(*c); });
  };
  const auto may_be_one_of = [&](const c10::TypePtr& type) {
    if (type->kind() == c10::TypeKind::AnyType || type->kind() == c10::TypeKind::AnyClassType) return true;
    return std::any_of(candidates.begin(), candidates.end(),
                       [&](const c10::TypePtr& c) { return type->isSubtypeOf(*c) || c->isSubtypeOf(*type); });
  };
  const auto possible = run_time_types(n->input()->type());
  if (std::all_of(possible.begin(), possible.end(), is_one_of)) return c10::IValue(true);
  if (std::none_of(possible.begin(), possible.end(), may_be_one_of)) return c10::IValue(false);
  return std::nullopt;
}

void replace_with_constant(torch::jit::Node* n, const c10::IValue& value) {
  torch::jit::WithInsertPoint here(n);
  torch::jit::Value* constant = n->owningGraph()->insertConstant(value);
  n->output()->replaceAllUsesWith(constant);
  n->destroy();
}

bool can_be_none(const c10::TypePtr& type) {
  return type->kind() == c10::TypeKind::OptionalType || type->kind() == c10::TypeKind::NoneType ||
         type->kind() == c10::TypeKind::AnyType;
}

bool is_none_constant(const torch::jit::Value* v) {
  return v->node()->kind() == c10::prim::Constant && v->type()->kind() == c10::TypeKind::NoneType;
}

bool is_graph_input(const torch::jit::Value* v) {
  return v->node()->kind() == c10::prim::Param && v->node()->owningBlock() == v->owningGraph()->block();
}

// The element a prim::ListUnpack output takes, when the list is built in the same block by
// ListConstruct and appends only (a scripted list comprehension over a tuple).
const torch::jit::Value* unpacked_element(const torch::jit::Value* v) {
  const torch::jit::Node* unpack = v->node();
  const torch::jit::Value* list = unpack->input(0);
  if (list->node()->kind() != c10::prim::ListConstruct) return nullptr;
  std::vector<const torch::jit::Value*> items(list->node()->inputs().begin(), list->node()->inputs().end());
  for (const auto& use : list->uses()) {
    if (use.user == unpack) continue;
    if (use.user->kind() != c10::aten::append || use.offset != 0 || use.user->owningBlock() != unpack->owningBlock() ||
        !use.user->isBefore(unpack))
      return nullptr;
  }
  // Appends in program order.
  std::vector<const torch::jit::Node*> appends;
  for (const auto& use : list->uses())
    if (use.user != unpack) appends.push_back(use.user);
  std::sort(appends.begin(), appends.end(), [](const auto* a, const auto* b) { return a->isBefore(b); });
  for (const auto* append : appends) items.push_back(append->input(1));
  return v->offset() < items.size() && items.size() == unpack->outputs().size() ? items[v->offset()] : nullptr;
}

// The object a tensor value is, followed back through ops that return their input object: an
// in-place op (its result is the tensor it wrote) and conversions that may return their input
// unchanged. (A view is a new tensor object, even though it shares the storage.)
const torch::jit::Value* object_of(const torch::jit::Value* v) {
  static const std::vector<c10::Symbol> may_return_input = {c10::aten::contiguous, c10::aten::to, c10::aten::type_as,
                                                            c10::Symbol::fromQualString("aten::cpu"),
                                                            c10::prim::unchecked_cast};
  for (;;) {
    const torch::jit::Node* n = v->node();
    if (n->kind() == c10::prim::ListUnpack) {
      const torch::jit::Value* element = unpacked_element(v);
      if (!element) return v;
      v = element;
      continue;
    }
    if (std::find(may_return_input.begin(), may_return_input.end(), n->kind()) != may_return_input.end()) {
      v = n->input(0);
      continue;
    }
    const c10::FunctionSchema* schema = n->maybeSchema();
    if (!schema || v->offset() >= schema->returns().size()) return v;
    const c10::AliasInfo* written = schema->returns()[v->offset()].alias_info();
    if (!written || !written->isWrite()) return v;
    const torch::jit::Value* source = nullptr;
    for (size_t i = 0; i < schema->arguments().size() && i < n->inputs().size(); ++i) {
      const c10::AliasInfo* in = schema->arguments()[i].alias_info();
      if (in && in->isWrite() && in->beforeSets() == written->beforeSets()) source = n->input(i);
    }
    if (!source) return v;
    v = source;
  }
}

// A value that is a distinct object from every other such value: an input of the exported graph
// (the ONNX model takes its inputs separately) or the result of an op that makes a new tensor
// object (a new tensor, or a view: a new object over shared storage). Not: in-place results
// (object_of follows those), control-flow outputs, ops without a schema.
bool is_distinct_object(const torch::jit::Value* v) {
  if (is_graph_input(v)) return true;
  const c10::FunctionSchema* schema = v->node()->maybeSchema();
  if (!schema || v->offset() >= schema->returns().size() || v->type()->kind() != c10::TypeKind::TensorType)
    return false;
  const c10::AliasInfo* alias = schema->returns()[v->offset()].alias_info();
  return !alias || !alias->isWrite();
}

// Whether `a is b` is known at export: a value whose type cannot hold None is not None (an
// Optional argument the export was given); a value is itself; two values that are different
// objects (inputs of the exported graph, new tensors, or tensors written in place by them) are
// not the same (MultiheadAttention's `query is not key` and `key is value` tests).
std::optional<bool> known_identity(const torch::jit::Value* a, const torch::jit::Value* b) {
  if (is_none_constant(b)) std::swap(a, b);
  if (is_none_constant(a)) return can_be_none(b->type()) ? std::nullopt : std::optional<bool>(is_none_constant(b));
  if (a == b) return true;
  const torch::jit::Value* object_a = object_of(a);
  const torch::jit::Value* object_b = object_of(b);
  if (object_a != object_b && is_distinct_object(object_a) && is_distinct_object(object_b)) return false;
  return std::nullopt;
}

// `x is y` / `x is not y` when known_identity decides it, and the unchecked_cast that a
// refined Optional leaves behind.
bool fold_identity_test(torch::jit::Node* n) {
  const bool is = n->kind() == c10::Symbol::fromQualString("aten::__is__");
  const bool is_not = n->kind() == c10::Symbol::fromQualString("aten::__isnot__");
  if ((is || is_not) && n->inputs().size() == 2) {
    auto same = known_identity(n->input(0), n->input(1));
    if (!same) return false;
    replace_with_constant(n, c10::IValue(*same == is));
    return true;
  }
  if (n->kind() == c10::prim::unchecked_cast && n->input()->type()->isSubtypeOf(*n->output()->type())) {
    n->output()->replaceAllUsesWith(n->input());
    n->destroy();
    return true;
  }
  return false;
}

// `with torch.no_grad():` (or enable_grad / set_grad_enabled) in scripted code: a grad-mode
// object created, entered and exited around the block. Autograd is off during export, so the
// scope is dropped and its block stays. Returns false when the object has other uses.
bool drop_grad_mode_scope(torch::jit::Node* create) {
  if (create->kind() != c10::prim::CreateObject) return false;
  auto type = create->output()->type()->cast<c10::ClassType>();
  if (!type || !type->name() || type->name()->qualifiedName().find("torch.autograd.grad_mode.") == std::string::npos)
    return false;
  std::vector<torch::jit::Node*> scope;
  for (const auto& use : create->output()->uses()) {
    const auto kind = use.user->kind();
    if (kind != c10::prim::SetAttr && kind != c10::prim::Enter && kind != c10::prim::Exit) return false;
    for (const auto* out : use.user->outputs())
      if (out->hasUses()) return false;
    scope.push_back(use.user);
  }
  for (auto* n : scope) n->destroy();
  return true;
}

}  // namespace

size_t fold_export_time_facts(torch::jit::Block* block) {
  size_t folded = 0;
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    torch::jit::Node* n = *it++;
    for (auto* b : n->blocks()) folded += fold_export_time_facts(b);
    if (n->outputs().size() != 1) continue;
    if (drop_grad_mode_scope(n)) {
      it = std::next(n->iterator());  // its Enter/SetAttr nodes (which may follow it) are gone
      n->destroy();
      ++folded;
      continue;
    }
    if (fold_identity_test(n)) {
      ++folded;
    } else if (auto value = export_time_value(n)) {
      replace_with_constant(n, *value);
      ++folded;
    } else if (auto decided = static_isinstance(n)) {
      replace_with_constant(n, *decided);
      ++folded;
    } else if (auto text = formatted_constant_text(n)) {
      replace_with_constant(n, *text);
      ++folded;
    }
  }
  return folded;
}

size_t fold_recorded_types(torch::jit::Graph& graph) {
  size_t folded = 0;
  for (auto it = graph.nodes().begin(); it != graph.nodes().end();) {
    torch::jit::Node* n = *it++;
    const bool dtype = n->kind() == c10::prim::dtype;
    const bool rank = n->kind() == c10::aten::dim;
    if ((!dtype && !rank) || n->inputs().size() != 1) continue;
    auto type = n->input()->type()->cast<c10::TensorType>();
    if (!type) continue;
    if (dtype && type->scalarType()) {
      replace_with_constant(n, c10::IValue(static_cast<int64_t>(*type->scalarType())));
      ++folded;
    } else if (rank && type->dim()) {
      replace_with_constant(n, c10::IValue(static_cast<int64_t>(*type->dim())));
      ++folded;
    }
  }
  return folded;
}

}  // namespace onnxport::core
