#pragma once
// --extra-outputs: intermediate values made graph outputs, after the model's own. A spec is read
// as an ONNX value name, else as a module path (the values its nodes compute that the rest of
// the graph reads), else as a TorchScript value name of the prepared graph (`hidden` finds
// `hidden.1` when the variable has one value); anything else is an error listing the closest
// names the graph has. Only top-level values qualify: not those inside an If or Loop body.
#include <string>
#include <utility>
#include <vector>

#include "3_export/3_convert/graph_builder.h"
#include "onnxport/export.h"
#include "3_export/2_prepare/torch_graph.h"

namespace onnxport::core {

// Top-level TorchScript tensor values and the ONNX value each became (ConvertStats::value_names).
using TorchValueNames = std::vector<std::pair<const torch::jit::Value*, std::string>>;

// After the ONNX value `from` was renamed `to` (a graph output named): the same in `torch_values`.
void rename_onnx_value(TorchValueNames& torch_values, const std::string& from, const std::string& to);

// Appends one typed graph output per value the specs name (named after the spec, or
// "spec:K" when a module computes several; an ONNX value keeps its name). Renamed values are
// renamed in `torch_values` too. Throws ConfigError for an unknown spec, a graph input or
// parameter, a value that is already an output, or two specs naming one value.
std::vector<ExtraOutputReport> add_extra_outputs(const std::vector<std::string>& specs, TorchValueNames& torch_values,
                                                 GraphBuilder& builder, OnnxModel& model);

}  // namespace onnxport::core
