#include "3_export/5_passes/passes.h"

namespace onnxport::core {

namespace {

// Runs dead-code elimination and adds what it removed to the count.
void remove_dead(OnnxModel& model, PassStats& stats) {
  const size_t before = model.nodes.size();
  eliminate_dead_code(model);
  stats.removed_dead_nodes += before - model.nodes.size();
}

std::string nodes_text(size_t n) { return std::to_string(n) + (n == 1 ? " node" : " nodes"); }

}  // namespace

std::vector<std::string> PassStats::summary() const {
  std::vector<std::string> lines;
  if (folded_nodes)
    lines.push_back("constant folding: " + nodes_text(folded_nodes) + " folded into initializers" +
                    (transposes_over_weights ? ", " + std::to_string(transposes_over_weights) +
                                                   " of them Transposes written over their weights' bytes"
                                             : ""));
  if (fused_conv_bn)
    lines.push_back("Conv+BatchNormalization fusion: " + std::to_string(fused_conv_bn) + " pairs fused");
  if (fused_bias_adds)
    lines.push_back("bias fusion: " + std::to_string(fused_bias_adds) +
                    " Add/Sub of a constant joined the Conv, Gemm or MatMul before it");
  if (!removed_noops.empty()) {
    std::string line = "no-op removal:";
    for (const auto& [op, n] : removed_noops) line += " " + op + " x" + std::to_string(n);
    lines.push_back(line);
  }
  if (merged_reshape_chains)
    lines.push_back("Reshape-Transpose-Reshape merging: " + std::to_string(merged_reshape_chains) +
                    " chains made one Reshape and one Transpose");
  if (linears_between_reshapes)
    lines.push_back("Gemm between Reshapes: " + std::to_string(linears_between_reshapes) +
                    " made a MatMul on the unflattened value");
  if (moved_transposes)
    lines.push_back("Transpose moving: " + std::to_string(moved_transposes) +
                    " Transposes joined the ones across ops on the last axis");
  if (merged_transposes)
    lines.push_back("Transpose merging: " + std::to_string(merged_transposes) + " pairs made one Transpose");
  if (merged_concats)
    lines.push_back("Concat merging: " + std::to_string(merged_concats) + " Concats joined the Concat reading them");
  if (constant_reshape_targets)
    lines.push_back("Reshape targets from the types: " + std::to_string(constant_reshape_targets) +
                    " made constant");
  if (merged_nodes)
    lines.push_back("common-subexpression elimination: " + nodes_text(merged_nodes) + " merged into earlier ones");
  if (deduplicated_initializers)
    lines.push_back("initializer deduplication: " + std::to_string(deduplicated_initializers) +
                    " initializers equal to another removed");
  if (removed_dead_nodes) lines.push_back("dead-code elimination: " + nodes_text(removed_dead_nodes) + " removed");
  if (!dropped_inputs.empty()) {
    std::string line = "unused graph inputs dropped:";
    for (const auto& name : dropped_inputs) line += " " + name;
    lines.push_back(line);
  }
  return lines;
}

PassStats run_onnx_passes(OnnxModel& model, const ExportOptions& options, ParameterBytes bytes) {
  PassStats stats;
  remove_dead(model, stats);
  const ShapeReads shape_reads = options.drop_unused_inputs ? record_shape_reads(model) : ShapeReads{};
  if (options.do_constant_folding) {
    const FoldStats folded = fold_constants(model, options.opset_version, options.export_params, bytes);
    stats.folded_nodes = folded.folded_nodes;
    stats.transposes_over_weights = folded.transposes_over_weights;
    remove_dead(model, stats);
  }
  const bool inference = options.training == TrainingMode::Eval;
  if (inference && options.export_params) {
    stats.fused_conv_bn = fuse_conv_batchnorm(model, bytes.private_to_export);
    if (stats.fused_conv_bn > 0) remove_dead(model, stats);
  }
  // After folding, as in torch.onnx: an input only a folded Shape read may go too.
  if (options.drop_unused_inputs) stats.dropped_inputs = drop_unused_inputs(model, shape_reads);
  if (options.optimize < 1) return stats;
  stats.linears_between_reshapes = linear_between_reshapes(model);
  stats.merged_reshape_chains = merge_reshape_transpose_reshape(model);
  stats.merged_transposes = merge_transposes(model);
  stats.moved_transposes = move_transposes_to_transposes(model);
  stats.merged_concats = merge_concats(model);
  stats.removed_noops = remove_noops(model, options.opset_version, inference);
  stats.constant_reshape_targets = constant_reshape_targets(model);
  // Initializers listed as graph inputs can be fed by the user: they are not constants to rewrite
  // or merge.
  const bool initializers_are_constant =
      options.export_params && !options.keep_initializers_as_inputs && ir_version_for_opset(options.opset_version) >= 4;
  if (options.optimize >= 2 && initializers_are_constant)
    stats.fused_bias_adds = fuse_bias_adds(model, options.opset_version);
  // Before merging repeated nodes, which then also finds nodes that read equal initializers. As in
  // torch.onnx, for inference only: in training, equal tensors (two BatchNorms' fresh statistics)
  // are separate state, which training updates apart.
  if (initializers_are_constant && inference) stats.deduplicated_initializers = deduplicate_initializers(model);
  stats.merged_nodes = eliminate_common_subexpressions(model);
  remove_dead(model, stats);
  return stats;
}

}  // namespace onnxport::core
