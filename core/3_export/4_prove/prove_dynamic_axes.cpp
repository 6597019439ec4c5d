#include "3_export/4_prove/prove_dynamic_axes.h"

#include "onnxport/errors.h"

namespace onnxport::core {

namespace {

ErrorContext context_of(const torch::jit::Node* n, const std::string& model_file, const std::string& hint) {
  return ErrorContext::for_node(model_file, n->kind().toQualString(), module_path_of(n), source_of(n), {}, hint);
}

}  // namespace

DynamicAxesProof prove_dynamic_axes(const PreparedGraph& prepared, const ValueNames& names, const OnnxModel& model,
                                    const ExportOptions& options, const std::string& model_file) {
  DynamicAxesProof proof;
  const ResizedRun& resized = prepared.resized;
  if (resized.inputs.empty()) return proof;
  const std::string hint =
      "use --mode script, or compute the size from the tensor (x.size(0), x.shape) rather than a Python number; "
      "if the model only works at particular sizes, --no-dynamic-check skips this check";
  if (!resized.ran() && options.warn_unproven_dynamic_axes) {
    proof.warnings.push_back("the dynamic axes are not proven: with them resized (" + resized.inputs +
                             ") the model does not run on the example inputs (" + resized.failure +
                             "), so no size the export fixed was checked at another size");
    return proof;
  }
  if (!resized.ran())
    throw ExportError("with the dynamic axes resized (" + resized.inputs + ") the model no longer runs: " +
                          resized.failure + ": a size of the example input was baked in, or the model only runs at "
                          "particular sizes",
                      ErrorContext::for_file(model_file, hint + " (--warn-unproven-dynamic-axes writes the file "
                                                                "with a warning)"));
  for (const auto& [value, onnx_name] : names) {
    auto grown = resized.sizes.find(value);
    auto type = model.value_types.find(onnx_name);
    if (grown == resized.sizes.end() || type == model.value_types.end() || !type->second.has_tensor_type()) continue;
    const std::vector<int64_t>& sizes = grown->second;
    const TensorType exported = from_type_proto(type->second);
    if (!exported.shape || exported.shape->size() != sizes.size()) continue;
    for (size_t d = 0; d < sizes.size(); ++d) {
      const Dim& dim = (*exported.shape)[d];
      if (dim.kind != Dim::Kind::Static || dim.value == sizes[d]) continue;
      throw ExportError("the exported graph fixes dim " + std::to_string(d) + " of this op's result to " +
                            std::to_string(dim.value) + ", but with the dynamic axes resized (" + resized.inputs +
                            ") it is " + std::to_string(sizes[d]) + ": a size that depends on a dynamic axis was baked in",
                        context_of(value->node(), model_file, hint));
    }
  }
  // A traced graph re-run keeps the sizes it was traced at: the model's outputs as it was given say
  // what they must be.
  const auto& untraced = resized.untraced_output_sizes;
  if (untraced.size() == model.outputs.size()) {
    for (size_t k = 0; k < untraced.size(); ++k) {
      auto type = model.value_types.find(model.outputs[k].name);
      if (type == model.value_types.end() || !type->second.has_tensor_type()) continue;
      const TensorType exported = from_type_proto(type->second);
      if (!exported.shape || exported.shape->size() != untraced[k].size()) continue;
      for (size_t d = 0; d < untraced[k].size(); ++d) {
        const Dim& dim = (*exported.shape)[d];
        if (dim.kind != Dim::Kind::Static || dim.value == untraced[k][d]) continue;
        throw ExportError("the traced graph fixes dim " + std::to_string(d) + " of output '" + model.outputs[k].name +
                              "' to " + std::to_string(dim.value) + ", but with the dynamic axes resized (" +
                              resized.inputs + ") the model gives " + std::to_string(untraced[k][d]) +
                              ": the trace baked in a size that depends on a dynamic axis",
                          ErrorContext::for_file(model_file, "export with --mode script (or auto)"));
      }
    }
  }
  proof.runs.push_back(resized.inputs);
  return proof;
}

}  // namespace onnxport::core
