#include "3_export/2_prepare/state_start.h"

#include <algorithm>
#include <sstream>

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

bool same_rank_and_dtype(const at::Tensor& a, const at::Tensor& b) {
  return a.scalar_type() == b.scalar_type() && a.dim() == b.dim();
}

// The axes along which `a` and `b`, of one rank, differ in size, added to `axes` (kept sorted).
void add_differing_axes(const at::Tensor& a, const at::Tensor& b, std::vector<int64_t>& axes) {
  for (int64_t d = 0; d < a.dim(); ++d)
    if (a.size(d) != b.size(d) && std::find(axes.begin(), axes.end(), d) == axes.end()) axes.push_back(d);
  std::sort(axes.begin(), axes.end());
}

std::string tensor_type(const at::Tensor& t) { return type_text(c10::TensorType::create(t)); }

std::string axes_text(const std::vector<int64_t>& axes) {
  std::string text = axes.size() == 1 ? "axis " : "axes ";
  for (size_t i = 0; i < axes.size(); ++i) text += (i ? ", " : "") + std::to_string(axes[i]);
  return text;
}

// The tensors the method assigns, by attribute path.
std::vector<std::string> tensor_state_paths(const torch::jit::Module& module) {
  std::vector<std::string> paths;
  for (const auto& path : assigned_attributes(module.get_method("forward")))
    if (attribute_tensor(module, path).defined()) paths.push_back(path);
  return paths;
}

}  // namespace

bool same_tensors(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
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
  // The calls below differ from the first only in the state they start from; `module` is left in
  // the state its call leaves.
  auto call_from = [&](torch::jit::Module& module, const char* what) {
    try {
      return call(module, arguments, paths);
    } catch (const std::exception& e) {
      throw ModelError(first_change(changed.front()) + "; calling the model " + what + " failed: " +
                           libtorch_error_line(e.what()),
                       ErrorContext::with_hint("save the model with its state in the type the calls keep (call it "
                                               "once, then save it), or export without --state-io"));
    }
  };
  torch::jit::Module second = own_copy(first, options);
  const Call again = call_from(second, "a second time");
  for (size_t k = 0; k < paths.size(); ++k)
    if (!same_rank_and_dtype(from_file.state[k], again.state[k]))
      throw ModelError((same_type(in_file[k], from_file.state[k]) ? "--state-io: state '" + paths[k] + "' is " +
                                                                        tensor_type(in_file[k]) + " after a call"
                                                                  : first_change(k)) +
                           " and " + tensor_type(again.state[k]) +
                           " after two: an input and output of the ONNX file cannot follow a dtype or rank that "
                           "keeps changing",
                       ErrorContext::with_hint("keep the state's dtype and rank fixed in the model, or export without "
                                               "--state-io"));

  StateStart start;
  for (size_t k = 0; k < paths.size(); ++k) {
    std::vector<int64_t> axes;
    add_differing_axes(from_file.state[k], again.state[k], axes);
    if (!axes.empty()) start.output_axes[paths[k]] = axes;
  }
  std::vector<size_t> reshaped;  // the states whose dtype or rank the first call changed
  for (size_t k : changed)
    if (!same_rank_and_dtype(in_file[k], from_file.state[k])) reshaped.push_back(k);
  std::string names, types;
  for (size_t k : reshaped.empty() ? changed : reshaped) {
    names += (names.empty() ? "'" : ", '") + paths[k] + "'";
    types += (types.empty() ? "" : ", ") + tensor_type(in_file[k]) + " -> " + tensor_type(from_file.state[k]);
  }
  const bool one = (reshaped.empty() ? changed : reshaped).size() == 1;

  if (reshaped.empty()) {  // sizes only: dynamic dims, from the file's state
    start.input_axes = start.output_axes;
    for (size_t k : changed) add_differing_axes(in_file[k], from_file.state[k], start.input_axes[paths[k]]);
    start.later_call = StateCall{from_file.state, again.outputs, again.state};
    std::string dims;
    for (const auto& [path, axes] : start.input_axes)
      dims += (dims.empty() ? "" : ", ") + path + " " + axes_text(axes);
    start.warning = std::string("--state-io: state") + (one ? " " : "s ") + names + " change" + (one ? "s" : "") +
                    " size in calls (" + types + "): the ONNX file takes dynamic dims (" + dims +
                    ") and starts from the model file's state";
    return start;
  }

  // From the first call on: the states that changed start from zeros, the others from the file.
  torch::jit::Module from_zeros_module = own_copy(first, options);
  for (size_t k = 0; k < paths.size(); ++k) set_attribute_tensor(from_zeros_module, paths[k], in_file[k]);
  for (size_t k : changed) set_attribute_tensor(from_zeros_module, paths[k], at::zeros_like(from_file.state[k]));
  start.module = own_copy(from_zeros_module, options);
  const Call from_zeros = call_from(from_zeros_module, "from zeros in that state");
  if (!same_tensors(from_zeros.outputs, from_file.outputs) || !same_tensors(from_zeros.state, from_file.state))
    throw ModelError(first_change(reshaped.front()) +
                         ", and a call from zeros in its place does not give the file's first call: an input and "
                         "output of the ONNX file cannot take both types",
                     ErrorContext::with_hint("save the model with its state in the type the calls keep (call it "
                                             "once, then save it), or export without --state-io"));
  std::string dims;
  if (!start.output_axes.empty()) {  // a state that keeps changing size: checked one call further
    start.input_axes = start.output_axes;
    const Call later = call_from(from_zeros_module, "from zeros, a second time");
    start.later_call = StateCall{from_zeros.state, later.outputs, later.state};
    for (const auto& [path, axes] : start.input_axes)
      dims += (dims.empty() ? "; dynamic dims: " : ", ") + path + " " + axes_text(axes);
  }
  start.warning = std::string("--state-io: state") + (one ? " " : "s ") + names +
                  (one ? " takes its lasting type" : " take their lasting types") + " in the first call (" + types +
                  "): the ONNX file takes " + (one ? "it" : "them") +
                  " so; start a loop from zeros, which gives the model file's first call" + dims;
  return start;
}

