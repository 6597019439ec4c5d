#pragma once
// The prove-dynamic-axes stage: the prepare stage ran the TorchScript graph again with every
// dynamic input axis one larger (2_prepare/resized_run.h); every exported value whose ONNX type
// claims a fixed size must have had that size in that run. A size the export baked in (a trace's
// Reshape target, an unrolled loop) fails here, naming the op, instead of producing a model that
// breaks at other sizes. A model that cannot run at the grown sizes at all is no evidence either
// way (a baked size, or data that forbids other sizes): it fails, or with
// options.warn_unproven_dynamic_axes is exported with a warning.
#include <string>
#include <vector>

#include "1_base/onnx_ir.h"
#include "onnxport/options.h"
#include "3_export/2_prepare/torch_graph.h"

namespace onnxport::core {

// Which ONNX value each converted top-level TorchScript tensor became.
using ValueNames = std::vector<std::pair<const torch::jit::Value*, std::string>>;

struct DynamicAxesProof {
  std::vector<std::string> runs;      // what grew in the run that proved them ("x: 2x7 -> 3x7")
  std::vector<std::string> warnings;  // why nothing could be proven
};

// Throws ExportError naming the first node whose exported size is fixed but changed with a
// dynamic axis.
DynamicAxesProof prove_dynamic_axes(const PreparedGraph& prepared, const ValueNames& names, const OnnxModel& model,
                                    const ExportOptions& options, const std::string& model_file);

}  // namespace onnxport::core
