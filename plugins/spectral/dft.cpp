// The one-dimensional transforms every spectral mapping is built from, and their constant bases.
#include <cmath>
#include <cstring>

#include "onnxport/helpers.h"
#include "spectral.h"

namespace onnxport::spectral {

using namespace helpers;

namespace {

constexpr double kPi = 3.14159265358979323846;

// cos and sin of 2*pi*j*k/n, the product reduced modulo n first so large indices keep their precision.
std::pair<double, double> twiddle(int64_t j, int64_t k, int64_t n) {
  const double phi = 2.0 * kPi * static_cast<double>((j * k) % n) / static_cast<double>(n);
  return {std::cos(phi), std::sin(phi)};
}

// [..., a, b] -> [..., a*b] and back, the leading dims copied (Reshape's 0).
Value* merge_last_two(Graph& g, Value* v, int64_t rank, int64_t merged) {
  std::vector<int64_t> shape(static_cast<size_t>(rank - 2), 0);
  shape.push_back(merged);
  return reshape(g, v, shape);
}
Value* split_last(Graph& g, Value* v, int64_t rank, int64_t a, int64_t b) {
  std::vector<int64_t> shape(static_cast<size_t>(rank - 1), 0);
  shape.push_back(a);
  shape.push_back(b);
  return reshape(g, v, shape);
}

Value* matmul_basis(Graph& g, Value* rows, DType dtype, int64_t samples, int64_t columns,
                    const std::vector<double>& basis) {
  return g.op("MatMul", {rows, g.constant(real_tensor(dtype, {samples, columns}, basis))});
}

}  // namespace

DType real_dtype(DType t) {
  if (t == DType::Complex64) return DType::Float;
  if (t == DType::Complex128) return DType::Double;
  return t;
}

Tensor real_tensor(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  if (dtype == DType::Double) {
    std::vector<uint8_t> bytes(values.size() * sizeof(double));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return Tensor(dtype, std::move(shape), std::move(bytes));
  }
  std::vector<float> narrow(values.begin(), values.end());
  std::vector<uint8_t> bytes(narrow.size() * sizeof(float));
  std::memcpy(bytes.data(), narrow.data(), bytes.size());
  return Tensor(DType::Float, std::move(shape), std::move(bytes));
}

std::vector<double> dft_basis(int64_t n, int64_t bins, bool real_input, bool inverse, double scale,
                              const std::vector<double>* window) {
  // x_j (a + ib) times e^(sign*i*phi) = (a cos - b sign sin) + i (b cos + a sign sin)
  const double sign = inverse ? 1.0 : -1.0;
  const int64_t rows = real_input ? n : 2 * n;
  std::vector<double> w(static_cast<size_t>(rows * 2 * bins));
  auto at = [&](int64_t row, int64_t col) -> double& { return w[static_cast<size_t>(row * 2 * bins + col)]; };
  for (int64_t j = 0; j < n; ++j) {
    const double f = scale * (window ? (*window)[static_cast<size_t>(j)] : 1.0);
    for (int64_t k = 0; k < bins; ++k) {
      const auto [c, s] = twiddle(j, k, n);
      const int64_t a_row = real_input ? j : 2 * j;
      at(a_row, 2 * k) = f * c;
      at(a_row, 2 * k + 1) = f * sign * s;
      if (real_input) continue;
      at(2 * j + 1, 2 * k) = -f * sign * s;
      at(2 * j + 1, 2 * k + 1) = f * c;
    }
  }
  return w;
}

std::vector<double> inverse_onesided_basis(int64_t n, double scale, const std::vector<double>* window) {
  // x_t = scale * sum_k w_k (Re X_k cos - Im X_k sin), w_k = 2 for the bins that stand for a
  // conjugate pair, 1 for bin 0 and (n even) bin n/2.
  const int64_t bins = n / 2 + 1;
  std::vector<double> w(static_cast<size_t>(2 * bins * n));
  for (int64_t k = 0; k < bins; ++k) {
    const double weight = (k == 0 || 2 * k == n) ? 1.0 : 2.0;
    for (int64_t t = 0; t < n; ++t) {
      const auto [c, s] = twiddle(k, t, n);
      const double f = scale * weight * (window ? (*window)[static_cast<size_t>(t)] : 1.0);
      w[static_cast<size_t>(2 * k * n + t)] = f * c;
      w[static_cast<size_t>((2 * k + 1) * n + t)] = -f * s;
    }
  }
  return w;
}

Value* fit_signal_length(Graph& g, Value* signal, int64_t axis, int64_t length) {
  const auto current = static_dim(signal, axis);
  if (current && *current == length) return signal;
  if (current && *current > length) return slice(g, signal, {axis}, {0}, {length});
  // Shorter, or not known: zero-pad, then (not known) cut. Padding by `length` suffices for any
  // run-time size, so the result has exactly `length` samples, as torch's n gives, also when the
  // run-time signal is shorter than n (a Slice alone would leave it short).
  const int64_t rank = *signal->rank();
  std::vector<int64_t> pads(static_cast<size_t>(2 * rank), 0);
  pads[static_cast<size_t>(rank + axis)] = current ? length - *current : length;
  Value* padded = pad_constant(g, signal, pads);
  return current ? padded : slice(g, padded, {axis}, {0}, {length});
}

Value* dft_last_axis(Graph& g, const TorchNode& node, Value* signal, int64_t length, const Dft& dft) {
  const int64_t rank = rank_of(signal, node.kind + " signal");
  const int64_t axis = dft.real_input ? rank - 1 : rank - 2;
  if (axis < 0) throw ArgumentError(node.kind + ": needs at least one signal dimension, got " + signal->describe());
  if (!is_floating(signal->dtype()))
    throw ArgumentError(node.kind + ": needs a floating-point signal, got " + signal->describe());
  const DType dtype = signal->dtype();
  const int64_t bins = dft.onesided ? length / 2 + 1 : length;
  signal = fit_signal_length(g, signal, axis, length);
  if (g.opset() >= 17) {
    Value* x = dft.real_input ? unsqueeze(g, signal, {rank}) : signal;
    const bool batchless = axis == 0;  // DFT's dim 0 is a batch dim
    if (batchless) x = unsqueeze(g, x, {0});
    const int64_t dft_axis = axis + (batchless ? 1 : 0);
    Attrs attrs{{"inverse_i", dft.inverse ? 1 : 0}, {"onesided_i", dft.onesided ? 1 : 0}};
    std::vector<Value*> inputs{x};
    if (g.opset() >= 20)  // DFT-20 takes the axis as its third input (the second, dft_length, left out)
      inputs = {x, nullptr, g.constant(Tensor::scalar_int64(dft_axis))};
    else
      attrs.emplace_back("axis_i", dft_axis);
    Value* y = g.op("DFT", inputs, attrs);
    if (batchless) y = squeeze(g, y, {0});
    // ONNX's inverse DFT divides by n itself.
    const double scale = dft.inverse ? dft.scale * static_cast<double>(length) : dft.scale;
    return scale == 1.0 ? y : g.op("Mul", {y, scalar_like(g, scale, y)});
  }
  // fit_signal_length left exactly `length` samples, also when the input's length is not known.
  const auto basis = dft_basis(length, bins, dft.real_input, dft.inverse, dft.scale);
  const int64_t samples = dft.real_input ? length : 2 * length;
  Value* rows = dft.real_input ? signal : merge_last_two(g, signal, rank, samples);
  const int64_t rows_rank = dft.real_input ? rank : rank - 1;
  return split_last(g, matmul_basis(g, rows, dtype, samples, 2 * bins, basis), rows_rank, bins, 2);
}

Value* inverse_onesided_dft(Graph& g, const TorchNode& node, Value* spectrum, int64_t length, double scale) {
  const int64_t rank = rank_of(spectrum, node.kind + " spectrum");
  if (rank < 2) throw ArgumentError(node.kind + ": needs a complex spectrum, got " + spectrum->describe());
  const int64_t bins = length / 2 + 1;
  spectrum = fit_signal_length(g, spectrum, rank - 2, bins);
  Value* rows = merge_last_two(g, spectrum, rank, 2 * bins);
  return matmul_basis(g, rows, spectrum->dtype(), 2 * bins, length, inverse_onesided_basis(length, scale));
}

double norm_scale(const TorchNode& n, const Args& a, size_t norm_index, int64_t length, bool inverse) {
  const std::string norm = norm_index < a.size() && !a.is_none(norm_index) ? a.s(norm_index) : "backward";
  const double count = static_cast<double>(length);
  if (norm == "backward") return inverse ? 1.0 / count : 1.0;
  if (norm == "forward") return inverse ? 1.0 : 1.0 / count;
  if (norm == "ortho") return 1.0 / std::sqrt(count);
  throw ArgumentError(n.kind + ": norm '" + norm + "' is not one of backward, forward, ortho");
}

}  // namespace onnxport::spectral
