#pragma once
// ONNX passes over the core's ONNX IR, one per file (pass_*.cpp), and the stage that runs them
// after conversion (passes.cpp). Each works on a hand-built OnnxModel as well as an exported one.
#include <cstddef>

#include "onnx_ir.h"
#include "onnxport/options.h"

namespace onnxport::core {

// pass_dead_code.cpp: removes nodes whose outputs nobody reads (sub-graphs' captured names
// count as reads) and initializers nobody uses (and duplicate initializer names).
void eliminate_dead_code(OnnxModel& model);

// pass_fold_constants.cpp: evaluates nodes whose inputs are all constants (initializers,
// Constant nodes, or Shape of a value whose shape is fully static) with the ONNX evaluator and
// replaces them with initializers named after the output they replace. Graph outputs are kept.
// parameters_are_constant: false with export_params=false (parameters are then graph inputs).
struct FoldStats {
  size_t folded_nodes = 0;
};
FoldStats fold_constants(OnnxModel& model, int opset, bool parameters_are_constant);

// pass_fuse_conv_bn.cpp, eval mode only (as torch.onnx does): a Conv whose only consumer is an
// inference BatchNormalization with constant statistics becomes one Conv with folded weight and
// bias, which keep the conv's parameter names. Returns the number of fused pairs.
size_t fuse_conv_batchnorm(OnnxModel& model);

// The ONNX-passes stage: dead code, constant folding (do_constant_folding), Conv+BN fusion
// (eval mode with parameters), each followed by dead-code elimination when it changed something.
struct PassStats {
  size_t folded_nodes = 0;
  size_t fused_conv_bn = 0;
};
PassStats run_onnx_passes(OnnxModel& model, const ExportOptions& options);

}  // namespace onnxport::core
