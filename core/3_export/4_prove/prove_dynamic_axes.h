#pragma once
// The prove-dynamic-axes stage: the TorchScript graph is run again with every dynamic input axis one
// larger, and every exported value whose ONNX type claims a fixed size along the way must
// still have that size. A size the export baked in (a trace's Reshape target, an unrolled
// loop) fails here, naming the op, instead of producing a model that breaks at other sizes.
#include <string>
#include <vector>

#include "1_base/onnx_ir.h"
#include "onnxport/options.h"
#include "3_export/2_prepare/torch_graph.h"

namespace onnxport::core {

// Which ONNX value each converted top-level TorchScript tensor became.
using ValueNames = std::vector<std::pair<const torch::jit::Value*, std::string>>;

// Throws ExportError naming the first node whose exported size is fixed but changes with a
// dynamic axis. Returns a line per probe run ("x: 2x7 -> 3x7").
std::vector<std::string> prove_dynamic_axes(const PreparedGraph& prepared, const std::vector<std::string>& input_names,
                                            const ValueNames& names, const OnnxModel& model,
                                            const ExportOptions& options, const std::string& model_file);

}  // namespace onnxport::core
