// Sequences: arange, _dim_arange, linspace, logspace, tril/triu_indices and window functions.
// Bounds may be run-time numbers (x.size(0)); index_range picks Range (opset 11+) or a NonZero
// trick (opsets 9/10), and constant bounds give constants.
#include <cmath>

#include "creation.h"
#include "onnxport/helpers.h"
#include "onnxport/sdk.h"

namespace onnxport::creation {
namespace {

using namespace helpers;

constexpr double kPi = 3.14159265358979323846;

Value* as_double(Graph& g, Value* v) { return cast(g, to_scalar(g, v), DType::Double); }

Value* empty_of(Graph& g, const TorchNode& n, DType dtype) {
  if (dtype == DType::BFloat16) throw ArgumentError(n.kind + ": an empty bfloat16 tensor cannot be a constant");
  return g.constant(Tensor(dtype, {0}, {}));
}

// ---------------------------------------------------------------- arange

struct Bounds {
  Value* start = nullptr;  // nullptr: 0
  Value* end = nullptr;
  Value* step = nullptr;  // nullptr: 1
  std::optional<size_t> dtype_pos;
};

// The overloads: arange(end, ...), arange.start(start, end, ...), arange.start_step(start, end,
// step, ...) and the out= forms. Schema names tell them apart; without names, the arity does.
Bounds bounds_of(const TorchNode& n, const Args& a) {
  Bounds b;
  auto pick = [&](const char* name, std::optional<size_t> pos) -> Value* {
    auto i = arg_index(n, name, pos);
    return i && !a.is_none(*i) ? a.at(*i) : nullptr;
  };
  std::optional<size_t> start, end, step;
  switch (a.size()) {
    case 2: end = 0; break;
    case 5:
      end = 0;
      b.dtype_pos = 1;
      break;
    case 6:
      start = 0;
      end = 1;
      b.dtype_pos = 2;
      break;
    case 4:
      start = 0;
      end = 1;
      step = 2;
      break;
    case 7:
      start = 0;
      end = 1;
      step = 2;
      b.dtype_pos = 3;
      break;
    default: break;
  }
  b.start = pick("start", start);
  b.end = pick("end", end);
  b.step = pick("step", step);
  if (!b.end)
    throw ArgumentError(n.kind + ": cannot find the `end` argument among " + std::to_string(a.size()) + " arguments");
  return b;
}

// arange keeps the bounds in the result's type (arange(0, 5.5, 1.5, dtype=int64) is 0..4, the
// bounds truncated first) and computes floating results in double like PyTorch's kernel.
Value* arange(Graph& g, const TorchNode& n, const Args& a) {
  const Bounds b = bounds_of(n, a);
  bool floating = false;
  for (Value* v : {b.start, b.end, b.step})
    if (v && is_floating(dtype_of(v))) floating = true;
  const DType dtype = result_dtype(n, a, floating ? DType::Float : DType::Int64, b.dtype_pos);
  const DType work = is_floating(dtype) ? DType::Double : DType::Int64;
  Value* start = b.start ? cast(g, to_scalar(g, b.start), work) : g.constant_scalar(work, 0);
  Value* end = cast(g, to_scalar(g, b.end), work);
  Value* step = b.step ? cast(g, to_scalar(g, b.step), work) : g.constant_scalar(work, 1);
  if (g.opset() >= 11) return cast(g, g.op("Range", {start, end, step}), dtype);

  // count = ceil((end - start) / step), then start + i * step for i in 0..count-1.
  Value* count;
  auto s = constant_number(start), e = constant_number(end), st = constant_number(step);
  if (s && e && st) {
    if (*st == 0) throw ArgumentError(n.kind + ": step must be nonzero");
    count = g.constant_int(std::max<int64_t>(0, static_cast<int64_t>(std::ceil((*e - *s) / *st))));
  } else {
    Value* span = g.op("Sub", {cast(g, end, DType::Double), cast(g, start, DType::Double)});
    Value* q = g.op("Div", {span, cast(g, step, DType::Double)});
    count = cast(g, g.op("Ceil", {q}), DType::Int64);
  }
  Value* idx = cast(g, index_range(g, count), work);
  return cast(g, g.op("Add", {g.op("Mul", {idx, step}), start}), dtype);
}

// aten::_dim_arange(like, dim): arange(like.size(dim)) as int64.
Value* dim_arange(Graph& g, const TorchNode&, const Args& a) { return index_range(g, size(g, a.tensor(0), a.i(1))); }

// ---------------------------------------------------------------- linspace / logspace

// `steps` points from start to end in double. Like PyTorch's kernel, the first half counts up
// from start and the second half down from end, so the end point is exact.
Value* linspace_double(Graph& g, const TorchNode& n, Value* start_v, Value* end_v, Value* steps_v) {
  Value* start = as_double(g, start_v);
  Value* end = as_double(g, end_v);
  Value* steps = cast(g, to_scalar(g, steps_v), DType::Int64);
  if (auto c = steps->maybe_int(); c && *c < 0)
    throw ArgumentError(n.kind + ": steps must be non-negative, got " + std::to_string(*c));
  Value* idx = index_range(g, steps);
  Value* idx_d = cast(g, idx, DType::Double);
  Value* last = g.op("Sub", {cast(g, steps, DType::Double), g.constant_scalar(DType::Double, 1)});
  // max(steps - 1, 1): steps == 1 gives [start] instead of 0 * inf.
  Value* intervals = g.op("Max", {last, g.constant_scalar(DType::Double, 1)});
  Value* step = g.op("Div", {g.op("Sub", {end, start}), intervals});
  Value* up = g.op("Add", {start, g.op("Mul", {idx_d, step})});
  Value* down = g.op("Sub", {end, g.op("Mul", {g.op("Sub", {last, idx_d}), step})});
  // The first steps / 2 points count up; a single point is start.
  Value* halfway = g.op("Div", {steps, g.constant_int(2)});
  Value* counts_up = g.op("Or", {g.op("Less", {idx, halfway}), g.op("Equal", {steps, g.constant_int(1)})});
  return g.op("Where", {counts_up, up, down});
}

// aten::linspace(start, end, steps, *, dtype, layout, device, pin_memory).
Value* linspace(Graph& g, const TorchNode& n, const Args& a) {
  const DType dtype = result_dtype(n, a, DType::Float, 3);
  if (a.at(2)->maybe_int() == std::optional<int64_t>(0)) return empty_of(g, n, dtype);
  return cast(g, linspace_double(g, n, a.at(0), a.at(1), a.at(2)), dtype);
}

// aten::logspace(start, end, steps, base=10, *, dtype, ...): base ** linspace(start, end, steps).
Value* logspace(Graph& g, const TorchNode& n, const Args& a) {
  const DType dtype = result_dtype(n, a, DType::Float, 4);
  if (a.at(2)->maybe_int() == std::optional<int64_t>(0)) return empty_of(g, n, dtype);
  const double base = a.is_none(3) ? 10.0 : a.f(3);
  Value* exponents = linspace_double(g, n, a.at(0), a.at(1), a.at(2));
  return cast(g, g.op("Pow", {g.constant_scalar(DType::Double, base), exponents}), dtype);
}

// ---------------------------------------------------------------- tril/triu indices

// aten::tril_indices/triu_indices(row, col, offset=0, *, dtype=long, ...): the (row, col)
// coordinates of the lower/upper triangle in row-major order, as a [2, N] tensor.
Symbolic triangle_indices(bool lower) {
  return [lower](Graph& g, const TorchNode& n, const Args& a) -> std::vector<Value*> {
    const int64_t offset = a.is_none(2) ? 0 : a.i(2);
    const DType dtype = result_dtype(n, a, DType::Int64, 3);
    auto keep = [&](int64_t r, int64_t c) { return lower ? c - r <= offset : c - r >= offset; };
    auto rows = a.at(0)->maybe_int(), cols = a.at(1)->maybe_int();
    if (rows && cols) {
      std::vector<int64_t> rs, cs;
      for (int64_t r = 0; r < *rows; ++r)
        for (int64_t c = 0; c < *cols; ++c)
          if (keep(r, c)) rs.push_back(r), cs.push_back(c);
      std::vector<int64_t> both = rs;
      both.insert(both.end(), cs.begin(), cs.end());
      return {
          cast(g, reshape(g, g.constant_ints(both), std::vector<int64_t>{2, static_cast<int64_t>(rs.size())}), dtype)};
    }
    // NonZero lists the true positions of the [row, col] mask in row-major order.
    Value* r = unsqueeze(g, index_range(g, cast(g, to_scalar(g, a.at(0)), DType::Int64)), {1});
    Value* c = unsqueeze(g, index_range(g, cast(g, to_scalar(g, a.at(1)), DType::Int64)), {0});
    Value* diff = g.op("Sub", {c, r});
    Value* outside = g.op(lower ? "Greater" : "Less", {diff, g.constant_int(offset)});
    return {cast(g, g.op("NonZero", {g.op("Not", {outside})}), dtype)};
  };
}

// ---------------------------------------------------------------- window functions

// w(f) for f = n / N in [0, 1), computed in float.
using WindowFormula = std::function<Value*(Graph&, Value* frac)>;

Value* cos_of(Graph& g, Value* frac, double scale) {
  return g.op("Cos", {g.op("Mul", {frac, g.constant_float(static_cast<float>(scale))})});
}

// a - b * cos(2 pi f): hann (0.5, 0.5) and hamming (alpha, beta).
WindowFormula cosine_window(double a, double b) {
  return [a, b](Graph& g, Value* frac) {
    return g.op("Sub", {g.constant_float(static_cast<float>(a)),
                        g.op("Mul", {g.constant_float(static_cast<float>(b)), cos_of(g, frac, 2 * kPi)})});
  };
}

Value* blackman(Graph& g, Value* frac) {
  Value* w = cosine_window(0.42, 0.5)(g, frac);
  return g.op("Add", {w, g.op("Mul", {g.constant_float(0.08f), cos_of(g, frac, 4 * kPi)})});
}

// 1 - |2f - 1|
Value* bartlett(Graph& g, Value* frac) {
  Value* centered = g.op("Sub", {g.op("Mul", {frac, g.constant_float(2.0f)}), g.constant_float(1.0f)});
  return g.op("Sub", {g.constant_float(1.0f), g.op("Abs", {centered})});
}

// aten::<name>_window(window_length[, periodic[, alpha[, beta]]], *, dtype, ...): the formula at
// n / N for n in 0..length-1, N = length (periodic) or length - 1; length 1 gives [1].
Value* window(Graph& g, const TorchNode& n, const Args& a, const WindowFormula& formula) {
  const auto periodic_i = arg_index(n, "periodic", a.size() > 5 ? std::optional<size_t>(1) : std::nullopt);
  const bool periodic = !periodic_i || a.is_none(*periodic_i) || a.b(*periodic_i);
  // Without schema names: dtype, layout, device, pin_memory are the last four arguments.
  const auto dtype_pos = a.size() >= 5 ? std::optional<size_t>(a.size() - 4) : std::nullopt;
  const DType dtype = result_dtype(n, a, DType::Float, dtype_pos);
  if (!is_floating(dtype)) throw ArgumentError(n.kind + " needs a floating point dtype, got " + dtype_name(dtype));
  Value* length = cast(g, to_scalar(g, a.at(0)), DType::Int64);
  const auto constant_length = length->maybe_int();
  if (constant_length == std::optional<int64_t>(0)) return empty_of(g, n, dtype);
  if (constant_length == std::optional<int64_t>(1)) return filled(g, g.constant_ints({1}), 1.0, dtype);
  Value* idx = cast(g, index_range(g, length), DType::Float);
  Value* denom = cast(g, length, DType::Float);
  if (!periodic) denom = g.op("Sub", {denom, g.constant_float(1.0f)});
  denom = g.op("Max", {denom, g.constant_float(1.0f)});  // length 1: no division by zero
  Value* w = formula(g, g.op("Div", {idx, denom}));
  if (!constant_length) {
    Value* single = g.op("Equal", {length, g.constant_int(1)});
    w = g.op("Where", {single, g.constant_float(1.0f), w});
  }
  return cast(g, w, dtype);
}

Symbolic window_of(WindowFormula formula) {
  return [formula](Graph& g, const TorchNode& n, const Args& a) -> std::vector<Value*> {
    return {window(g, n, a, formula)};
  };
}

// hamming_window's alpha/beta arguments (0.54/0.46 when absent).
Value* hamming(Graph& g, const TorchNode& n, const Args& a) {
  auto alpha_i = arg_index(n, "alpha"), beta_i = arg_index(n, "beta");
  const double alpha = alpha_i && !a.is_none(*alpha_i) ? a.f(*alpha_i) : 0.54;
  const double beta = beta_i && !a.is_none(*beta_i) ? a.f(*beta_i) : 0.46;
  return window(g, n, a, cosine_window(alpha, beta));
}

}  // namespace

void add_ranges(Registrar& r) {
  r.add("aten::arange", 9, arange);
  r.add("aten::_dim_arange", 9, dim_arange);
  r.add("aten::linspace", 9, linspace);
  r.add("aten::logspace", 9, logspace);
  r.add("aten::tril_indices", 9, triangle_indices(true));
  r.add("aten::triu_indices", 9, triangle_indices(false));
  r.add("aten::hann_window", 9, window_of(cosine_window(0.5, 0.5)));
  r.add("aten::hamming_window", 9, hamming);
  r.add("aten::blackman_window", 9, window_of(blackman));
  r.add("aten::bartlett_window", 9, window_of(bartlett));
}

}  // namespace onnxport::creation
