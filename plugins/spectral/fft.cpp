// torch.fft: the one-dimensional transforms (fft, ifft, rfft, irfft, hfft, ihfft), their 2-D and
// n-D forms as a sequence of one-dimensional ones, and fftshift/ifftshift. Every transform moves
// its dim to the signal position (a Transpose), runs dft_last_axis or inverse_onesided_dft
// (dft.cpp) there, and the dims' order is restored at the end. Complex values are pairs [..., 2].
#include <algorithm>
#include <optional>
#include <utility>

#include "onnxport/helpers.h"
#include "spectral.h"

namespace onnxport::spectral {
namespace {

using namespace helpers;

// A tensor on its way through a transform: real, or a complex pair (values built here carry no
// is_complex flag, so the flag travels beside them).
struct Signal {
  Value* v = nullptr;
  bool complex = false;

  int64_t rank(const TorchNode& n) const { return rank_of(v, n.kind + " input") - (complex ? 1 : 0); }
};

Signal input_signal(Graph& g, const Args& a) {
  Value* x = a.tensor(0);
  if (x->is_complex()) return {x, true};
  return {to_float(g, x), false};  // torch computes integer signals as float
}

// The dims a transform runs over, normalized against the signal's rank (not the pair's).
int64_t signal_dim(const TorchNode& n, const Signal& s, int64_t dim) { return normalize_dim(dim, s.rank(n)); }

int64_t static_size(const TorchNode& n, const Signal& s, int64_t dim) {
  const auto size = static_dim(s.v, dim);
  if (!size)
    throw ArgumentError(n.kind + ": needs the size of dim " + std::to_string(dim) +
                        " known at export time (give the transform's length as n/s, or a static input), got " +
                        s.v->describe());
  return *size;
}

// A real tensor as a complex pair with zero imaginary parts (a pair stays as it is).
Signal as_pair(Graph& g, const Signal& s) {
  if (s.complex) return s;
  const int64_t rank = rank_of(s.v, "complex pair");
  std::vector<int64_t> pads(static_cast<size_t>(2 * (rank + 1)), 0);
  pads.back() = 1;  // [..., 1] -> [..., 2], the new column 0
  return {pad_constant(g, unsqueeze(g, s.v, {rank}), pads), true};
}

// The complex conjugate of a pair: its imaginary parts negated.
Value* conj(Graph& g, Value* pair) {
  return g.op("Mul", {pair, g.constant(real_tensor(pair->dtype(), {2}, {1.0, -1.0}))});
}

enum class Kind {
  Forward,          // fft: complex (or real) -> complex, e^-i
  Inverse,          // ifft: complex (or real) -> complex, e^+i
  RealForward,      // rfft: real -> onesided complex
  RealInverse,      // ihfft: real -> onesided complex, e^+i (the conjugate of rfft)
  OnesidedInverse,  // irfft: onesided complex -> real, e^+i
  OnesidedForward,  // hfft: onesided complex -> real, e^-i (irfft of the conjugate)
};

bool inverse_norm(Kind k) { return k == Kind::Inverse || k == Kind::RealInverse || k == Kind::OnesidedInverse; }
bool from_onesided(Kind k) { return k == Kind::OnesidedInverse || k == Kind::OnesidedForward; }
bool to_onesided(Kind k) { return k == Kind::RealForward || k == Kind::RealInverse; }

// One transform of `kind` of the signal's last signal axis with `length` samples (n) and `scale`.
Signal transform_last(Graph& g, const TorchNode& n, const Signal& s, int64_t length, Kind kind, double scale) {
  if (from_onesided(kind)) {
    Value* x = as_pair(g, s).v;
    if (kind == Kind::OnesidedForward) x = conj(g, x);
    return {inverse_onesided_dft(g, n, x, length, scale), false};
  }
  if (to_onesided(kind) && s.complex) throw ArgumentError(n.kind + ": expects a real input tensor, got a complex one");
  Dft dft;
  dft.real_input = !s.complex;
  dft.inverse = kind == Kind::Inverse;
  dft.onesided = to_onesided(kind);
  dft.scale = scale;
  Value* y = dft_last_axis(g, n, s.v, length, dft);
  return {kind == Kind::RealInverse ? conj(g, y) : y, true};
}

// A sequence of one-dimensional transforms of one signal, each of one dim. A transform needs its
// dim at the signal position, the last signal axis: one Transpose moves it there from wherever
// the previous transforms left it, and one Transpose restores the dims' order at the end. The
// signal position is the same index whether the value is real [..., L] or a pair [..., L, 2], so
// transforms that change between the two keep the order.
class Transforms {
 public:
  Transforms(Graph& g, const TorchNode& n, Signal input)
      : g_(g), n_(n), input_(input), s_(input), rank_(input.rank(n)), order_(static_cast<size_t>(rank_)) {
    for (int64_t d = 0; d < rank_; ++d) order_[static_cast<size_t>(d)] = d;
  }

