#pragma once
// A module that assigns its own attributes in forward (`self.scale = self.scale * 2`): after
// freezing, the graph still reads and writes those attributes through `self`. The export
// computes one call: each read takes the attribute's value at that point of the call (its value
// when the model was loaded, or the last value assigned before it, on the path taken: an
// assignment inside a branch or loop makes the value an If output or loop-carried value), and the
// writes go. ONNX graphs have no state: the new value is lost between calls, unless the tensors
// assigned are made graph inputs and outputs (WrittenState::as_io, --state-io).
#include <torch/csrc/jit/ir/ir.h>
#include <torch/script.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace onnxport::core {

// The module tensors forward assigns.
struct WrittenState {
  bool as_io = false;              // set by the caller: make them graph inputs and outputs
  std::vector<std::string> paths;  // "_state", "_model.h", in the order of the inputs and outputs
  std::vector<at::Tensor> loaded;  // each one's value when the model was loaded
};

// Every attribute path ("_state", "stats.avg") a node of `graph` assigns on its input 0 (`self`)
// or a submodule reached from it by prim::GetAttr, inside blocks too. `graph`: a method, inlined.
std::set<std::string> assigned_attributes(const torch::jit::Graph& graph);

// Every attribute path the method assigns, itself or through the methods it calls.
std::set<std::string> assigned_attributes(const torch::jit::Method& method);

// The module holding the attribute at dotted `path` ("stats.avg": self.stats) and the attribute's
// name in it ("avg"); the name is empty when a part of the path is no submodule.
std::pair<torch::jit::Module, std::string> attribute_owner(const torch::jit::Module& module, const std::string& path);

// The tensor at dotted `path` of `module`, or an undefined tensor when there is none.
at::Tensor attribute_tensor(const torch::jit::Module& module, const std::string& path);
// Assigns `value` to the attribute at dotted `path` of `module`.
void set_attribute_tensor(const torch::jit::Module& module, const std::string& path, const at::Tensor& value);

// Rewrites prim::GetAttr/prim::SetAttr on `self` (graph input 0) and its submodules, for every
// attribute that forward assigns. Throws ModelError when an assignment sits inside another kind of
// block. Returns how many attributes it resolved; `state` gets those holding tensors. With
// state.as_io each of those starts from a new graph input appended after the others instead of
// its loaded value, and its value at the end of the call is a graph output appended after the
// others.
size_t fold_attribute_writes(torch::jit::Graph& graph, const torch::jit::Module& self, WrittenState& state);

}  // namespace onnxport::core
