#pragma once
// Trace vs script: what the model's control flow depends on, and tracing a scripted graph.
#include <torch/script.h>

#include <string>
#include <vector>

#include "onnxport/options.h"

namespace onnxport::core {

// What decides a prim::If branch or a prim::Loop trip count.
enum class Dependence { None, Shape, Data };  // constants only | input sizes | tensor values

struct ControlFlowSite {
  const torch::jit::Node* node;  // prim::If / prim::Loop, or an op making a number of a tensor
  Dependence dependence;
  std::string describe() const;  // "prim::If in encoder.layers.0 (model.py:42)"
};

// What a trace would fix to the example inputs' outcome: every prim::If / prim::Loop with what
// decides it, and every number taken from a tensor computed from the inputs' values (aten::Int,
// aten::item, ...: dependence Data), which a trace would keep as the example's number.
// Also every size of an input-derived tensor taken as a number (aten::size, numel, len, ...): the
// tracer of libtorch that re-traces a graph with control flow keeps such a number as the example's.
struct TraceFixedSites {
  std::vector<ControlFlowSite> control_flow, numbers, sizes;
};
TraceFixedSites trace_fixed_sites(const torch::jit::Graph& graph);

struct ModeChoice {
  bool script = false;
  size_t control_flow_sites = 0;  // prim::If / prim::Loop nodes in the graph
  std::string reason;
  std::vector<std::string> warnings;
};
ModeChoice choose_mode(const torch::jit::Graph& graph, const ExportOptions& options);

// Runs `graph` once on `inputs` under the tracer: the ops executed, loops unrolled and
// branches fixed. Module tensors read on the way become constants. `self` is prepended to
// the inputs when the graph still takes the module.
std::shared_ptr<torch::jit::Graph> trace_graph(const std::shared_ptr<torch::jit::Graph>& graph,
                                               const c10::optional<c10::IValue>& self,
                                               const std::vector<c10::IValue>& inputs);

}  // namespace onnxport::core
