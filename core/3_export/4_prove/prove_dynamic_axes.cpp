#include "3_export/4_prove/prove_dynamic_axes.h"

#include <optional>

#include "onnxport/errors.h"

namespace onnxport::core {

namespace {

ErrorContext context_of(const torch::jit::Node* n, const std::string& model_file, const std::string& hint) {
  return ErrorContext::for_node(model_file, n->kind().toQualString(), module_path_of(n), source_of(n), {}, hint);
}

// The first dim the ONNX type of `onnx_name` fixes to a size other than the grown run's.
struct BakedDim {
  size_t dim;
  int64_t fixed, grown;
};
std::optional<BakedDim> first_baked_dim(const OnnxModel& model, const std::string& onnx_name,
                                        const std::vector<int64_t>& grown) {
  auto type = model.value_types.find(onnx_name);
  if (type == model.value_types.end() || !type->second.has_tensor_type()) return std::nullopt;
  const TensorType exported = from_type_proto(type->second);
  if (!exported.shape || exported.shape->size() != grown.size()) return std::nullopt;
  for (size_t d = 0; d < grown.size(); ++d) {
    const Dim& dim = (*exported.shape)[d];
    if (dim.kind == Dim::Kind::Static && dim.value != grown[d]) return BakedDim{d, dim.value, grown[d]};
  }
  return std::nullopt;
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
    if (grown == resized.sizes.end()) continue;
    if (auto baked = first_baked_dim(model, onnx_name, grown->second))
      throw ExportError("the exported graph fixes dim " + std::to_string(baked->dim) + " of this op's result to " +
                            std::to_string(baked->fixed) + ", but with the dynamic axes resized (" + resized.inputs +
                            ") it is " + std::to_string(baked->grown) +
                            ": a size that depends on a dynamic axis was baked in",
                        context_of(value->node(), model_file, hint));
  }
  // A traced graph re-run keeps the sizes it was traced at: the model's outputs as it was given say
  // what they must be.
  const auto& untraced = resized.untraced_output_sizes;
  if (untraced.size() == model.outputs.size()) {
    for (size_t k = 0; k < untraced.size(); ++k) {
      if (!untraced[k] && !model.outputs[k].optional)
        throw ExportError("the traced graph gives a tensor as output '" + model.outputs[k].name +
                              "', but with the dynamic axes resized (" + resized.inputs +
                              ") the model returns None there: the trace fixed a branch or loop that depends on a "
                              "dynamic axis",
                          ErrorContext::for_file(model_file, "export with --mode script (or auto)"));
      if (!untraced[k]) continue;
      if (auto baked = first_baked_dim(model, model.outputs[k].name, *untraced[k]))
        throw ExportError("the traced graph fixes dim " + std::to_string(baked->dim) + " of output '" +
                              model.outputs[k].name + "' to " + std::to_string(baked->fixed) +
                              ", but with the dynamic axes resized (" + resized.inputs + ") the model gives " +
                              std::to_string(baked->grown) + ": the trace baked in a size that depends on a dynamic axis",
                          ErrorContext::for_file(model_file, "export with --mode script (or auto)"));
    }
  }
  proof.runs.push_back(resized.inputs);
  return proof;
}

}  // namespace onnxport::core
