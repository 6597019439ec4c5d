#pragma once
// With dynamic axes, the prepared graph runs once more with every dynamic input axis one larger
// (each new slice a copy of the first, or failing that of the last, so that lengths and indices
// stay valid); the prove stage checks that every size the ONNX types fix held in it. Where the
// model's own data forbids any such run (sorted sequence lengths, repeat counts, an even size),
// the failure is kept: no size is proven, and none is refused.
//
// The sizes are not used to decide which dims are static: a dim that kept its size in one more
// run may still follow the axes (a detection model resizes every square image to the same size,
// whatever its size, but not every image).
#include <string>
#include <vector>

#include "3_export/2_prepare/torch_graph.h"
#include "onnxport/options.h"

namespace onnxport::core {

ResizedRun run_resized(const PreparedGraph& prepared, const std::vector<std::string>& input_names,
                       const ExportOptions& options);

}  // namespace onnxport::core
