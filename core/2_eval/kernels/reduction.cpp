// The Reduce* ops, ArgMax/ArgMin, TopK, CumSum, the softmax family (Softmax, LogSoftmax, Hardmax)
// and the matrix products (MatMul, Gemm, MatMulInteger, Einsum, Det).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "2_eval/kernel.h"

namespace onnxport::core::eval {

namespace {

bool is_integral(const at::Tensor& t) { return at::isIntegralType(t.scalar_type(), /*includeBool=*/true); }

// The one value of a 0-d or single-element 1-d integer input (K of TopK, axis of CumSum).
int64_t scalar_input(const KernelContext& ctx, size_t i, const char* what) {
  const auto values = int_values(ctx.input(i));
  if (values.size() != 1)
    ctx.fail(std::string(what) + " must hold one value, it holds " + std::to_string(values.size()));
  return values[0];
}

// Distinct non-negative axes, ascending.
std::vector<int64_t> normalized_axes(const std::vector<int64_t>& axes, int64_t rank, const KernelContext& ctx) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    const int64_t n = normalize_axis(a, rank, ctx);
    if (std::find(out.begin(), out.end(), n) != out.end()) ctx.fail("axis " + std::to_string(a) + " is repeated");
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---- Reduce* ------------------------------------------------------------------------------

enum class Reduction { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// The shape a reduction over `dims` leaves.
std::vector<int64_t> reduced_shape(const at::Tensor& t, const std::vector<int64_t>& dims, bool keep) {
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < t.dim(); ++d) {
    const bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!reduced)
      shape.push_back(t.size(d));
    else if (keep)
      shape.push_back(1);
  }
  return shape;
}

// ReduceMax/ReduceMin over an empty set: the identity of the reduction, -inf/+inf or the type's
// extreme value where the type has no infinity.
at::Tensor empty_extreme(const at::Tensor& t, const std::vector<int64_t>& dims, bool keep, bool is_max) {
  at::Scalar fill;
  if (at::isFloatingType(t.scalar_type())) {
    const double inf = std::numeric_limits<double>::infinity();
    fill = is_max ? -inf : inf;
  } else {
    AT_DISPATCH_INTEGRAL_TYPES(t.scalar_type(), "empty_extreme", [&] {
      fill = is_max ? std::numeric_limits<scalar_t>::lowest() : std::numeric_limits<scalar_t>::max();
    });
  }
  return at::full(reduced_shape(t, dims, keep), fill, t.options());
}

// `x` reduced over `dims` (empty only for a 0-d tensor, where every reduction keeps the value).
// The result has x's type.
at::Tensor reduce(Reduction kind, const at::Tensor& x, const std::vector<int64_t>& dims, bool keep,
                  const KernelContext& ctx) {
  const at::Tensor w = widened(x);
  const auto type = w.scalar_type();
  // Logarithms and roots of integers are computed in double and truncated back, like a cast.
  auto real = [&] { return is_integral(w) ? w.to(at::kDouble) : w; };
  at::Tensor out;
  switch (kind) {
    case Reduction::kSum: out = at::sum(w, dims, keep, type); break;
    case Reduction::kSumSquare: out = at::sum(w * w, dims, keep, type); break;
    case Reduction::kL1: out = at::sum(w.abs(), dims, keep, type); break;
    case Reduction::kL2: out = at::sum(real().square(), dims, keep).sqrt(); break;
    case Reduction::kLogSum: out = at::sum(real(), dims, keep).log(); break;
    case Reduction::kLogSumExp: out = at::logsumexp(real(), dims, keep); break;
    case Reduction::kMean: {
      if (!is_integral(w)) {
        out = at::mean(w, dims, keep);
        break;
      }
      int64_t count = 1;
      for (int64_t d : dims) count *= w.size(d);
      if (count == 0) ctx.fail("the integer mean of an empty set is undefined");
      // Integer mean: the exact sum divided with truncation, as integer division does.
      out = at::sum(w, dims, keep, at::kLong).div(count, "trunc");
      break;
    }
    case Reduction::kMax:
    case Reduction::kMin: {
      const bool is_max = kind == Reduction::kMax;
      if (std::any_of(dims.begin(), dims.end(), [&](int64_t d) { return w.size(d) == 0; })) {
        out = empty_extreme(w, dims, keep, is_max);
        break;
      }
      out = is_max ? at::amax(w, dims, keep) : at::amin(w, dims, keep);
      break;
    }
    case Reduction::kProd: {
      // at::prod reduces one axis at a time; from the last so earlier indices stay valid.
      out = w;
      for (auto d = dims.rbegin(); d != dims.rend(); ++d) out = at::prod(out, *d, keep, type);
      break;
    }
  }
  return out.to(x.scalar_type());
}

std::vector<EvalValue> reduce_op(const KernelContext& ctx, Reduction kind) {
  const at::Tensor& x = ctx.input(0);
  // ReduceSum takes its axes as an input from opset 13, the other Reduce* ops from 18.
  const bool axes_input = ctx.opset() >= (kind == Reduction::kSum ? 13 : 18);
  std::vector<int64_t> axes;
  if (axes_input) {
    if (ctx.has_input(1)) axes = int_values(ctx.input(1));
  } else {
    axes = ctx.attr_ints("axes");
  }
  if (axes.empty()) {
    if (axes_input && ctx.attr_i("noop_with_empty_axes", 0) != 0) return single(x);
    axes.resize(static_cast<size_t>(x.dim()));
    std::iota(axes.begin(), axes.end(), 0);
  }
  std::vector<int64_t> dims = normalized_axes(axes, x.dim(), ctx);
  if (x.dim() == 0) dims.clear();  // axis 0 of a scalar: the scalar itself
  return single(reduce(kind, x, dims, ctx.attr_i("keepdims", 1) != 0, ctx));
}

// ---- ArgMax / ArgMin, TopK, CumSum ------------------------------------------------------------

std::vector<EvalValue> arg_extreme(const KernelContext& ctx, bool is_max) {
  const at::Tensor x = widened(ctx.input(0));
  if (x.dim() == 0) ctx.fail("the input must have rank 1 or more");
  const int64_t axis = normalize_axis(ctx.attr_i("axis", 0), x.dim(), ctx);
  const bool keep = ctx.attr_i("keepdims", 1) != 0;
  const bool last = ctx.opset() >= 12 && ctx.attr_i("select_last_index", 0) != 0;
  const int64_t size = x.size(axis);
  if (size == 0) ctx.fail("the axis to search is empty");
  // ATen returns the first occurrence; the last one is the first of the reversed axis.
  auto first = [&](const at::Tensor& t) { return is_max ? t.argmax(axis, keep) : t.argmin(axis, keep); };
  return single(last ? (size - 1) - first(x.flip(axis)) : first(x));
}

std::vector<EvalValue> top_k(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const int64_t axis = normalize_axis(ctx.attr_i("axis", -1), x.dim(), ctx);
  int64_t k = 0;
  if (ctx.opset() < 10) {
    if (!ctx.has_attr("k")) ctx.fail("attribute k is missing");
    k = ctx.attr_i("k", 0);
  } else {
    k = scalar_input(ctx, 1, "K");
  }
  if (k < 0 || k > x.size(axis))
    ctx.fail("k = " + std::to_string(k) + " is out of range for an axis of " + std::to_string(x.size(axis)));
  const bool largest = ctx.opset() < 11 || ctx.attr_i("largest", 1) != 0;
  // A stable sort keeps equal values in index order: the lower index first, as ONNX asks. The
  // values are gathered from x itself so they keep its type exactly. (sorted=0 leaves the order
  // unspecified, so sorted output serves it too.)
  at::Tensor indices = std::get<1>(at::sort(widened(x), /*stable=*/true, axis, /*descending=*/largest));
  indices = indices.narrow(axis, 0, k).contiguous();
  return {EvalValue(x.gather(axis, indices)), EvalValue(indices)};
}

std::vector<EvalValue> cum_sum(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  if (x.dim() == 0) ctx.fail("the input must have rank 1 or more");
  const int64_t axis = normalize_axis(scalar_input(ctx, 1, "axis"), x.dim(), ctx);
  const bool reverse = ctx.attr_i("reverse", 0) != 0;
  at::Tensor w = widened(x);
  if (reverse) w = w.flip(axis);
  const int64_t n = w.size(axis);
  if (ctx.attr_i("exclusive", 0) != 0 && n > 0)  // shift by one along the axis, a zero first
    w = at::cat({at::zeros_like(w.narrow(axis, 0, 1)), w.narrow(axis, 0, n - 1)}, axis);
  at::Tensor out = w.cumsum(axis, w.scalar_type());
  if (reverse) out = out.flip(axis);
  return single(out.to(x.scalar_type()));
}

// ---- Softmax, LogSoftmax, Hardmax --------------------------------------------------------------

enum class Normalizer { kSoftmax, kLogSoftmax, kHardmax };

at::Tensor normalize_along(Normalizer kind, const at::Tensor& t, int64_t dim) {
  switch (kind) {
    case Normalizer::kSoftmax: return at::softmax(t, dim);
    case Normalizer::kLogSoftmax: return at::log_softmax(t, dim);
    case Normalizer::kHardmax: break;
  }
  // 1 at the first maximum along dim, 0 elsewhere.
  if (t.numel() == 0) return at::zeros_like(t);
  return at::zeros_like(t).scatter_(dim, t.argmax(dim, /*keepdim=*/true), 1);
}

std::vector<EvalValue> normalizer_op(const KernelContext& ctx, Normalizer kind) {
  const at::Tensor& x = ctx.input(0);
  const at::Tensor w = widened(x);
  at::Tensor out;
  if (ctx.opset() >= 13) {
    out = normalize_along(kind, w, normalize_axis(ctx.attr_i("axis", -1), x.dim(), ctx));
  } else {
    // Before opset 13: x is seen as a matrix [a_0 * ... * a_{k-1}, a_k * ... * a_{n-1}] for k = axis,
    // and the rows are normalized.
    const int64_t axis = normalize_axis(ctx.attr_i("axis", 1), x.dim(), ctx);
    const auto sizes = x.sizes();
    const int64_t rows = std::accumulate(sizes.begin(), sizes.begin() + axis, int64_t{1}, std::multiplies<>());
    const int64_t cols = std::accumulate(sizes.begin() + axis, sizes.end(), int64_t{1}, std::multiplies<>());
    out = normalize_along(kind, w.reshape({rows, cols}), 1).reshape(sizes);
  }
  return single(out.to(x.scalar_type()));
}

// ---- MatMul, Gemm, MatMulInteger, Einsum, Det ------------------------------------------------------

void require_same_type(const KernelContext& ctx, const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != b.scalar_type())
    ctx.fail(std::string("inputs of types ") + c10::toString(a.scalar_type()) + " and " +
             c10::toString(b.scalar_type()) + " differ");
}

