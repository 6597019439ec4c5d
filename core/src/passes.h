#pragma once
// ONNX passes over the core's ONNX IR, one per file (pass_*.cpp), and the stage that runs them
// after conversion (passes.cpp). Each works on a hand-built OnnxModel as well as an exported one.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

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

// pass_remove_noops.cpp: removes nodes that give their input back unchanged (Identity; Cast to
// the input's own type; Transpose by the identity permutation; Reshape, Expand, Flatten or
// Squeeze whose static output shape is the input's; Dropout in inference, its mask unread).
// Readers of the output read the input instead; a node making a graph output stays. Returns
// the removed nodes by op type.
std::map<std::string, size_t> remove_noops(OnnxModel& model, int opset, bool inference);

// pass_cse.cpp: common-subexpression elimination. A standard-domain node without sub-graphs
// that repeats an earlier node's op, inputs and attributes is dropped and its outputs read from
// the earlier one (random ops and custom domains excepted). Returns the number dropped.
size_t eliminate_common_subexpressions(OnnxModel& model);

// pass_dedup_initializers.cpp: initializers with equal dtype, shape and bytes (tied weights,
// repeated constants) become the first of them. Returns the number removed.
size_t deduplicate_initializers(OnnxModel& model);

// The ONNX-passes stage, by options.optimize:
//   0: what torch.onnx does: dead code, constant folding (do_constant_folding), Conv+BN fusion
//      (eval mode with parameters), each followed by dead-code elimination when it changed something;
//   1 (default): then no-op removal, initializer deduplication (parameters written as
//      initializers only) and common-subexpression elimination.
struct PassStats {
  size_t folded_nodes = 0;
  size_t fused_conv_bn = 0;
  std::map<std::string, size_t> removed_noops;
  size_t merged_nodes = 0;
  size_t deduplicated_initializers = 0;
  size_t removed_dead_nodes = 0;
  // One line per pass that changed something, for --verbose: "constant folding: 12 nodes folded".
  std::vector<std::string> summary() const;
};
PassStats run_onnx_passes(OnnxModel& model, const ExportOptions& options);

}  // namespace onnxport::core
