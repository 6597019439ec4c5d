#pragma once
// The prepare stage: a loaded model becomes a clean, fully typed TorchScript graph. Modules are
// frozen (parameters become constants named by their module path), inlined and cleaned up; the
// export mode is chosen (a scripted graph is traced here in trace mode); then the graph runs once
// on the example inputs to record every tensor's concrete type, and with dynamic axes once more
// with them grown (resized_run.h).
#include "3_export/1_load/load.h"
#include "3_export/2_prepare/torch_graph.h"

namespace onnxport::core {

PreparedGraph prepare_model(LoadedModel loaded, const ExportOptions& options);

// The graph inputs' names, one per graph input: input_names, else the name the --input specs
// give it (PreparedGraph::input_names), else "input_<k>".
// `given` with the dims a --state-io state's calls change (PreparedGraph::state_dynamic_axes) made
// dynamic, where the user named none: what the export's later stages take.
ExportOptions with_state_dynamic_axes(const ExportOptions& given, const PreparedGraph& prepared);

std::vector<std::string> graph_input_names(const ExportOptions& options, const std::vector<std::string>& from_specs,
                                           size_t count);

}  // namespace onnxport::core
