// aten::stft as ONNX STFT (opset 17). PyTorch's real-valued result (return_complex=False) is
// [batch, bins, frames, 2], ONNX's [batch, frames, bins, 2]. A complex result has no ONNX type.
#include <cmath>

#include "nn.h"
#include "onnxport/helpers.h"

namespace onnxport::nn {
namespace {

using namespace helpers;

// The window as STFT wants it: n_fft long; a shorter one (or the rectangular default of
// win_length ones) is centred with zeros on both sides, as torch.stft does.
Value* full_window(Graph& g, const TorchNode& n, Value* window, int64_t n_fft, int64_t win_length, const Value* like) {
  if (!window) window = g.op("Expand", {scalar_like(g, 1.0, like), g.constant_ints({win_length})});
  auto length = static_dim(window, 0);
  if (!length) throw ArgumentError(n.kind + ": the window needs a static length, got " + window->describe());
  if (*length > n_fft)
    throw ArgumentError(n.kind + ": the window (" + std::to_string(*length) + ") is longer than n_fft (" +
                        std::to_string(n_fft) + ")");
  const int64_t left = (n_fft - *length) / 2;
  return left == 0 && *length == n_fft ? window : pad_constant(g, window, {left, n_fft - *length - left});
}

// stft(self, n_fft, hop_length, win_length, window, [center, pad_mode,] normalized, onesided, return_complex)
Value* stft(Graph& g, const TorchNode& n, const Args& a) {
  const size_t k = n.input_index("center") ? 2 : 0;  // the .center overload has two more arguments
  const int64_t n_fft = a.i(1);
  const int64_t hop = a.is_none(2) ? n_fft / 4 : a.i(2);
  const int64_t win_length = a.is_none(3) ? n_fft : a.i(3);
  Value* window = a.optional_tensor(4);
  const bool normalized = !a.is_none(5 + k) && a.b(5 + k);
  const bool onesided = a.is_none(6 + k) || a.b(6 + k);
  if (a.size() > 7 + k && !a.is_none(7 + k) && a.b(7 + k))
    throw ArgumentError(n.kind +
                        ": return_complex=True makes a complex tensor, which ONNX cannot carry; use "
                        "return_complex=False (real and imaginary parts in a last dim of 2)");
  Value* x = a.tensor(0);
  if (!is_floating(dtype_of(x))) throw ArgumentError(n.kind + ": needs a real floating signal, got " + x->describe());
  const bool unbatched = x->rank() == std::optional<int64_t>(1);
  if (unbatched) x = unsqueeze(g, x, {0});
  if (k && a.b(5)) {
    const std::string mode = a.s(6) == "constant" ? "constant" : a.s(6) == "reflect" ? "reflect" : "";
    if (mode.empty()) throw ArgumentError(n.kind + ": pad_mode '" + a.s(6) + "' is not supported (reflect, constant)");
    const int64_t half = n_fft / 2;
    x = g.op("Pad", {x, g.constant_ints({0, half, 0, half})}, {{"mode_s", mode}});
  }
  Value* y = g.op("STFT",
                  {unsqueeze(g, x, {2}), g.constant_int(hop), full_window(g, n, window, n_fft, win_length, x),
                   g.constant_int(n_fft)},
                  {{"onesided_i", onesided ? 1 : 0}});
  y = transpose(g, y, {0, 2, 1, 3});
  if (normalized) y = g.op("Mul", {y, scalar_like(g, 1.0 / std::sqrt(static_cast<double>(n_fft)), y)});
  return unbatched ? squeeze(g, y, {0}) : y;
}

}  // namespace

void add_stft(Registrar& r) { r.add("aten::stft", 17, stft); }

}  // namespace onnxport::nn
