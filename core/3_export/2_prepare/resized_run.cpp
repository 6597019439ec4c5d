#include "3_export/2_prepare/resized_run.h"

#include <functional>
#include <sstream>

#include "1_base/libtorch_message.h"
#include "1_base/torch_release.h"

namespace onnxport::core {

namespace {

std::string shape_text(at::IntArrayRef sizes) {
  std::ostringstream os;
  for (size_t i = 0; i < sizes.size(); ++i) os << (i ? "x" : "") << sizes[i];
  return sizes.empty() ? "scalar" : os.str();
}

// Which slice a grown axis repeats: index-like values (lengths, positions) stay valid when the
// new slice copies an existing one; the first and the last suit sorted data in either order.
enum class Repeat { First, Last };

at::Tensor grow(const at::Tensor& t, const std::map<int64_t, std::string>& axes, Repeat repeat) {
  at::Tensor out = t;
  for (const auto& [axis, name] : axes) {
    if (axis >= out.dim() || out.size(axis) == 0) continue;
    const int64_t at = repeat == Repeat::First ? 0 : out.size(axis) - 1;
    out = at::cat({out, out.narrow(axis, at, 1)}, axis);
  }
  return out;
}

// The flattened tensor outputs' sizes of `graph` run on `inputs` (nullopt for a None).
std::vector<std::optional<std::vector<int64_t>>> output_sizes(const std::shared_ptr<torch::jit::Graph>& graph,
                                                              torch::jit::Stack inputs) {
  run_graph(graph, inputs);
  std::vector<std::optional<std::vector<int64_t>>> sizes;
  std::function<void(const c10::IValue&)> add = [&](const c10::IValue& v) {
    if (v.isTensor()) {
      sizes.push_back(v.toTensor().sizes().vec());
    } else if (v.isNone()) {
      sizes.push_back(std::nullopt);
    } else if (v.isTuple()) {
      for (const auto& e : v.toTupleRef().elements()) add(e);
    } else if (v.isList()) {
      for (const auto& e : v.toListRef()) add(e);
    }
  };
  for (const auto& v : inputs) add(v);
  return sizes;
}

}  // namespace

ResizedRun run_resized(const PreparedGraph& prepared, const std::vector<std::string>& input_names,
                       const ExportOptions& o) {
  ResizedRun run;
  if (o.dynamic_axes.empty() || !o.check_dynamic_axes) return run;
  // The grown inputs may not fit together (an LSTM's state keeps the example's batch): the native
  // kernels refuse them where libtorch 2.6's oneDNN LSTM corrupts the heap.
  const torch_release::OneDnnOff native_kernels;
  for (const Repeat repeat : {Repeat::First, Repeat::Last}) {
    std::vector<c10::IValue> inputs;
    if (prepared.self) inputs.push_back(prepared.self->_ivalue());
    std::ostringstream what;
    for (size_t k = 0; k < prepared.example_tensors.size(); ++k) {
      const at::Tensor& t = prepared.example_tensors[k];
      const auto axes = k < input_names.size() ? o.dynamic_axes.find(input_names[k]) : o.dynamic_axes.end();
      if (axes == o.dynamic_axes.end()) {
        inputs.emplace_back(t);
        continue;
      }
      const at::Tensor grown = grow(t, axes->second, repeat);
      if (!grown.sizes().equals(t.sizes()))
        what << (what.tellp() > 0 ? ", " : "") << input_names[k] << " " << shape_text(t.sizes()) << " -> "
             << shape_text(grown.sizes());
      inputs.emplace_back(grown);
    }
    run.inputs = what.str();
    if (run.inputs.empty()) return run;
    try {
      for (const auto& [value, tensor] : run_and_collect(*prepared.graph, inputs))
        if (!tensor.is_nested()) run.sizes[value] = tensor.sizes().vec();  // a nested tensor has no sizes
      if (prepared.untraced) {
        torch::jit::Stack untraced_inputs;
        if (prepared.untraced_self) untraced_inputs.push_back(prepared.untraced_self->_ivalue());
        untraced_inputs.insert(untraced_inputs.end(), inputs.begin() + (prepared.self ? 1 : 0), inputs.end());
        run.untraced_output_sizes = output_sizes(prepared.untraced, std::move(untraced_inputs));
      }
      run.failure.clear();
      return run;
    } catch (const c10::Error& e) {  // an ATen check: its what() ends with a C++ backtrace
      run.sizes.clear();
      if (run.failure.empty()) run.failure = libtorch_error_line(e.what_without_backtrace());
    } catch (const std::exception& e) {  // the interpreter's: the TorchScript traceback, then the reason
      run.sizes.clear();
      if (run.failure.empty()) run.failure = libtorch_error_line(e.what());
    }
  }
  return run;
}

}  // namespace onnxport::core
