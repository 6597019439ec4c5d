// Values that are None on some paths only: an If whose one branch gives None and the other a
// tensor (Emformer's `padding_mask = None if B == 1 else ...` with a batch known at run time).
// ONNX If outputs are tensors (Optional types exist from opset 15 and are little supported), so
// such a value is carried at every opset as two If outputs: the tensor, with a placeholder where
// the branch gave None, and a bool saying whether it is present. TorchScript reads an Optional
// only through `is None` / `is not None` tests and the refinement (prim::unchecked_cast) those
// tests guard: the tests become the presence flag, the refinement the tensor. The placeholder is
// therefore never computed with. Any other reader is refused, naming the op.
// A maybe-None value the graph returns is an ONNX optional (opset 16, where If and Loop carry
// optionals): an If that gives it straight to the graph's outputs makes one in each branch, as
// torch.onnx writes it, and so does a loop that carries it (with the Ifs in its body that give
// it); any other is wrapped when it is returned.
#include <algorithm>

#include "3_export/3_convert/converter.h"

namespace onnxport::core {

namespace {

bool is_none_literal(const torch::jit::Value* v) { return v->type()->kind() == c10::TypeKind::NoneType; }

bool is_optional_type(const torch::jit::Value* v) { return v->type()->kind() == c10::TypeKind::OptionalType; }

// Whether the top-level node output `v` goes to the graph's outputs and nowhere else.
bool only_returned(const torch::jit::Value* v) {
  const torch::jit::Graph& graph = *v->owningGraph();
  const auto& uses = v->uses();
  return v->node()->owningBlock() == graph.block() && !uses.empty() &&
         std::all_of(uses.begin(), uses.end(), [&](const torch::jit::Use& u) { return u.user == graph.return_node(); });
}

}  // namespace

bool Converter::may_be_none(const torch::jit::Value* branch_output) const {
  if (is_none_literal(branch_output) || presence_.count(branch_output)) return true;
  // An Optional made inside the branch (not converted yet, e.g. by a nested If) is known only once
  // the branch is converted, so it is carried as one; if it is a tensor, its presence is constant.
  return is_optional_type(branch_output) && !env_.count(branch_output);
}

std::vector<size_t> Converter::outputs_maybe_none(const torch::jit::Node* n) const {
  std::vector<size_t> indices;
  for (size_t i = 0; i < n->outputs().size(); ++i) {
    const auto* then_out = n->blocks()[0]->outputs()[i];
    const auto* else_out = n->blocks()[1]->outputs()[i];
    if (is_none_literal(then_out) && is_none_literal(else_out)) continue;  // None on every path: stays None
    if (may_be_none(then_out) || may_be_none(else_out)) indices.push_back(i);
  }
  return indices;
}

Value* Converter::presence_in_branch(const torch::jit::Value* branch_output) {
  if (auto it = presence_.find(branch_output); it != presence_.end()) return it->second;
  Value* present = builder_.constant(Tensor::scalar_bool(!lookup(branch_output)->is_none()));
  static_cast<CoreValue*>(present)->set_scalar(true);
  return present;
}

void Converter::bind_maybe_none(const torch::jit::Value* v, Value* tensor, Value* present) {
  static_cast<CoreValue*>(present)->set_scalar(true);
  env_[v] = tensor;
  presence_[v] = present;
}

std::vector<bool> Converter::optional_outputs(const torch::jit::Node* n, const std::vector<size_t>& maybe_none) const {
  std::vector<bool> optional(n->outputs().size(), false);
  if (ctx_.options.opset_version < 16) return optional;
  for (size_t i : maybe_none) optional[i] = only_returned(n->outputs()[i]);
  for (size_t i = 0; i < n->outputs().size(); ++i) {
    if (!is_optional_type(n->outputs()[i])) continue;
    for (const auto* block : n->blocks())  // a branch gives an optional made before (a loop's carried one)
      if (auto it = env_.find(block->outputs()[i]); it != env_.end() && it->second->is_optional()) optional[i] = true;
  }
  return optional;
}

// A reader of a maybe-None value `optional`: an `is None` / `is not None` test gets its answer from
// `present`, the refinement (prim::unchecked_cast) the tests guard gets `element`. Any other
// reader is refused: `what` says what the value is.
bool Converter::read_maybe_none(const torch::jit::Node* n, const torch::jit::Value* optional,
                                const std::function<Value*()>& present, const std::function<Value*()>& element,
                                const std::string& what) {
  const bool asks_none = n->kind() == c10::Symbol::fromQualString("aten::__is__");
  const bool is_test = asks_none || n->kind() == c10::Symbol::fromQualString("aten::__isnot__");
  if (is_test && n->inputs().size() == 2) {
    const auto* other = n->input(0) == optional ? n->input(1) : n->input(0);
    if (!presence_.count(other) && lookup(other)->is_none()) {
      count_core_op(n);
      Value* answer = asks_none ? builder_.op("Not", {present()}) : present();
      static_cast<CoreValue*>(answer)->set_scalar(true);
      env_[n->output()] = answer;
      return true;
    }
  }
  if (n->kind() == c10::prim::unchecked_cast) {  // only reached where the value is not None
    count_core_op(n);
    env_[n->output()] = element();
    return true;
  }
  ErrorContext ec = error_context(n);
  ec.hint = "test it with `is None` / `is not None` before using it, or give every path a tensor";
  throw ExportError(std::string(n->kind().toQualString()) + " reads '" + optional->debugName() + "', " + what +
                        ": onnxport carries such a value only to `is None` tests and the uses they guard",
                    ec);
}

bool Converter::convert_maybe_none_reader(const torch::jit::Node* n) {
  for (const auto* in : n->inputs()) {
    if (auto it = presence_.find(in); it != presence_.end())
      return read_maybe_none(
          n, in, [&] { return it->second; }, [&] { return lookup(in); },
          "a value that is None on some paths (an If gives None in one branch)");
    if (auto it = env_.find(in); it != env_.end() && it->second->is_optional())
      return read_maybe_none(
          n, in, [&] { return builder_.op("OptionalHasElement", {it->second}); },
          [&] { return builder_.op("OptionalGetElement", {it->second}); }, "a value that may be None (an ONNX optional)");
  }
  return false;
}

std::vector<bool> Converter::returned_optional_carries(const torch::jit::Node* n) const {
  std::vector<bool> returned(n->outputs().size(), false);
  if (ctx_.options.opset_version < 16) return returned;
  for (size_t i = 0; i < n->outputs().size(); ++i)
    returned[i] = is_optional_type(n->outputs()[i]) && only_returned(n->outputs()[i]);
  return returned;
}

TensorType Converter::carried_element_type(const Value* initial, const torch::jit::Value* body_result) const {
  if (initial->is_tensor() || initial->is_optional()) return initial->type();
  if (auto it = env_.find(body_result); it != env_.end() && it->second->is_tensor()) return it->second->type();
  TensorType recorded = tensor_type_of(body_result, false);
  if (recorded.dtype == DType::Undefined) recorded.dtype = DType::Float;
  if (recorded.shape)
    for (Dim& d : *recorded.shape) d = Dim::unknown();
  return recorded;
}

Value* Converter::as_optional(const torch::jit::Value* torch_value, Value* value, const TensorType& element) {
  if (value->is_optional()) return value;
  if (value->is_none()) return builder_.empty_optional(element);
  if (auto it = presence_.find(torch_value); it != presence_.end()) {
    auto holding = [&, this](Graph&, const std::vector<Value*>&) {
      return std::vector<Value*>{builder_.op("Optional", {value})};
    };
    auto holding_nothing = [&, this](Graph&, const std::vector<Value*>&) {
      return std::vector<Value*>{builder_.empty_optional(element)};
    };
    return builder_.op("If", {it->second},
                       {{"then_branch_g", Subgraph{{}, holding}}, {"else_branch_g", Subgraph{{}, holding_nothing}}});
  }
  return builder_.op("Optional", {value});
}

}  // namespace onnxport::core
