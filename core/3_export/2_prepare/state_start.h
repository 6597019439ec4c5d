#pragma once
// --state-io for a model whose state takes its lasting type in its first call: a streaming
// model's context saved empty (`torch.zeros(0)`) and filled by the first call as
// `torch.zeros(batch, 64)`. An ONNX input and output cannot take both types, so the export takes
// the state as it is from the first call on, when the file's first call is reproduced by a call
// from zeros of those types (what a streaming ONNX model's users feed first). Decided by running
// the method on the example arguments: once from the file's state, once more to see the types
// stay, and once from zeros to compare with the first call.
#include <torch/script.h>

#include <optional>
#include <string>
#include <vector>

#include "onnxport/options.h"

namespace onnxport::core {

struct StateStart {
  torch::jit::Module module;  // the module as it is after one call, its changed states zeros
  std::string warning;        // names the states, both types and what to feed first
};

// Nothing when no tensor the method assigns changes its dtype or shape in the first call (or the
// method cannot be called on `arguments` here: the pipeline then reports why). Throws ModelError
// when a state keeps changing its type (a growing cache) or a call from zeros does not give the
// file's first call. `arguments`: one per argument of forward (the method exported).
std::optional<StateStart> start_state_after_first_call(const torch::jit::Module& module,
                                                       const std::vector<torch::jit::IValue>& arguments,
                                                       const ExportOptions& options);

}  // namespace onnxport::core
