// In-place ops and writes through views. TorchScript mutates values (x.add_(1), y[:, i] = v,
// lst.append(t)); ONNX values are immutable. The converter keeps one current ONNX value per
// TorchScript value: a write rebinds the written value, is carried back through the chain of
// views it was made from (slice -> slice_scatter, select -> select_scatter, view -> Reshape,
// transpose -> Transpose), and marks other views of the same storage for recomputation.
// Inside If/Loop, written outer values become extra branch outputs / loop-carried values
// (control_flow.cpp).
#include <algorithm>

#include "3_export/3_convert/converter.h"
#include "onnxport/errors.h"

namespace onnxport::core {

namespace {

bool shares_alias_set(const c10::AliasInfo& a, const c10::AliasInfo& b) {
  for (const auto& s : a.beforeSets())
    if (b.beforeSets().count(s) && s != c10::AliasInfo::wildcardSet()) return true;
  return false;
}

std::string kind_name(const torch::jit::Node* n) { return n->kind().toQualString(); }

bool is_inside(const torch::jit::Node* n, const torch::jit::Node* container) {
  for (const auto* b = n->owningBlock(); b && b->owningNode(); b = b->owningNode()->owningBlock())
    if (b->owningNode() == container) return true;
  return false;
}

// Kinds whose write-back is a Reshape of the updated value to the base's shape.
bool is_reshaping_view(const std::string& k) {
  static const std::set<std::string> kinds = {"aten::view",      "aten::reshape",    "aten::flatten",
                                              "aten::unflatten", "aten::squeeze",    "aten::unsqueeze",
                                              "aten::view_as",   "aten::reshape_as", "aten::_reshape_alias"};
  return kinds.count(k) > 0;
}

bool is_identity_view(const std::string& k) {
  static const std::set<std::string> kinds = {"aten::detach", "aten::alias",   "aten::contiguous",  "aten::lift_fresh",
                                              "aten::to",     "aten::type_as", "aten::view_as_real"};
  return kinds.count(k) > 0;
}

// An op of a library's own namespace registered without a schema of its own (alias analysis
// CONSERVATIVE) that returns nothing, like torchaudio::_overdrive_core_loop: it can only act by
// writing its arguments, and its schema does not say which.
bool writes_unannotated_arguments(const torch::jit::Node* n, const c10::FunctionSchema& schema) {
  if (!schema.returns().empty() || n->kind().is_aten() || n->kind().is_prim()) return false;
  const auto* op = n->maybeOperator();
  return op && op->aliasAnalysisKind() == c10::AliasAnalysisKind::CONSERVATIVE;
}

}  // namespace

AliasInfo alias_info_of(const torch::jit::Node* n) {
  AliasInfo info;
  const auto* schema = n->maybeSchema();
  if (!schema) return info;
  const auto& args = schema->arguments();
  for (size_t i = 0; i < args.size() && i < n->inputs().size(); ++i)
    if (args[i].alias_info() && args[i].alias_info()->isWrite()) info.written_inputs.push_back(i);
  if (!schema->returns().empty() && schema->returns()[0].alias_info())
    for (size_t i = 0; i < args.size() && i < n->inputs().size(); ++i)
      if (args[i].alias_info() && shares_alias_set(*schema->returns()[0].alias_info(), *args[i].alias_info())) {
        info.output_aliases_input = i;
        break;
      }
  if (info.written_inputs.empty() && writes_unannotated_arguments(n, *schema))
    for (size_t i = 0; i < n->inputs().size(); ++i)
      if (n->inputs()[i]->type()->cast<c10::TensorType>()) info.written_inputs.push_back(i);
  return info;
}

size_t out_arguments(const torch::jit::Node* n) {
  const auto* schema = n->maybeSchema();
  if (!schema || schema->returns().empty()) return 0;
  const auto& args = schema->arguments();
  const size_t count = schema->returns().size();
  if (args.size() < count || n->inputs().size() != args.size()) return 0;
  for (size_t k = args.size() - count; k < args.size(); ++k)
    if (!args[k].kwarg_only() || !args[k].alias_info() || !args[k].alias_info()->isWrite()) return 0;
  return count;
}

namespace {
// The view's result is its input itself: an in-place op's aliasing output (y = x.add_(1)) or a
// no-op view (detach, contiguous, ...).
bool is_identity_alias(const torch::jit::Node* view) {
  const AliasInfo info = alias_info_of(view);
  const bool in_place = std::find(info.written_inputs.begin(), info.written_inputs.end(), *info.output_aliases_input) !=
                        info.written_inputs.end();
  return in_place || is_identity_view(kind_name(view));
}
}  // namespace

void Converter::analyze_aliases(const torch::jit::Block* block) {
  for (const auto* n : block->nodes()) {
    for (const auto* b : n->blocks()) analyze_aliases(b);
    if (n->kind() == c10::prim::ListConstruct || n->kind() == c10::prim::TupleConstruct)
      for (const auto* in : n->inputs())
        if (in->type()->kind() == c10::TypeKind::ListType) containers_[in].push_back(n->output());
    if (n->outputs().empty() || !n->blocks().empty()) continue;
    const AliasInfo info = alias_info_of(n);
    if (!info.output_aliases_input) continue;
    const auto* base = n->inputs()[*info.output_aliases_input];
    view_parent_[n->outputs()[0]] = {base, n};
    view_children_[base].push_back(n->outputs()[0]);
  }
}

const torch::jit::Value* Converter::root_of(const torch::jit::Value* v) const {
  for (auto it = view_parent_.find(v); it != view_parent_.end(); it = view_parent_.find(v)) v = it->second.first;
  return v;
}

std::vector<const torch::jit::Value*> Converter::written_outer_values(const torch::jit::Node* n) const {
  std::vector<const torch::jit::Value*> out;
  std::function<void(const torch::jit::Block*)> visit = [&](const torch::jit::Block* b) {
    for (const auto* inner : b->nodes()) {
      for (const auto* sub : inner->blocks()) visit(sub);
      for (size_t i : alias_info_of(inner).written_inputs) {
        const auto* root = root_of(inner->inputs()[i]);
        if (is_inside(root->node(), n) || root->node() == n) continue;
        if (std::find(out.begin(), out.end(), root) == out.end()) out.push_back(root);
      }
    }
  };
  for (const auto* b : n->blocks()) visit(b);
  return out;
}

void Converter::apply_mutations(const torch::jit::Node* n, const std::vector<Value*>& outs, size_t num_outputs) {
  const AliasInfo info = alias_info_of(n);
  size_t next_update = num_outputs;
  for (size_t i : info.written_inputs) {
    Value* updated = info.output_aliases_input == i ? outs[0] : outs[next_update++];
    const auto current = env_.find(n->inputs()[i]);
    if (current != env_.end() && current->second == updated && !stale_.count(n->inputs()[i])) continue;  // unchanged
    rebind(n->inputs()[i], updated);
  }
  // The node's own outputs are current: rebinding their base marked them stale.
  for (const auto* out : n->outputs()) stale_.erase(out);
}

void Converter::rebind(const torch::jit::Value* v, Value* updated) {
  const Value* before = env_.count(v) ? env_.at(v) : nullptr;
  if (before && before->is_tensor() && updated->is_tensor() && before->dtype() != DType::Undefined)
    updated = cast_to(updated, before->dtype());  // x.add_(y) keeps x's dtype
  env_[v] = updated;
  stale_.erase(v);
  refresh_containers(v);
  auto parent = view_parent_.find(v);
  if (parent == view_parent_.end()) {
    mark_views_stale(v);
    return;
  }
  const auto* base = parent->second.first;
  const auto* view_node = parent->second.second;
  Value* new_base = write_back(view_node, lookup(base), updated);
  rebind(base, new_base);
  // The recursive call marked every view of the root stale, `v`'s own views included; `v` is current.
  stale_.erase(v);
}

// `groups = [a, b]` holds the lists a and b themselves: once a is appended to, groups holds the
// new a (the list values of the conversion are snapshots, rebuilt here).
void Converter::refresh_containers(const torch::jit::Value* list) {
  auto found = containers_.find(list);
  if (found == containers_.end()) return;
  for (const auto* container : found->second) {
    if (!env_.count(container)) continue;
    std::vector<Value*> items;
    for (const auto* in : container->node()->inputs()) items.push_back(lookup(in));
    env_[container] = builder_.own(CoreValue::make_list_value(items));
    refresh_containers(container);
  }
}

void Converter::mark_views_stale(const torch::jit::Value* base) {
  auto children = view_children_.find(base);
  if (children == view_children_.end()) return;
  for (const auto* child : children->second) {
    if (!env_.count(child)) continue;
    stale_.insert(child);
    mark_views_stale(child);
  }
}

// A view made before its base was written: recompute it from the current base.
Value* Converter::refresh_view(const torch::jit::Value* v) {
  stale_.erase(v);
  const auto& [base, node] = view_parent_.at(v);
  Value* current_base = lookup(base);
  Value* fresh = nullptr;
  if (is_identity_alias(node)) {
    fresh = current_base;  // y = x.add_(1): y is x
  } else {
    std::vector<Value*> args;
    for (const auto* in : node->inputs()) args.push_back(in == base ? current_base : lookup(in));
    fresh = run_symbolic(node, args)[0];
  }
  env_[v] = fresh;
  return fresh;
}

Value* Converter::write_back(const torch::jit::Node* view, Value* base, Value* updated) {
  const std::string k = kind_name(view);
  if (is_identity_alias(view)) return updated;
  if (!base->is_tensor() || !updated->is_tensor()) return updated;  // lists: the list itself
  builder_.set_origin(core_origin(view));
  auto arg = [&](size_t i) { return lookup(view->inputs()[i]); };
  if (k == "aten::slice")
    return call_symbolic("aten::slice_scatter", view, {base, updated, arg(1), arg(2), arg(3), arg(4)});
  if (k == "aten::select") return call_symbolic("aten::select_scatter", view, {base, updated, arg(1), arg(2)});
  if (k == "aten::narrow") {
    Value* start = arg(2);
    Value* end = builder_.op("Add", {cast_to(start, DType::Int64), cast_to(arg(3), DType::Int64)});
    return call_symbolic("aten::slice_scatter", view, {base, updated, arg(1), start, end, builder_.constant_int(1)});
  }
  if (is_reshaping_view(k)) return builder_.op("Reshape", {updated, builder_.op("Shape", {base})});
  if (k == "aten::transpose" || k == "aten::swapaxes" || k == "aten::swapdims" || k == "aten::t" ||
      k == "aten::permute" || k == "aten::numpy_T") {
    // The inverse permutation of the view's, applied with the same symbolic.
    return call_symbolic(k, view, [&] {
      std::vector<Value*> args{updated};
      for (size_t i = 1; i < view->inputs().size(); ++i) args.push_back(arg(i));
      if (k == "aten::permute") {
        auto perm = arg(1)->maybe_ints();
        if (!perm)
          throw ExportError("aten::permute with a run-time permutation cannot be written through", error_context(view));
        std::vector<int64_t> inverse(perm->size());
        const auto rank = static_cast<int64_t>(perm->size());
        for (int64_t i = 0; i < rank; ++i) inverse[static_cast<size_t>(((*perm)[i] + rank) % rank)] = i;
        args[1] = builder_.own(CoreValue::make_list_value([&] {
          std::vector<Value*> items;
          for (int64_t d : inverse) items.push_back(builder_.add_torch_constant(d, {}));
          return items;
        }()));
      }
      return args;
    }());
  }
  ErrorContext ec = error_context(view);
  ec.hint = "write to the tensor itself (e.g. torch.where, index_put, scatter) instead of through this view";
  throw ExportError("an in-place write goes through a view made by " + k + ", which onnxport cannot write back", ec);
}

}  // namespace onnxport::core