  const Signal& signal() const { return s_; }
  void set(Signal s) { s_ = s; }

  // The length torch gives a transform of `dim` without n/s: the input's size, or 2*(size-1)
  // for a onesided spectrum.
  int64_t default_length(int64_t dim, Kind kind) const {
    const int64_t size = static_size(n_, input_, dim);
    return from_onesided(kind) ? 2 * (size - 1) : size;
  }

  void run(int64_t dim, int64_t length, Kind kind, double scale) {
    if (length < 1)
      throw ArgumentError(n_.kind + ": the transform of dim " + std::to_string(dim) + " would have " +
                          std::to_string(length) + " points; it needs at least 1");
    const size_t at = static_cast<size_t>(std::find(order_.begin(), order_.end(), dim) - order_.begin());
    const size_t last = static_cast<size_t>(rank_ - 1);
    if (at != last) {
      std::swap(order_[at], order_[last]);
      std::vector<int64_t> perm = identity(s_);
      std::swap(perm[at], perm[last]);
      s_.v = transpose(g_, s_.v, perm);
    }
    s_ = transform_last(g_, n_, s_, length, kind, scale);
  }

  // The result with the dims in their original order.
  Value* result() {
    std::vector<int64_t> perm = identity(s_);
    for (int64_t d = 0; d < rank_; ++d)
      perm[static_cast<size_t>(d)] = std::find(order_.begin(), order_.end(), d) - order_.begin();
    return perm == identity(s_) ? s_.v : transpose(g_, s_.v, perm);
  }

 private:
  std::vector<int64_t> identity(const Signal& s) const {
    std::vector<int64_t> perm(static_cast<size_t>(rank_ + (s.complex ? 1 : 0)));
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    return perm;
  }