std::vector<EvalValue> mat_mul(const KernelContext& ctx) {
  const at::Tensor& a = ctx.input(0);
  const at::Tensor& b = ctx.input(1);
  require_same_type(ctx, a, b);
  if (a.dim() == 0 || b.dim() == 0) ctx.fail("operands must have rank 1 or more");
  return single(at::matmul(widened(a), widened(b)).to(a.scalar_type()));
}

// alpha or beta as an ATen scalar: exact integers for integer tensors (a fractional factor on an
// integer Gemm has no defined result).
at::Scalar gemm_factor(const KernelContext& ctx, const char* name, bool integral) {
  const float v = ctx.attr_f(name, 1.0f);
  if (!integral) return at::Scalar(static_cast<double>(v));
  if (std::nearbyint(v) != v) ctx.fail(std::string(name) + " = " + std::to_string(v) + " on integer inputs");
  return at::Scalar(static_cast<int64_t>(v));
}

std::vector<EvalValue> gemm(const KernelContext& ctx) {
  const at::Tensor& a_in = ctx.input(0);
  require_same_type(ctx, a_in, ctx.input(1));
  if (a_in.dim() != 2 || ctx.input(1).dim() != 2) ctx.fail("A and B must be matrices");
  at::Tensor a = widened(a_in);
  at::Tensor b = widened(ctx.input(1));
  if (ctx.attr_i("transA", 0) != 0) a = a.t();
  if (ctx.attr_i("transB", 0) != 0) b = b.t();
  const bool integral = is_integral(a);
  const at::Scalar alpha = gemm_factor(ctx, "alpha", integral);
  const at::Scalar beta = gemm_factor(ctx, "beta", integral);
  if (!ctx.has_input(2)) {
    at::Tensor product = at::mm(a, b);
    if (ctx.attr_f("alpha", 1.0f) != 1.0f) product.mul_(alpha);
    return single(product.to(a_in.scalar_type()));
  }
  require_same_type(ctx, a_in, ctx.input(2));
  const at::Tensor c = widened(ctx.input(2));
  // C broadcasts one way, to [M, N]; before opset 7 only when broadcast=1.
  const std::vector<int64_t> mn{a.size(0), b.size(1)};
  bool fits = c.dim() <= 2;
  for (int64_t i = 1; fits && i <= c.dim(); ++i) {
    const int64_t have = c.size(-i), want = mn[static_cast<size_t>(2 - i)];
    fits = have == want || have == 1;
  }
  if (ctx.opset() < 7 && ctx.attr_i("broadcast", 0) == 0 && !c.sizes().equals(mn))
    ctx.fail("C of shape " + c10::str(c.sizes()) + " must be " + c10::str(at::IntArrayRef(mn)) +
             " when broadcast is 0");
  if (!fits) ctx.fail("C of shape " + c10::str(c.sizes()) + " does not broadcast to " + c10::str(at::IntArrayRef(mn)));
  return single(at::addmm(c, a, b, beta, alpha).to(a_in.scalar_type()));
}

