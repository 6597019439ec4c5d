#pragma once
// --state-io for a model whose state changes its type in calls. An ONNX input and output pair
// takes a state of one dtype and rank; its sizes may vary along dynamic dims.
// - Sizes only (an empty context `torch.zeros(0)` filled as `torch.zeros(2)`, a cache that grows):
//   the dims that change become dynamic dims of the state's input (and of its output where later
//   calls change them), and the file starts from the state the model file holds. The graph made
//   from that first call is then run from the state after it and must give the module's second
//   call (a trace fixes the branch the first call took; the check catches it).
// - Dtype or rank (`torch.zeros(0)` made `torch.zeros(batch, 64)`): the export takes the state as
//   it is from the first call on, when a call from zeros of those types reproduces the file's
//   first call (what a streaming ONNX model's users feed first).
// Decided by running the method on the example arguments: once from the file's state, once more
// to see which types stay, and once from zeros when the start is moved.
#include <torch/script.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "onnxport/options.h"

namespace onnxport::core {

// The method called from `state` gives `outputs` (its tensors in order) and leaves `state_after`.
struct StateCall {
  std::vector<at::Tensor> state;
  std::vector<at::Tensor> outputs;
  std::vector<at::Tensor> state_after;
};

struct StateStart {
  // Set when a state changed dtype or rank: the module as it is after one call, its changed
  // states zeros. Otherwise the export starts from the model file's state.
  std::optional<torch::jit::Module> module;
  // Per state path: the axes whose size changes from call to call, as inputs and as outputs.
  std::map<std::string, std::vector<int64_t>> input_axes, output_axes;
  // When axes are dynamic: a later call of the module, which the prepared graph must reproduce.
  std::optional<StateCall> later_call;
  std::string warning;  // names the states, their types and what to feed first
};

// Nothing when no tensor the method assigns changes its dtype or shape in the first two calls (or
// the method cannot be called on `arguments` here: the pipeline then reports why). Throws
// ModelError when a state keeps changing its dtype or rank, or a moved start is not reproduced by
// zeros. `arguments`: one per argument of forward (the method exported).
std::optional<StateStart> start_state_after_first_call(const torch::jit::Module& module,
                                                       const std::vector<torch::jit::IValue>& arguments,
                                                       const ExportOptions& options);

// Throws ModelError unless `graph` (made from the first call: traced or scripted), run on
// `inputs` with its last state inputs set to `later.state`, gives `later`'s outputs and states.
void check_graph_gives_later_call(const std::shared_ptr<torch::jit::Graph>& graph, torch::jit::Stack inputs,
                                  const StateCall& later, const std::vector<std::string>& paths, bool scripted);

// With --state-io, only tensors become inputs and outputs: a number the method assigns (a
// remembered batch size or sample rate) reads as its value in `module` in every call of the ONNX
// file. A warning naming each with its value, or nothing when the method assigns none.
std::optional<std::string> number_state_warning(const torch::jit::Module& module);

// Whether `a` and `b` hold the same values (float ones to 1e-5), of the same dtypes and sizes.
bool same_tensors(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b);

}  // namespace onnxport::core
