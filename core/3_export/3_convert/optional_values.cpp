// Values that are None on some paths only: an If whose one branch gives None and the other a
// tensor (Emformer's `padding_mask = None if B == 1 else ...` with a batch known at run time).
// ONNX If outputs are tensors (Optional types exist from opset 15 and are little supported), so
// such a value is carried at every opset as two If outputs: the tensor, with a placeholder where
// the branch gave None, and a bool saying whether it is present. TorchScript reads an Optional
// only through `is None` / `is not None` tests and the refinement (prim::unchecked_cast) those
// tests guard: the tests become the presence flag, the refinement the tensor. The placeholder is
// therefore never computed with. Any other reader is refused, naming the op.
#include "3_export/3_convert/converter.h"

namespace onnxport::core {

namespace {

bool is_none_literal(const torch::jit::Value* v) { return v->type()->kind() == c10::TypeKind::NoneType; }

bool is_optional_type(const torch::jit::Value* v) { return v->type()->kind() == c10::TypeKind::OptionalType; }

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

bool Converter::convert_maybe_none_reader(const torch::jit::Node* n) {
  const torch::jit::Value* optional = nullptr;
  for (const auto* in : n->inputs())
    if (presence_.count(in)) optional = in;
  if (!optional) return false;

  const bool is_test = n->kind() == c10::Symbol::fromQualString("aten::__is__") ||
                       n->kind() == c10::Symbol::fromQualString("aten::__isnot__");
  if (is_test && n->inputs().size() == 2) {
    const auto* other = n->input(0) == optional ? n->input(1) : n->input(0);
    if (!presence_.count(other) && lookup(other)->is_none()) {
      count_core_op(n);
      Value* present = presence_.at(optional);
      const bool asks_none = n->kind() == c10::Symbol::fromQualString("aten::__is__");
      Value* answer = asks_none ? builder_.op("Not", {present}) : present;
      static_cast<CoreValue*>(answer)->set_scalar(true);
      env_[n->output()] = answer;
      return true;
    }
  }
  if (n->kind() == c10::prim::unchecked_cast) {  // only reached where the value is not None
    count_core_op(n);
    env_[n->output()] = lookup(optional);
    return true;
  }
  ErrorContext ec = error_context(n);
  ec.hint = "test it with `is None` / `is not None` before using it, or give both branches a tensor";
  throw ExportError(std::string(n->kind().toQualString()) + " reads '" + optional->debugName() +
                        "', a value that is None on some paths (an If gives None in one branch): onnxport carries "
                        "such a value only to `is None` tests and the uses they guard",
                    ec);
}

}  // namespace onnxport::core
