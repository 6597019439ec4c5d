#include "3_export/4_prove/prove_dynamic_axes.h"

#include <sstream>

#include "onnxport/errors.h"

namespace onnxport::core {

namespace {

std::string shape_text(at::IntArrayRef sizes) {
  std::ostringstream os;
  for (size_t i = 0; i < sizes.size(); ++i) os << (i ? "x" : "") << sizes[i];
  return sizes.empty() ? "scalar" : os.str();
}

// The example input grown by one along each of its dynamic axes, repeating its first slice so
// index-like values stay valid.
at::Tensor grow(const at::Tensor& t, const std::map<int64_t, std::string>& axes) {
  at::Tensor out = t;
  for (const auto& [axis, name] : axes)
    if (axis < out.dim()) out = at::cat({out, out.narrow(axis, 0, 1)}, axis);
  return out;
}

ErrorContext context_of(const torch::jit::Node* n, const std::string& model_file, const std::string& hint) {
  return ErrorContext::for_node(model_file, n->kind().toQualString(), module_path_of(n), source_of(n), {}, hint);
}

}  // namespace

std::vector<std::string> prove_dynamic_axes(const PreparedGraph& prepared, const std::vector<std::string>& input_names,
                                            const ValueNames& names, const OnnxModel& model, const ExportOptions& o,
                                            const std::string& model_file) {
  std::vector<std::string> runs;
  if (o.dynamic_axes.empty() || !o.check_dynamic_axes) return runs;
  std::vector<c10::IValue> inputs;
  if (prepared.self) inputs.push_back(prepared.self->_ivalue());
  std::ostringstream what;
  bool grown = false;
  for (size_t k = 0; k < prepared.example_tensors.size(); ++k) {
    const at::Tensor& t = prepared.example_tensors[k];
    auto axes = k < input_names.size() ? o.dynamic_axes.find(input_names[k]) : o.dynamic_axes.end();
    if (axes == o.dynamic_axes.end()) {
      inputs.emplace_back(t);
      continue;
    }
    at::Tensor g = grow(t, axes->second);
    what << (grown ? ", " : "") << input_names[k] << " " << shape_text(t.sizes()) << " -> " << shape_text(g.sizes());
    grown = true;
    inputs.emplace_back(g);
  }
  if (!grown) return runs;
  const std::string hint =
      "use --mode script, or compute the size from the tensor (x.size(0), x.shape) rather than a Python number; "
      "if the model only works at particular sizes, --no-dynamic-check skips this check";
  std::vector<std::pair<const torch::jit::Value*, at::Tensor>> values;
  try {
    values = run_and_collect(*prepared.graph, inputs);
  } catch (const std::exception& e) {
    std::string msg = e.what();
    // The interpreter's message ends with the failing op's own error.
    const auto last = msg.find_last_of('\n', msg.find_last_not_of("\n "));
    std::string tail = msg.substr(last == std::string::npos ? 0 : last + 1);
    throw ExportError("with the dynamic axes resized (" + what.str() + ") the model no longer runs: " +
                          (tail.empty() ? msg.substr(0, 200) : tail) + ": a size of the example input was baked in",
                      ErrorContext::for_file(model_file, hint));
  }
  std::unordered_map<const torch::jit::Value*, const at::Tensor*> probe;
  for (const auto& [v, t] : values) probe[v] = &t;
  for (const auto& [value, onnx_name] : names) {
    auto p = probe.find(value);
    auto type = model.value_types.find(onnx_name);
    if (p == probe.end() || type == model.value_types.end() || !type->second.has_tensor_type()) continue;
    const TensorType exported = from_type_proto(type->second);
    if (!exported.shape || exported.shape->size() != static_cast<size_t>(p->second->dim())) continue;
    for (size_t d = 0; d < exported.shape->size(); ++d) {
      const Dim& dim = (*exported.shape)[d];
      if (dim.kind != Dim::Kind::Static || dim.value == p->second->size(static_cast<int64_t>(d))) continue;
      const torch::jit::Node* n = value->node();
      throw ExportError("the exported graph fixes dim " + std::to_string(d) + " of this op's result to " +
                            std::to_string(dim.value) + ", but with the dynamic axes resized (" + what.str() +
                            ") it is " + std::to_string(p->second->size(static_cast<int64_t>(d))) +
                            ": a size that depends on a dynamic axis was baked in",
                        context_of(n, model_file, hint));
    }
  }
  runs.push_back(what.str());
  return runs;
}

}  // namespace onnxport::core
