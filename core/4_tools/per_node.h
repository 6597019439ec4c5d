#pragma once
// Per-node verification: libtorch's value of every TorchScript value that an export turned into
// an ONNX value, and each compared with what onnxport's evaluator computes for that ONNX value,
// in the order the graph runs, so that the first node whose value diverges can be named.
#include <torch/script.h>

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "2_eval/evaluator.h"
#include "1_base/onnx_ir.h"
#include "onnxport/verify.h"
#include "3_export/2_prepare/torch_graph.h"

namespace onnxport::core {

// What libtorch computed for one ONNX value, and the TorchScript node and op pack that made it.
struct ReferenceValue {
  at::Tensor value;
  NodeOrigin origin;
  std::string op_type;  // of the ONNX node the conversion made for it
};

// ONNX value name -> libtorch's value of it, computed on the export's example inputs.
using TorchReference = std::unordered_map<std::string, ReferenceValue>;

// Runs the prepared graph once on its example inputs, keeping a copy of every value that
// `value_names` maps to an ONNX value; origins come from the ONNX node that outputs it.
TorchReference record_torch_reference(const PreparedGraph& prepared,
                                      const std::vector<std::pair<const torch::jit::Value*, std::string>>& value_names,
                                      const OnnxModel& model);

// Runs the evaluator on `inputs`, comparing each top-level node output the reference has a
// value for; the checks come in the order the nodes ran. The op pack is named only where the
// file's node has the op the reference's conversion made (else another pack made the file).
// `graph` is the evaluator's model's graph (to trace a diverging value back to its sources).
std::vector<NodeCheck> compare_per_node(const eval::ModelEvaluator& evaluator, const onnx::GraphProto& graph,
                                        const std::vector<eval::EvalValue>& inputs, const TorchReference& reference,
                                        double rtol, double atol);

}  // namespace onnxport::core