std::optional<std::string> number_state_warning(const torch::jit::Module& module) {
  std::string listed;
  for (const auto& path : assigned_attributes(module.get_method("forward"))) {
    const auto [owner, name] = attribute_owner(module, path);
    if (name.empty()) continue;
    const c10::IValue value = owner.attr(name);
    if (!value.isInt() && !value.isDouble() && !value.isBool()) continue;
    std::ostringstream text;
    text << value;
    listed += (listed.empty() ? "" : ", ") + path + " = " + text.str();
  }
  if (listed.empty()) return std::nullopt;
  return "--state-io: forward also assigns numbers (" + listed +
         "), which are no state inputs: every call of the ONNX file reads them so, and one that would change them "
         "(another batch size or sample rate) computes as if they held";
}

void check_graph_gives_later_call(const std::shared_ptr<torch::jit::Graph>& graph, torch::jit::Stack inputs,
                                  const StateCall& later, const std::vector<std::string>& paths, bool scripted) {
  const size_t first_state = inputs.size() - later.state.size();
  for (size_t k = 0; k < later.state.size(); ++k) inputs[first_state + k] = later.state[k].clone();
  std::vector<at::Tensor> expected = later.outputs, got;
  expected.insert(expected.end(), later.state_after.begin(), later.state_after.end());
  std::string failed;
  try {
    const at::NoGradGuard no_grad;
    run_graph(graph, inputs);
    for (const auto& v : inputs) collect_tensors(v, got);
  } catch (const std::exception& e) {
    failed = ": running it failed: " + libtorch_error_line(e.what());
  }
  if (failed.empty() && same_tensors(got, expected)) return;
  std::string names;
  for (const auto& path : paths) names += (names.empty() ? "'" : ", '") + path + "'";
  throw ModelError("--state-io: the graph " + std::string(scripted ? "scripted" : "traced") +
                       " from the model file's state does not give the module's next call from " +
                       "the state (" + names + ") after it" +
                       (failed.empty() ? ": their values differ" : failed),
                   ErrorContext::with_hint(scripted ? "save the model with its state as one call leaves it (call it "
                                                      "once, then save it), or export without --state-io"
                                                    : "export with --mode script, which keeps the branches on the "
                                                      "state in the graph, or save the model with its state as one "
                                                      "call leaves it"));
}

}  // namespace onnxport::core
