#pragma once
// The convert stage: every TorchScript node goes to the symbolic the resolve stage picked for it
// (or to the core's own conversion of control flow, constants and attributes).
#include <map>
#include <string>

#include "3_export/3_convert/graph_builder.h"
#include "onnxport/export.h"
#include "onnxport/options.h"
#include "3_export/3_convert/resolve.h"
#include "3_export/2_prepare/torch_graph.h"

namespace onnxport::core {

struct ConvertContext {
  const Resolution& resolution;
  const ExportOptions& options;
  std::string model_file;
  std::vector<std::string> input_names;  // graph input names, in order
  // Whether each node's origin carries its source line ("model.py:42"): for provenance doc
  // strings, the verbose graph and verification reports. Finding it reads the archive's debug
  // info, a measurable part of converting a large loaded model; errors find theirs when raised.
  bool record_sources = false;
};

// Ops the converter handles itself (control flow, constants, attributes): name, lowest opset.
const std::vector<std::pair<std::string, int>>& core_builtin_ops();

struct ConvertStats {
  std::map<std::string, size_t> fallback_ops;  // torch op -> nodes kept as ATen/fallthrough
  std::map<std::string, size_t> core_ops;      // control flow and placeholders the core converted
  // Top-level TorchScript tensor values and the ONNX value each became.
  std::vector<std::pair<const torch::jit::Value*, std::string>> value_names;
  std::vector<ExtraOutputReport> extra_outputs;  // --extra-outputs, as added
  std::vector<std::string> warnings;             // what the export went on without (ignored dynamic_axes names)
  // ops no schema checks ("FixedPerTensorAffine", "com.vendor::Op") -> nodes: see note_unchecked_ops
  std::map<std::string, size_t> unchecked_ops;
};

// Builds `model` from the prepared graph: graph inputs and outputs, every node through its
// symbolic, small constants folded as nodes are made (2_eval/fold_kernels.h), opset imports for the
// target opset and every custom domain used.
ConvertStats convert_to_onnx(const PreparedGraph& prepared, const ConvertContext& ctx, OnnxModel& model);

}  // namespace onnxport::core
