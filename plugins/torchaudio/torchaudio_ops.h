#pragma once
// The torchaudio pack: torchaudio's own TorchScript ops (filters and effects) mapped to ONNX.
#include "onnxport/registrar.h"
#include "onnxport/sdk.h"

namespace onnxport::torchaudio {

void add_lfilter(Registrar& r);    // _lfilter (lfilter and every *_biquad)
void add_overdrive(Registrar& r);  // _overdrive_core_loop (overdrive)

// The dtype of a floating-point input, Float when it is unknown.
inline DType float_dtype(const Value* v) { return v->dtype() == DType::Undefined ? DType::Float : v->dtype(); }

// The recursion y[t] = u[t] - sum_j history[t][..., j] * feedback[..., j], where history[t] holds
// the `order` outputs before y[t], oldest first (history[0] = history0), run by an ONNX Loop over
// time with standard ops only.
//   u:        [T, ...]       the feed-forward part, time first (T may be known only at run time)
//   feedback: broadcasts to [..., order], the feedback coefficients in history's order
//   history0: [..., order]   the outputs before the first step (of known rank)
struct Feedback {
  Value* outputs;  // y: [T, ...]
  Value* history;  // history after the last step: [..., order]
};
Feedback run_feedback(Graph& g, Value* u, Value* feedback, Value* history0, int64_t order);

}  // namespace onnxport::torchaudio
