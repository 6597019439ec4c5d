#pragma once
// One Python symbolic as an onnxport Symbolic: the node's arguments described to
// onnxport._bridge.run_symbolic, and the nodes the symbolic built replayed into the SDK graph.
#include "onnxport/registrar.h"

namespace onnxport::python_bridge {

// `key` names the function in onnxport._bridge; `file` is the .py pack ("" for the process).
Symbolic python_symbolic(int key, const std::string& file);

}  // namespace onnxport::python_bridge
