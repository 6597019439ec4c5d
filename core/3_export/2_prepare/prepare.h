#pragma once
// The prepare stage: a loaded model becomes a clean, fully typed TorchScript graph. Modules are
// frozen (parameters become constants named by their module path), inlined and cleaned up; the
// export mode is chosen (a scripted graph is traced here in trace mode); then the graph runs once
// on the example inputs to record every tensor's concrete type.
#include "3_export/1_load/load.h"
#include "3_export/2_prepare/torch_graph.h"

namespace onnxport::core {

PreparedGraph prepare_model(LoadedModel loaded, const ExportOptions& options);

}  // namespace onnxport::core
