#pragma once
// The spectral pack: complex values (carried as real pairs, Value::is_complex) and the
// transforms that make them — torch.fft, stft, istft — at every opset: ONNX's DFT/STFT from
// opset 17, a MatMul or Conv with a constant basis below it (static lengths).
#include <string>
#include <vector>

#include "onnxport/registrar.h"

namespace onnxport::spectral {

void add_complex_arithmetic(Registrar& r);  // view_as_real/complex, real, imag, abs, angle, polar, complex,
                                            // conj, add/sub/mul/div/pow/exp/neg, matmul on complex values
void add_complex_creation(Registrar& r);    // full/zeros/ones(_like) of a complex dtype
void add_complex_layout(Registrar& r);      // constant_pad_nd, pad on complex values
void add_fft(Registrar& r);                 // torch.fft: fft, ifft, rfft, irfft, *2, *n, fftshift
void add_stft(Registrar& r);                // stft (real pairs and complex), istft

// Shared by the files above (dft.cpp).

// The real dtype of a complex node output (Complex64 -> Float, Complex128 -> Double; real ones as they are).
DType real_dtype(DType t);

// A constant of `dtype` (Float or Double) holding `values` in row-major order.
Tensor real_tensor(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values);

// One-dimensional DFT of length n along the last signal axis: `signal` is a complex pair
// [..., L, 2] or, with real_input, a real tensor [..., L]; L is cut or zero-padded to n first
// (torch.fft's `n`; L may be known only at run time). Returns the pair [..., bins, 2], bins = n,
// or n/2+1 when `onesided` (real input only). The result is multiplied by `scale` (the norm).
// Opset 17: ONNX DFT; below: a MatMul with a constant basis of n samples.
struct Dft {
  bool real_input = false;
  bool inverse = false;
  bool onesided = false;
  double scale = 1.0;
};
Value* dft_last_axis(Graph& g, const TorchNode& n, Value* signal, int64_t length, const Dft& dft);

// The inverse of a onesided DFT (irfft): `spectrum` [..., L, 2] holds bins 0..n/2 (L is cut or
// zero-padded to n/2+1); the result is real [..., n], times `scale`. Imaginary parts of bins 0
// and n/2 are ignored, as torch does. A MatMul with a constant basis at every opset.
Value* inverse_onesided_dft(Graph& g, const TorchNode& n, Value* spectrum, int64_t length, double scale);

// The basis of a DFT over n samples giving `bins` bins, as a [samples, 2*bins] matrix: samples
// are n (real input) or 2n (complex input, real and imaginary parts interleaved); the output
// bins interleave real and imaginary parts too. Each sample is multiplied by window[j] when a
// window is given.
std::vector<double> dft_basis(int64_t n, int64_t bins, bool real_input, bool inverse, double scale,
                              const std::vector<double>* window = nullptr);
// The [2*bins, n] basis of inverse_onesided_dft (bins = n/2+1), each output sample t times window[t].
std::vector<double> inverse_onesided_basis(int64_t n, double scale, const std::vector<double>* window = nullptr);

// The signal's last (real) or last signal (complex pair) axis cut or zero-padded to `length`.
Value* fit_signal_length(Graph& g, Value* signal, int64_t axis, int64_t length);

// torch.fft's norm argument ("backward", "forward", "ortho"; None = "backward") as the scale of a
// transform of n samples.
double norm_scale(const TorchNode& n, const Args& a, size_t norm_index, int64_t length, bool inverse);

}  // namespace onnxport::spectral
