// The feedback recursion of IIR filters as one ONNX Loop: per iteration t the body reads u[t],
// subtracts the weighted history and shifts y[t] into the history; y[t] is the Loop's scan output.
#include <limits>
#include <vector>

#include "onnxport/helpers.h"
#include "torchaudio_ops.h"

namespace onnxport::torchaudio {

using namespace helpers;

namespace {

// history [..., order] without its oldest entry and with `y` [...] appended.
Value* shift_in(Graph& g, Value* history, Value* y, int64_t last_axis, int64_t order) {
  Value* newest = unsqueeze(g, y, {last_axis});
  if (order == 1) return newest;
  Value* kept = slice(g, history, {last_axis}, {1}, {std::numeric_limits<int64_t>::max()});
  return concat(g, {kept, newest}, last_axis);
}

// history0's type with the order as its last dim (ONNX inference may not know it).
TensorType history_type(const Value* history0, int64_t last_axis, int64_t order) {
  std::vector<Dim> dims;
  for (int64_t axis = 0; axis < last_axis; ++axis) {
    const auto size = static_dim(history0, axis);
    dims.push_back(size ? Dim::fixed(*size) : Dim::unknown());
  }
  dims.push_back(Dim::fixed(order));
  return TensorType{history0->dtype(), dims};
}

}  // namespace

Feedback run_feedback(Graph& g, Value* u, Value* feedback, Value* history0, int64_t order) {
  const int64_t last_axis = rank_of(history0, "the feedback history") - 1;
  if (last_axis < 0 || order < 1)
    throw ArgumentError("the feedback history must be [..., order] with order >= 1, got " + history0->describe() +
                        " and order " + std::to_string(order));

  Subgraph body;
  body.inputs = {Subgraph::Input{TensorType{DType::Int64, std::vector<Dim>{}}},
                 Subgraph::Input{TensorType{DType::Bool, std::vector<Dim>{}}},
                 Subgraph::Input{history_type(history0, last_axis, order)}};
  // Body inputs: iteration, condition, history. Outputs: the condition, the new history, y[t].
  body.build = [u, feedback, last_axis, order](Graph& b, const std::vector<Value*>& in) {
    Value* history = in[2];
    Value* weighted = reduce(b, "ReduceSum", b.op("Mul", {history, feedback}), {last_axis}, false);
    Value* y = b.op("Sub", {gather(b, u, in[0], 0), weighted});
    return std::vector<Value*>{in[1], shift_in(b, history, y, last_axis, order), y};
  };
  Value* steps = size(g, u, 0);
  Value* always = g.constant(Tensor::scalar_of(DType::Bool, 1));
  const std::vector<Value*> out = g.op("Loop", {steps, always, history0}, {{"body_g", body}}, 2);
  return {out[1], out[0]};
}

}  // namespace onnxport::torchaudio