// MatMulInteger operand minus its zero point, in double: every product and partial sum of 8-bit
// differences is an integer far below 2^53, so the BLAS product in double is exact.
at::Tensor zero_shifted(const KernelContext& ctx, size_t input, size_t zero_point, bool per_row) {
  const at::Tensor& x = ctx.input(input);
  if (x.scalar_type() != at::kByte && x.scalar_type() != at::kChar) ctx.fail("inputs must be int8 or uint8");
  at::Tensor shifted = x.to(at::kDouble);
  if (!ctx.has_input(zero_point)) return shifted;
  const at::Tensor& zp = ctx.input(zero_point);
  require_same_type(ctx, x, zp);
  at::Tensor z = zp.to(at::kDouble);
  // A's 1-d zero point holds one value per row of a matrix: it broadcasts along the rows' K.
  if (per_row && z.dim() == 1 && x.dim() >= 2) z = z.unsqueeze(-1);
  return shifted - z;
}

std::vector<EvalValue> mat_mul_integer(const KernelContext& ctx) {
  const at::Tensor a = zero_shifted(ctx, 0, 2, /*per_row=*/true);
  const at::Tensor b = zero_shifted(ctx, 1, 3, /*per_row=*/false);
  if (a.dim() == 0 || b.dim() == 0) ctx.fail("operands must have rank 1 or more");
  // Through int64 so that a sum past int32 wraps as 32-bit accumulation would.
  return single(at::matmul(a, b).to(at::kLong).to(at::kInt));
}

