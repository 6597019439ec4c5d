// torchaudio::_overdrive_core_loop(waveform [N, T], temp [N, T], last_in [N], last_out [N],
// output_waveform [N, T]) -> (): overdrive's recursion, writing last_in, last_out and
// output_waveform in place. Per channel, for t = 0 .. T-1:
//   last_out = temp[t] - last_in + 0.995 * last_out;  last_in = temp[t];
//   output_waveform[t] = 0.5 * waveform[t] + 0.75 * last_out
// last_in before step t is temp[t-1] (the given last_in at t = 0), so the differences are computed
// for all steps at once and only last_out runs in an ONNX Loop over time (feedback.cpp).
#include <algorithm>
#include <limits>
#include <map>
#include <vector>

#include "onnxport/helpers.h"
#include "torchaudio_ops.h"

namespace onnxport::torchaudio {
namespace {

using namespace helpers;

enum Argument : size_t { kWaveform, kTemp, kLastIn, kLastOut, kOutput };

struct Overdriven {
  Value* last_in;   // [N]
  Value* last_out;  // [N]
  Value* output;    // [N, T]
};

Overdriven overdrive(Graph& g, Value* waveform, Value* temp, Value* last_in, Value* last_out) {
  const int64_t all = std::numeric_limits<int64_t>::max();
  Value* inputs = concat(g, {unsqueeze(g, last_in, {1}), temp}, 1);  // last_in, temp[0] .. temp[T-1]
  Value* change = g.op("Sub", {temp, slice(g, inputs, {1}, {0}, {-1})});
  Value* decay = g.constant(Tensor::scalar_of(float_dtype(temp), -0.995));  // y[t] = change[t] + 0.995 y[t-1]
  const Feedback y = run_feedback(g, transpose(g, change, {1, 0}), decay, unsqueeze(g, last_out, {1}), 1);
  Value* wet = g.op("Mul", {transpose(g, y.outputs, {1, 0}), scalar_like(g, 0.75, temp)});
  Value* dry = g.op("Mul", {waveform, scalar_like(g, 0.5, waveform)});
  return {squeeze(g, slice(g, inputs, {1}, {-1}, {all}), {1}), squeeze(g, y.history, {1}), g.op("Add", {dry, wet})};
}

std::vector<Value*> overdrive_core_loop(Graph& g, const TorchNode& n, const Args& a) {
  if (std::find(n.updated_inputs.begin(), n.updated_inputs.end(), kOutput) == n.updated_inputs.end())
    fail_node(n,
              "the op writes its result into its last argument (output_waveform), but torchaudio registers it "
              "without alias annotations (Tensor(a!)), so the converter does not know that the argument changes "
              "and would export the zeros it was made with",
              "onnxport's converter must treat arguments 2-4 of torchaudio::_overdrive_core_loop as written in "
              "place (TorchNode::updated_inputs)");
  Value* waveform = a.tensor(kWaveform);
  Value* temp = a.tensor(kTemp);
  const Overdriven o = overdrive(g, waveform, temp, a.tensor(kLastIn), a.tensor(kLastOut));
  const std::map<size_t, Value*> written{
      {kWaveform, waveform}, {kTemp, temp}, {kLastIn, o.last_in}, {kLastOut, o.last_out}, {kOutput, o.output}};
  std::vector<Value*> updated;  // the op has no outputs: only the new values of the inputs it writes
  for (size_t i : n.updated_inputs) updated.push_back(written.at(i));
  return updated;
}

}  // namespace

void add_overdrive(Registrar& r) { r.add("torchaudio::_overdrive_core_loop", 9, overdrive_core_loop); }

}  // namespace onnxport::torchaudio
