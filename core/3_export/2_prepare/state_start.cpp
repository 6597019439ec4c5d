#include "3_export/2_prepare/state_start.h"

#include "onnxport/errors.h"
#include "1_base/libtorch_message.h"
#include "3_export/2_prepare/attribute_writes.h"
#include "3_export/2_prepare/torch_graph.h"

namespace onnxport::core {

namespace {

struct Call {
  std::vector<at::Tensor> outputs;  // the method's result, its tensors in order
  std::vector<at::Tensor> state;    // each state path's value after the call
};

void collect_tensors(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) collect_tensors(e, out);
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) collect_tensors(e, out);
  } else if (v.isGenericDict()) {
    for (const auto& kv : v.toGenericDict()) collect_tensors(kv.value(), out);
  }
}

// A copy of `module` whose tensors are its own, in the mode the export runs it.
torch::jit::Module own_copy(const torch::jit::Module& module, const ExportOptions& options) {
  const at::NoGradGuard no_grad;
  torch::jit::Module copy = module.clone();
  if (options.training == TrainingMode::Eval) copy.eval();
  if (options.training == TrainingMode::Train) copy.train();
  return copy;
}

Call call(torch::jit::Module& module, const std::vector<torch::jit::IValue>& arguments,
          const std::vector<std::string>& paths) {
  const at::NoGradGuard no_grad;
  Call result;
  collect_tensors(module.forward(arguments), result.outputs);
  for (auto& t : result.outputs) t = t.clone();
  for (const auto& path : paths) result.state.push_back(attribute_tensor(module, path).clone());
  return result;
}

bool same_type(const at::Tensor& a, const at::Tensor& b) {
  return a.scalar_type() == b.scalar_type() && a.sizes() == b.sizes();
}

bool close(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!same_type(a[i], b[i])) return false;
    if (a[i].is_floating_point() || a[i].is_complex()) {
      if (!at::allclose(a[i], b[i], 1e-5, 1e-6, /*equal_nan=*/true)) return false;
    } else if (!at::equal(a[i], b[i])) {
      return false;
    }
  }
  return true;
}

std::string tensor_type(const at::Tensor& t) { return type_text(c10::TensorType::create(t)); }

// The tensors the method assigns, by attribute path.
std::vector<std::string> tensor_state_paths(const torch::jit::Module& module) {
  std::vector<std::string> paths;
  for (const auto& path : assigned_attributes(module.get_method("forward")))
    if (attribute_tensor(module, path).defined()) paths.push_back(path);
  return paths;
}

}  // namespace

std::optional<StateStart> start_state_after_first_call(const torch::jit::Module& module,
                                                       const std::vector<torch::jit::IValue>& arguments,
                                                       const ExportOptions& options) {
  const std::vector<std::string> paths = tensor_state_paths(module);
  if (paths.empty()) return std::nullopt;
  torch::jit::Module first = own_copy(module, options);
  std::vector<at::Tensor> in_file;
  for (const auto& path : paths) in_file.push_back(attribute_tensor(first, path).clone());
  Call from_file;
  try {
    from_file = call(first, arguments, paths);
  } catch (const std::exception&) {
    return std::nullopt;  // the pipeline's own run reports it, with its hints
  }
  std::vector<size_t> changed;
  for (size_t k = 0; k < paths.size(); ++k)
    if (!same_type(in_file[k], from_file.state[k])) changed.push_back(k);
  if (changed.empty()) return std::nullopt;

  auto first_change = [&](size_t k) {
    return "--state-io: state '" + paths[k] + "' is " + tensor_type(in_file[k]) + " in the model file and " +
           tensor_type(from_file.state[k]) + " after a call";
  };
  // The calls below differ from the first only in the state they start from.
  auto call_again = [&](const torch::jit::Module& from, const char* what) {
    torch::jit::Module copy = own_copy(from, options);
    try {
      return call(copy, arguments, paths);
    } catch (const std::exception& e) {
      throw ModelError(first_change(changed.front()) + "; calling the model " + what + " failed: " +
                           libtorch_error_line(e.what()),
                       ErrorContext::with_hint("save the model with its state in the type the calls keep (call it "
                                               "once, then save it), or export without --state-io"));
    }
  };
  const Call again = call_again(first, "a second time");
  for (size_t k : changed)
    if (!same_type(from_file.state[k], again.state[k]))
      throw ModelError(first_change(k) + " and " + tensor_type(again.state[k]) +
                           " after two: an input and output of the ONNX file cannot follow a type that keeps changing",
                       ErrorContext::with_hint("keep the state at a fixed size in the model, or export without "
                                               "--state-io"));

  // From the first call on: the states that changed start from zeros, the others from the file.
  torch::jit::Module start = own_copy(first, options);
  for (size_t k = 0; k < paths.size(); ++k) set_attribute_tensor(start, paths[k], in_file[k]);
  for (size_t k : changed) set_attribute_tensor(start, paths[k], at::zeros_like(from_file.state[k]));
  const Call from_zeros = call_again(start, "from zeros in that state");
  if (!close(from_zeros.outputs, from_file.outputs) || !close(from_zeros.state, from_file.state))
    throw ModelError(first_change(changed.front()) +
                         ", and a call from zeros in its place does not give the file's first call: an input and "
                         "output of the ONNX file cannot take both types",
                     ErrorContext::with_hint("save the model with its state in the type the calls keep (call it "
                                             "once, then save it), or export without --state-io"));
  std::string names, types;
  for (size_t k : changed) {
    names += (names.empty() ? "'" : ", '") + paths[k] + "'";
    types += (types.empty() ? "" : ", ") + tensor_type(in_file[k]) + " -> " + tensor_type(from_file.state[k]);
  }
  const bool one = changed.size() == 1;
  return StateStart{start, std::string("--state-io: state") + (one ? " " : "s ") + names +
                               (one ? " takes its lasting type" : " take their lasting types") + " in the first call (" +
                               types + "): the ONNX file takes " + (one ? "it" : "them") +
                               " so; start a loop from zeros, which gives the model file's first call"};
}

}  // namespace onnxport::core
