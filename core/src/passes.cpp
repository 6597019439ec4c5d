#include "passes.h"

namespace onnxport::core {

PassStats run_onnx_passes(OnnxModel& model, const ExportOptions& options) {
  PassStats stats;
  eliminate_dead_code(model);
  if (options.do_constant_folding) {
    stats.folded_nodes = fold_constants(model, options.opset_version, options.export_params).folded_nodes;
    eliminate_dead_code(model);
  }
  if (options.training == TrainingMode::Eval && options.export_params) {
    stats.fused_conv_bn = fuse_conv_batchnorm(model);
    if (stats.fused_conv_bn > 0) eliminate_dead_code(model);
  }
  return stats;
}

}  // namespace onnxport::core
