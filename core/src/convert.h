#pragma once
// The conversion driver: every TorchScript node goes through the registry to its symbolic.
#include <map>
#include <string>

#include "graph_builder.h"
#include "onnxport/options.h"
#include "onnxport/registry/registry.h"
#include "torch_graph.h"

namespace onnxport::core {

struct ConvertContext {
  const Registry& registry;
  const ExportOptions& options;
  std::string model_file;
  std::vector<std::string> input_names;  // graph input names, in order
};

// Throws UnsupportedOpError listing every unmapped op (with counts and module paths) before
// converting anything.
void check_coverage(const torch::jit::Graph& graph, const ConvertContext& ctx);

// Ops the converter handles itself (control flow, constants, attributes): name, lowest opset.
const std::vector<std::pair<std::string, int>>& core_builtin_ops();

struct ConvertStats {
  std::map<std::string, size_t> fallback_ops;  // torch op -> nodes kept as ATen/fallthrough
  std::map<std::string, size_t> core_ops;      // control flow and placeholders the core converted
  // Top-level TorchScript tensor values and the ONNX value each became.
  std::vector<std::pair<const torch::jit::Value*, std::string>> value_names;
};

ConvertStats convert_graph(const PreparedGraph& prepared, const ConvertContext& ctx, GraphBuilder& builder,
                           OnnxModel& model);

}  // namespace onnxport::core