std::vector<EvalValue> einsum(const KernelContext& ctx) {
  std::string equation = ctx.attr_s("equation", "");
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  if (equation.empty()) ctx.fail("attribute equation is missing");
  if (ctx.input_count() == 0) ctx.fail("no operands");
  std::vector<at::Tensor> operands;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    require_same_type(ctx, ctx.input(0), ctx.input(i));
    operands.push_back(widened(ctx.input(i)));
  }
  return single(at::einsum(equation, operands).to(ctx.input(0).scalar_type()));
}

std::vector<EvalValue> det(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  if (!at::isFloatingType(x.scalar_type())) ctx.fail("the input must be a floating-point tensor");
  if (x.dim() < 2 || x.size(-1) != x.size(-2)) ctx.fail("the input must be square matrices [*, M, M]");
  return single(at::linalg_det(widened(x)).to(x.scalar_type()));
}

}  // namespace

void register_reduction_kernels(KernelTable& table) {
  const std::pair<const char*, Reduction> reductions[] = {
      {"ReduceSum", Reduction::kSum},
      {"ReduceMean", Reduction::kMean},
      {"ReduceMax", Reduction::kMax},
      {"ReduceMin", Reduction::kMin},
      {"ReduceProd", Reduction::kProd},
      {"ReduceL1", Reduction::kL1},
      {"ReduceL2", Reduction::kL2},
      {"ReduceLogSum", Reduction::kLogSum},
      {"ReduceLogSumExp", Reduction::kLogSumExp},
      {"ReduceSumSquare", Reduction::kSumSquare},
  };
  for (const auto& [name, kind] : reductions)
    table[name] = {[kind = kind](const KernelContext& ctx) { return reduce_op(ctx, kind); }, 1, 18};
  table["ArgMax"] = {[](const KernelContext& ctx) { return arg_extreme(ctx, true); }, 1};
  table["ArgMin"] = {[](const KernelContext& ctx) { return arg_extreme(ctx, false); }, 1};
  table["TopK"] = {top_k, 1};
  table["CumSum"] = {cum_sum, 11};
  table["Softmax"] = {[](const KernelContext& ctx) { return normalizer_op(ctx, Normalizer::kSoftmax); }, 1};
  table["LogSoftmax"] = {[](const KernelContext& ctx) { return normalizer_op(ctx, Normalizer::kLogSoftmax); }, 1};
  table["Hardmax"] = {[](const KernelContext& ctx) { return normalizer_op(ctx, Normalizer::kHardmax); }, 1};
  table["MatMul"] = {mat_mul, 1};
  table["Gemm"] = {gemm, 1};
  table["MatMulInteger"] = {mat_mul_integer, 10};
  table["Einsum"] = {einsum, 12};
  table["Det"] = {det, 11};
}

}  // namespace onnxport::core::eval