  Graph& g_;
  const TorchNode& n_;
  const Signal input_;
  Signal s_;
  const int64_t rank_;
  std::vector<int64_t> order_;  // order_[position]: the signal dim now at that position
};

// fft, ifft, rfft, irfft, hfft, ihfft: (Tensor self, int? n=None, int dim=-1, str? norm=None).
Symbolic one_dim(Kind kind) {
  return [kind](Graph& g, const TorchNode& n, const Args& a) -> std::vector<Value*> {
    Transforms t(g, n, input_signal(g, a));
    const int64_t dim = signal_dim(n, t.signal(), a.size() > 2 && !a.is_none(2) ? a.i(2) : -1);
    const int64_t length = a.is_none(1) ? t.default_length(dim, kind) : a.i(1);
    if (length < 1)
      throw ArgumentError(n.kind + ": n = " + std::to_string(length) + " is not a valid number of points (>= 1)");
    t.run(dim, length, kind, norm_scale(n, a, 3, length, inverse_norm(kind)));
    return {t.result()};
  };
}

// The dims and lengths of a 2-D or n-D transform: torch.fft.fftn's s and dim rules. s[i] = -1
// keeps that dim's size; without dim, the last len(s) dims (or all dims without s).
struct Plan {
  std::vector<int64_t> dims;
  std::vector<std::optional<int64_t>> lengths;  // nullopt: the default for that dim
};

Plan plan_of(const TorchNode& n, const Args& a, const Signal& s) {
  const int64_t rank = s.rank(n);
  const auto sizes = a.opt_is(1);
  const auto dims = a.size() > 2 ? a.opt_is(2) : std::nullopt;
  Plan p;
  if (dims) {
    p.dims = normalize_dims(*dims, rank);
  } else {
    const int64_t count = sizes ? static_cast<int64_t>(sizes->size()) : rank;
    if (count > rank)
      throw ArgumentError(n.kind + ": s has " + std::to_string(count) + " sizes for a signal of rank " +
                          std::to_string(rank));
    for (int64_t d = rank - count; d < rank; ++d) p.dims.push_back(d);
  }
  if (p.dims.empty()) throw ArgumentError(n.kind + ": needs at least one dim to transform");
  for (size_t i = 0; i < p.dims.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (p.dims[i] == p.dims[j])
        throw ArgumentError(n.kind + ": dim " + std::to_string(p.dims[i]) + " is given twice");
  if (sizes && sizes->size() != p.dims.size())
    throw ArgumentError(n.kind + ": s has " + std::to_string(sizes->size()) + " sizes for " +
                        std::to_string(p.dims.size()) + " dims");
  for (size_t i = 0; i < p.dims.size(); ++i) {
    std::optional<int64_t> length;
    if (sizes && (*sizes)[i] != -1) length = (*sizes)[i];
    if (length && *length < 1)
      throw ArgumentError(n.kind + ": s[" + std::to_string(i) + "] = " + std::to_string(*length) +
                          " is not a valid number of points (>= 1)");
    p.lengths.push_back(length);
  }
  return p;
}

// fft2/fftn, ifft2/ifftn, rfft2/rfftn, irfft2/irfftn, hfft2/hfftn, ihfft2/ihfftn:
// (Tensor self, int[1]? s=None, int[1]? dim, str? norm=None). `kind` is the transform of the
// last dim; the other dims take the full transform in the same direction (forward for rfft and
// ihfft's conjugate, inverse for irfft and hfft's conjugate).
Symbolic many_dims(Kind kind) {
  return [kind](Graph& g, const TorchNode& n, const Args& a) -> std::vector<Value*> {
    Transforms t(g, n, input_signal(g, a));
    const Plan p = plan_of(n, a, t.signal());
    const size_t last = p.dims.size() - 1;
    // Every transform in the norm's direction: the product of the 1-D scales is the n-D one.
    auto run = [&](size_t i, Kind k) {
      const int64_t length = p.lengths[i] ? *p.lengths[i] : t.default_length(p.dims[i], k);
      t.run(p.dims[i], length, k, norm_scale(n, a, 3, length, inverse_norm(kind)));
    };
    switch (kind) {
      case Kind::Forward:
      case Kind::Inverse:
        // Any order gives the same result; the last dim first, as it is usually in place already.
        for (size_t i = last + 1; i-- > 0;) run(i, kind);
        return {t.result()};
      case Kind::RealForward:
      case Kind::RealInverse: {
        // The onesided transform of the last dim first, then the others on the complex result,
        // forward (ihfftn is the conjugate of rfftn: the conjugate is taken once, at the end).
        if (t.signal().complex) throw ArgumentError(n.kind + ": expects a real input tensor, got a complex one");
        run(last, Kind::RealForward);
        for (size_t i = 0; i < last; ++i) run(i, Kind::Forward);
        Value* y = t.result();
        return {kind == Kind::RealInverse ? conj(g, y) : y};
      }
      case Kind::OnesidedInverse:
      case Kind::OnesidedForward: {
        // The other dims first, inverse, on the (conjugated, for hfftn) spectrum, then the
        // onesided inverse of the last dim: a real result.
        Signal s = as_pair(g, t.signal());
        if (kind == Kind::OnesidedForward) s.v = conj(g, s.v);
        t.set(s);
        for (size_t i = 0; i < last; ++i) run(i, Kind::Inverse);
        run(last, Kind::OnesidedInverse);
        return {t.result()};
      }
    }
    return {};
  };
}

// fftshift / ifftshift (Tensor self, int[1]? dim=None): a roll of each dim by size//2 (fftshift)
// or -(size//2) (ifftshift), as the two pieces of the dim concatenated in swapped order. Without
// dim, every signal dim (not the pair's last axis).
Symbolic shift(bool inverse) {
  return [inverse](Graph& g, const TorchNode& n, const Args& a) -> std::vector<Value*> {
    Value* x = a.tensor(0);
    const Signal s{x, x->is_complex()};
    const int64_t rank = s.rank(n);
    std::vector<int64_t> dims;
    if (auto given = a.size() > 1 ? a.opt_is(1) : std::nullopt) {
      dims = normalize_dims(*given, rank);
    } else {
      for (int64_t d = 0; d < rank; ++d) dims.push_back(d);
    }
    for (int64_t dim : dims) {
      // The roll starts the result at index size - size//2 (fftshift) or size//2 (ifftshift).
      if (const auto known = static_dim(x, dim)) {
        const int64_t start = inverse ? *known / 2 : *known - *known / 2;
        if (start == 0 || start == *known) continue;
        x = concat(g, {slice(g, x, {dim}, {start}, {*known}), slice(g, x, {dim}, {0}, {start})}, dim);
        continue;
      }
      if (g.opset() < 10)
        throw ArgumentError(n.kind + ": dim " + std::to_string(dim) +
                            " has a run-time size, which needs opset 10 or later (Slice with tensor bounds)");
      Value* length = size(g, x, dim, true);
      Value* half = g.op("Div", {length, g.constant_ints({2})});
      Value* start = inverse ? half : g.op("Sub", {length, half});
      Value* axes = g.constant_ints({dim});
      Value* tail = slice(g, x, start, length, axes, nullptr);
      Value* head = slice(g, x, g.constant_ints({0}), start, axes, nullptr);
      x = concat(g, {tail, head}, dim);
    }
    // An unshifted input (every dim of size <= 1) is handed on: the host copies it if needed.
    return {x};
  };
}

}  // namespace

void add_fft(Registrar& r) {
  // Nodes that read or make complex values: every transform but irfft/hfft of a real input.
  const std::pair<const char*, Kind> one[] = {
      {"aten::fft_fft", Kind::Forward},           {"aten::fft_ifft", Kind::Inverse},
      {"aten::fft_rfft", Kind::RealForward},      {"aten::fft_ihfft", Kind::RealInverse},
      {"aten::fft_irfft", Kind::OnesidedInverse}, {"aten::fft_hfft", Kind::OnesidedForward},
  };
  const std::pair<const char*, Kind> many[] = {
      {"aten::fft_fft2", Kind::Forward},           {"aten::fft_fftn", Kind::Forward},
      {"aten::fft_ifft2", Kind::Inverse},          {"aten::fft_ifftn", Kind::Inverse},
      {"aten::fft_rfft2", Kind::RealForward},      {"aten::fft_rfftn", Kind::RealForward},
      {"aten::fft_ihfft2", Kind::RealInverse},     {"aten::fft_ihfftn", Kind::RealInverse},
      {"aten::fft_irfft2", Kind::OnesidedInverse}, {"aten::fft_irfftn", Kind::OnesidedInverse},
      {"aten::fft_hfft2", Kind::OnesidedForward},  {"aten::fft_hfftn", Kind::OnesidedForward},
  };
  for (const auto& [op, kind] : one) r.add_complex(op, 11, one_dim(kind));
  for (const auto& [op, kind] : many) r.add_complex(op, 11, many_dims(kind));
  // irfft and hfft of a real tensor (a spectrum with zero imaginary parts) give a real tensor:
  // no complex value flows, so the node takes the op's real entry.
  for (const auto& [op, kind] : one)
    if (from_onesided(kind)) r.add(op, 11, one_dim(kind));
  for (const auto& [op, kind] : many)
    if (from_onesided(kind)) r.add(op, 11, many_dims(kind));
  // Shifts move elements only: any opset, real or complex.
  for (const bool inverse : {false, true}) {
    const std::string op = inverse ? "aten::fft_ifftshift" : "aten::fft_fftshift";
    r.add(op, 9, shift(inverse));
    r.add_complex(op, 9, shift(inverse));
  }
}

}  // namespace onnxport::spectral
