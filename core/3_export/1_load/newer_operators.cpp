#include "3_export/1_load/newer_operators.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/frontend/function_schema_parser.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <memory>
#include <stdexcept>

#include "3_export/1_load/newer_operator_kernels.h"

namespace onnxport::core {

std::string operator_release_note(const std::string& op) {
  struct Row {
    const char* op;
    const char* release;  // the first compared release that declares it
    const char* earlier;  // the compared release before it, which does not
  };
  static const Row rows[] = {
#include "3_export/1_load/operator_releases.inc"
  };
  for (const Row& row : rows)
    if (op == row.op)
      return std::string(" (an operator of PyTorch ") + row.release + "; " + row.earlier + " has none of that name)";
  return "";
}

const std::vector<NewerOperator>& newer_operators() {
  static const std::vector<NewerOperator> table = {
      // PyTorch 2.0; `scale` from 2.1, `enable_gqa` from 2.5 (keyword-only with defaults: files of
      // 2.0-2.4, which do not pass them, match this schema too).
      {"aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
       "float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor",
       "2.0", [] { return torch::CppFunction(&scaled_dot_product_attention); }},
      // PyTorch 2.4: torch.nn.RMSNorm and F.rms_norm.
      {"aten::rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor", "2.4",
       [] { return torch::CppFunction::makeFromBoxedFunction<&rms_norm_boxed>(); }},
  };
  return table;
}

namespace {

// "aten::name" or "aten::name.overload", as torch::Library::impl takes it.
std::string qualified_name(const c10::OperatorName& name) {
  return name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
}

// An operator TorchScript knows without the dispatcher (prim ops, some aten ops of the JIT).
bool known_to_torchscript(const c10::OperatorName& name) {
  for (const auto& op : torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(name.name)))
    if (op->schema().overload_name() == name.overload_name) return true;
  return false;
}

// The registrations stay for the life of the process: never destroyed, so nothing unregisters
// them while libtorch's own statics are torn down at exit.
std::vector<torch::Library*>& libraries() {
  static auto* kept = new std::vector<torch::Library*>();
  return *kept;
}

NewerOperatorStatus register_one(const NewerOperator& entry) {
  c10::FunctionSchema schema = torch::jit::parseSchema(entry.schema);
  schema.setAliasAnalysis(c10::AliasAnalysisKind::FROM_SCHEMA);  // as TORCH_LIBRARY's def does
  const c10::OperatorName name = schema.operator_name();         // a copy: the schema is moved into the library
  if (auto known = c10::Dispatcher::singleton().findSchema(name)) {
    if (known->schema() == schema) return {name.name, NewerOperatorStatus::Outcome::Known, ""};
    return {name.name, NewerOperatorStatus::Outcome::KnownDifferently, c10::toString(known->schema())};
  }
  if (known_to_torchscript(name)) return {name.name, NewerOperatorStatus::Outcome::Known, ""};
  const std::string ns = name.name.substr(0, name.name.find("::"));
  // Until both steps succeed the library is ours to drop, and with it a schema left without kernel.
  auto library = std::make_unique<torch::Library>(torch::Library::FRAGMENT, ns, c10::nullopt, __FILE__, __LINE__);
  try {
    library->def(std::move(schema));
    // CompositeImplicitAutograd, as PyTorch declares this kind of operator: one kernel of ATen ops
    // for every device, and autograd through its pieces.
    library->impl(qualified_name(name).c_str(),
                  torch::dispatch(c10::DispatchKey::CompositeImplicitAutograd, entry.kernel()));
  } catch (const c10::Error& e) {
    throw std::logic_error("registering " + qualified_name(name) + " (PyTorch " + entry.since +
                           ") failed: " + e.what_without_backtrace());
  }
  libraries().push_back(library.release());
  return {name.name, NewerOperatorStatus::Outcome::Registered, ""};
}

}  // namespace

std::vector<NewerOperatorStatus> register_newer_operators(const std::vector<NewerOperator>& table) {
  std::vector<NewerOperatorStatus> statuses;
  for (const NewerOperator& entry : table) statuses.push_back(register_one(entry));
  return statuses;
}

const std::vector<NewerOperatorStatus>& register_newer_operators_once() {
  static const std::vector<NewerOperatorStatus> statuses = register_newer_operators(newer_operators());
  return statuses;
}

}  // namespace onnxport::core
