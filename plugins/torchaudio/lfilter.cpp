// torchaudio::_lfilter(waveform [B, C, T], a_coeffs [C, K], b_coeffs [C, K]) -> [B, C, T]: filter
// c of C filters channel c with the difference equation
//   a0 y[t] = sum_k b_k x[t-k] - sum_{k>=1} a_k y[t-k]        (x, y = 0 before t = 0)
// as torchaudio computes it: the feed-forward sum (its conv1d) over the whole signal, divided by
// a0, then the feedback recursion with a / a0 in an ONNX Loop over time (feedback.cpp). lfilter's
// own clamp and reshapes around the op are ordinary aten ops of the graph.
// The filter order K (and C) must be static: coefficients are constants or parameters in practice.
#include <limits>
#include <string>
#include <vector>

#include "onnxport/helpers.h"
#include "torchaudio_ops.h"

namespace onnxport::torchaudio {
namespace {

using namespace helpers;

struct Filter {
  Value* a;       // [C, K] in the waveform's dtype
  Value* b;       // [C, K]
  int64_t order;  // K
};

Filter filter_args(Graph& g, const TorchNode& n, const Args& args, DType dtype) {
  Value* a = args.tensor(1);
  Value* b = args.tensor(2);
  const auto a_shape = static_shape(a);
  const auto b_shape = static_shape(b);
  if (!a_shape || a_shape->size() != 2 || (*a_shape)[1] < 1)
    fail_node(n, "needs a_coeffs of known shape [n_filters, order + 1], got " + a->describe(),
              "keep the filter coefficients constant (or module parameters) so that their shape is known");
  if (b_shape && *b_shape != *a_shape)
    fail_node(n, "a_coeffs " + a->describe() + " and b_coeffs " + b->describe() + " differ in shape",
              "pad the shorter coefficients with zeros");
  return {cast(g, a, dtype), cast(g, b, dtype), (*a_shape)[1]};
}

// Column k of coefficients [C, K], as [C, 1] (broadcasts over [B, C, T]).
Value* column(Graph& g, Value* coefficients, int64_t k) { return slice(g, coefficients, {1}, {k}, {k + 1}); }

// Zeros [B, C, count] for a waveform [B, C, T]: a constant when B and C are static, else made
// to the run-time sizes.
Value* zeros_before(Graph& g, Value* x, int64_t count) {
  const auto batch = static_dim(x, 0), channels = static_dim(x, 1);
  if (batch && channels) return g.constant(full_tensor(float_dtype(x), {*batch, *channels, count}, 0.0));
  Value* batch_and_channels = slice(g, shape_of(g, x), {0}, {0}, {2});
  Value* shape = concat(g, {batch_and_channels, g.constant_ints({count})}, 0);
  return g.op("Expand", {scalar_like(g, 0.0, x), shape});
}

// sum_k b_k x[t-k], summed from the oldest sample as conv1d over the zero-padded signal does.
Value* feed_forward(Graph& g, Value* x, const Filter& f) {
  const int64_t past = f.order - 1;
  Value* padded = past == 0 ? x : concat(g, {zeros_before(g, x, past), x}, 2);  // [B, C, K-1+T]
  Value* sum = nullptr;
  for (int64_t j = 0; j < f.order; ++j) {
    // Samples x[t-k] for k = past - j: the padded signal without j samples before and past - j after.
    const int64_t end = j == past ? std::numeric_limits<int64_t>::max() : j - past;
    Value* term = g.op("Mul", {slice(g, padded, {2}, {j}, {end}), column(g, f.b, past - j)});
    sum = sum ? g.op("Add", {sum, term}) : term;
  }
  return sum;
}

// a_k / a0 for k = K-1 .. 1 as [C, K-1]: the feedback coefficients in history order (oldest first).
Value* feedback_coefficients(Graph& g, const Filter& f, Value* a0) {
  std::vector<int64_t> oldest_first;
  for (int64_t k = f.order - 1; k >= 1; --k) oldest_first.push_back(k);
  return g.op("Div", {gather(g, f.a, g.constant_ints(oldest_first), 1), a0});
}

Value* lfilter(Graph& g, const TorchNode& n, const Args& args) {
  Value* x = args.tensor(0);
  if (x->rank() && *x->rank() != 3) fail_node(n, "needs a waveform [batch, n_filters, time], got " + x->describe());
  const Filter f = filter_args(g, n, args, float_dtype(x));
  Value* a0 = column(g, f.a, 0);
  Value* forward = g.op("Div", {feed_forward(g, x, f), a0});
  if (f.order == 1) return forward;
  const int64_t past = f.order - 1;
  const Feedback y = run_feedback(g, transpose(g, forward, {2, 0, 1}), feedback_coefficients(g, f, a0),
                                  zeros_before(g, x, past), past);
  return transpose(g, y.outputs, {1, 2, 0});
}

}  // namespace

void add_lfilter(Registrar& r) { r.add("torchaudio::_lfilter", 9, lfilter); }

}  // namespace onnxport::torchaudio
