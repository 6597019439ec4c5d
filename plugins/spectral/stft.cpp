// aten::stft and aten::istft. The spectrum is [batch, bins, frames, 2] (real and imaginary parts
// last) whether torch returns it complex or, with return_complex=False, as that real tensor.
// stft: a Conv whose kernels are the windowed DFT basis, at every opset (ONNX Runtime 1.22's
// STFT makes one frame more than ONNX's shape inference and torch for a centred signal); ONNX
// STFT only for a window computed at run time, from opset 17.
// istft: at every opset a ConvTranspose whose kernels are the windowed inverse basis (it
// overlaps and adds the frames), divided by the overlap-added squared window.
#include <cmath>
#include <limits>

#include "onnxport/helpers.h"
#include "spectral.h"

namespace onnxport::spectral {
namespace {

using namespace helpers;

// The window as the transforms want it: n_fft long; a shorter one (or the rectangular default of
// win_length ones) is centred with zeros on both sides, as torch does.
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

// The same window's values, for a basis; it must be known at export time.
std::vector<double> window_values(const TorchNode& n, Value* window, int64_t n_fft, int64_t win_length) {
  std::vector<double> values;
  if (!window) {
    values.assign(static_cast<size_t>(win_length), 1.0);
  } else if (const Tensor* t = window->maybe_tensor()) {
    values = t->as_doubles();
  } else {
    throw ArgumentError(n.kind + ": below opset 17 the window must be known at export time (a buffer or constant), got " +
                        window->describe() + "; export at opset 17 for a computed window");
  }
  if (static_cast<int64_t>(values.size()) > n_fft)
    throw ArgumentError(n.kind + ": the window (" + std::to_string(values.size()) + ") is longer than n_fft (" +
                        std::to_string(n_fft) + ")");
  const size_t left = static_cast<size_t>(n_fft - static_cast<int64_t>(values.size())) / 2;
  std::vector<double> full(static_cast<size_t>(n_fft), 0.0);
  for (size_t i = 0; i < values.size(); ++i) full[left + i] = values[i];
  return full;
}

// [rows, cols] -> [rows, 1, cols]: a basis as Conv/ConvTranspose kernels.
Tensor kernels(DType dtype, int64_t rows, int64_t cols, const std::vector<double>& values) {
  return real_tensor(dtype, {rows, 1, cols}, values);
}

std::vector<double> transposed(const std::vector<double>& m, int64_t rows, int64_t cols) {
  std::vector<double> t(m.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[static_cast<size_t>(c * rows + r)] = m[static_cast<size_t>(r * cols + c)];
  return t;
}

// [batch, 2*bins, frames] with channels (re_0, im_0, re_1, ...) -> [batch, bins, frames, 2], and back.
Value* channels_to_spectrum(Graph& g, Value* y, int64_t bins) {
  return transpose(g, reshape(g, y, std::vector<int64_t>{0, bins, 2, -1}), {0, 1, 3, 2});
}
// The frame count is taken from the spectrum, so a spectrum of another bin count than assumed
// fails to reshape instead of being read wrongly.
Value* spectrum_to_channels(Graph& g, Value* spectrum, int64_t bins) {
  Value* target = concat(g, {size(g, spectrum, 0, true), g.constant_ints({2 * bins}), size(g, spectrum, 2, true)}, 0);
  return reshape(g, transpose(g, spectrum, {0, 1, 3, 2}), target);
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
  Value* x = a.tensor(0);
  if (x->is_complex() || !is_floating(dtype_of(x)))
    throw ArgumentError(n.kind + ": onnxport transforms real floating-point signals, got " + x->describe());
  const bool unbatched = x->rank() == std::optional<int64_t>(1);
  if (unbatched) x = unsqueeze(g, x, {0});
  if (k && a.b(5)) {
    const std::string mode = a.s(6) == "constant" ? "constant" : a.s(6) == "reflect" ? "reflect" : "";
    if (mode.empty()) throw ArgumentError(n.kind + ": pad_mode '" + a.s(6) + "' is not supported (reflect, constant)");
    const int64_t half = n_fft / 2;
    x = g.op("Pad", {x, g.constant_ints({0, half, 0, half})}, {{"mode_s", mode}});
  }
  const double scale = normalized ? 1.0 / std::sqrt(static_cast<double>(n_fft)) : 1.0;
  Value* y;
  if (g.opset() >= 17 && window && !window->maybe_tensor()) {
    y = g.op("STFT",
             {unsqueeze(g, x, {2}), g.constant_int(hop), full_window(g, n, window, n_fft, win_length, x),
              g.constant_int(n_fft)},
             {{"onesided_i", onesided ? 1 : 0}});
    y = transpose(g, y, {0, 2, 1, 3});
    if (normalized) y = g.op("Mul", {y, scalar_like(g, scale, y)});
  } else {
    const int64_t bins = onesided ? n_fft / 2 + 1 : n_fft;
    const auto w = window_values(n, window, n_fft, win_length);
    const auto basis = transposed(dft_basis(n_fft, bins, true, false, scale, &w), n_fft, 2 * bins);
    y = g.op("Conv", {unsqueeze(g, x, {1}), g.constant(kernels(x->dtype(), 2 * bins, n_fft, basis))},
             {{"strides_i", std::vector<int64_t>{hop}}, {"kernel_shape_i", std::vector<int64_t>{n_fft}}});
    y = channels_to_spectrum(g, y, bins);
  }
  return unbatched ? squeeze(g, y, {0}) : y;
}

// istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length, return_complex)
Value* istft(Graph& g, const TorchNode& n, const Args& a) {
  Value* spectrum = a.tensor(0);
  if (!spectrum->is_complex()) throw ArgumentError(n.kind + ": needs a complex spectrum, got " + spectrum->describe());
  const int64_t n_fft = a.i(1);
  const int64_t hop = a.is_none(2) ? n_fft / 4 : a.i(2);
  const int64_t win_length = a.is_none(3) ? n_fft : a.i(3);
  const bool center = a.is_none(5) || a.b(5);
  const bool normalized = !a.is_none(6) && a.b(6);
  // `length` may be computed at run time (PitchShift's resampled length): a 1-d int64 then.
  const auto length = a.is_none(8) ? std::nullopt : a.at(8)->maybe_int();
  Value* length_1d = a.is_none(8) ? nullptr : length ? g.constant_ints({*length}) : reshape(g, cast(g, a.tensor(8), DType::Int64), std::vector<int64_t>{1});
  if (a.size() > 9 && !a.is_none(9) && a.b(9))
    throw ArgumentError(n.kind + ": return_complex=True (a complex signal) is not supported; onnxport inverts "
                        "onesided spectra of real signals");
  const bool unbatched = spectrum->rank() == std::optional<int64_t>(3);
  if (unbatched) spectrum = unsqueeze(g, spectrum, {0});
  // A bin count unknown at export time is taken to be onesided's (a spectrum of another count
  // fails to reshape at run time).
  const auto bins = static_dim(spectrum, 1).value_or(n_fft / 2 + 1);
  const bool onesided = a.is_none(7) ? bins != n_fft : a.b(7);
  if (!onesided || bins != n_fft / 2 + 1)
    throw ArgumentError(n.kind + ": onnxport inverts onesided spectra (n_fft/2+1 = " + std::to_string(n_fft / 2 + 1) +
                        " bins), got " + std::to_string(bins) + " bins" + (onesided ? "" : " with onesided=False"));
  const DType dtype = spectrum->dtype();
  const auto w = window_values(n, a.optional_tensor(4), n_fft, win_length);
  const double scale = (normalized ? std::sqrt(static_cast<double>(n_fft)) : 1.0) / static_cast<double>(n_fft);
  const Attrs conv{{"strides_i", std::vector<int64_t>{hop}}, {"kernel_shape_i", std::vector<int64_t>{n_fft}}};
  Value* y = g.op("ConvTranspose",
                  {spectrum_to_channels(g, spectrum, bins),
                   g.constant(kernels(dtype, 2 * bins, n_fft, inverse_onesided_basis(n_fft, scale, &w)))},
                  conv);
  // The squared window overlap-added over as many frames.
  std::vector<double> squared(w.size());
  for (size_t i = 0; i < w.size(); ++i) squared[i] = w[i] * w[i];
  Value* frames = size(g, spectrum, 2, true);
  Value* ones = g.op("ConstantOfShape", {concat(g, {g.constant_ints({1, 1}), frames}, 0)},
                     {{"value_t", real_tensor(dtype, {1}, {1.0})}});
  Value* envelope = g.op("ConvTranspose", {ones, g.constant(kernels(dtype, 1, n_fft, squared))}, conv);
  const int64_t start = center ? n_fft / 2 : 0;
  Value* end = length_1d ? g.op("Add", {length_1d, g.constant_ints({start})})
                         : g.constant_ints({center ? -(n_fft / 2) : std::numeric_limits<int64_t>::max()});
  auto trimmed = [&](Value* v) { return slice(g, v, g.constant_ints({start}), end, g.constant_ints({2}), nullptr); };
  y = g.op("Div", {trimmed(y), trimmed(envelope)});
  y = squeeze(g, y, {1});
  if (length_1d) {  // a signal shorter than asked for is padded with zeros
    Value* have = size(g, y, 1, true);
    Value* missing = g.op("Sub", {length_1d, have});
    missing = g.op("Where", {g.op("Less", {missing, g.constant_ints({0})}), g.constant_ints({0}), missing});
    y = g.op("Pad", {y, concat(g, {g.constant_ints({0, 0, 0}), missing}, 0)});
  }
  return unbatched ? squeeze(g, y, {0}) : y;
}

}  // namespace

void add_stft(Registrar& r) {
  r.add("aten::stft", 11, stft);          // return_complex=False: the real pair
  r.add_complex("aten::stft", 11, stft);  // return_complex=True
  r.add_complex("aten::istft", 11, istft);
}

}  // namespace onnxport::spectral
