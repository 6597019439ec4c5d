// Quantization (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearConv, QLinearMatMul,
// ConvInteger), NonMaxSuppression, signal processing (DFT, STFT, the window generators,
// MelWeightMatrix) and the random generators (RandomUniform/Normal[Like], Bernoulli, Multinomial).
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <initializer_list>

#include "2_eval/kernel.h"

namespace onnxport::core::eval {

namespace {

// --- quantization ---------------------------------------------------------------------------

// The value range of an 8-bit quantized type.
std::pair<double, double> quantized_range(const KernelContext& ctx, at::ScalarType type) {
  if (type == at::kByte) return {0, 255};
  if (type == at::kChar) return {-128, 127};
  ctx.fail(std::string("quantized type ") + c10::toString(type) + " is not uint8 or int8");
}

void require_8bit(const KernelContext& ctx, const at::Tensor& t, const char* what) {
  if (t.scalar_type() != at::kByte && t.scalar_type() != at::kChar)
    ctx.fail(std::string(what) + " is " + c10::toString(t.scalar_type()) + ", not uint8 or int8");
}

// ONNX's requantization: `scaled` (a real value already divided by the output scale) rounded half
// to even, plus the zero point (undefined: 0), saturated to `type`. NaN becomes the zero point.
at::Tensor requantize(const KernelContext& ctx, const at::Tensor& scaled, const at::Tensor& zero_point,
                      at::ScalarType type) {
  const auto [lo, hi] = quantized_range(ctx, type);
  at::Tensor q = at::nan_to_num(at::round(scaled), 0.0);
  if (zero_point.defined()) q = q + zero_point.to(q.scalar_type());
  return q.clamp(lo, hi).to(type);
}

// A scale or zero point shaped to broadcast along `axis` of a rank-`rank` tensor whose size there is
// `length`: a scalar or one-element tensor stays per-tensor, a 1-D tensor of `length` values becomes
// per-axis.
at::Tensor along_axis(const KernelContext& ctx, const at::Tensor& p, int64_t rank, int64_t axis, int64_t length,
                      const char* what) {
  if (p.numel() == 1 && p.dim() <= 1) return p.reshape({});
  if (p.dim() != 1 || p.size(0) != length)
    ctx.fail(std::string(what) + " must be a scalar or a 1-D tensor of " + std::to_string(length) + " values");
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(axis)] = length;
  return p.reshape(shape);
}

// QuantizeLinear/DequantizeLinear's scale or zero point for input x: per-tensor, or from opset 13
// per-axis along attribute `axis`.
at::Tensor linear_quant_param(const KernelContext& ctx, const at::Tensor& p, const at::Tensor& x, const char* what) {
  if (p.numel() == 1 && p.dim() <= 1) return p.reshape({});
  if (ctx.opset() < 13) ctx.fail(std::string(what) + " must be a scalar before opset 13");
  const int64_t axis = normalize_axis(ctx.attr_i("axis", 1), x.dim(), ctx);
  return along_axis(ctx, p, x.dim(), axis, x.size(axis), what);
}

// QuantizeLinear-21 and DequantizeLinear-21 quantize in blocks when block_size is set (onnxport
// writes per-tensor and per-axis only).
void refuse_blocks(const KernelContext& ctx) {
  if (ctx.attr_i("block_size", 0) != 0) ctx.fail("block quantization (block_size) is not evaluated");
}

std::vector<EvalValue> quantize_linear(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  refuse_blocks(ctx);
  // float inputs divide in float as ONNX's reference does; int32 inputs (beyond float's 24 bits) in double.
  const at::ScalarType compute =
      x.scalar_type() == at::kDouble || x.scalar_type() == at::kInt ? at::kDouble : at::kFloat;
  const at::Tensor scale = linear_quant_param(ctx, ctx.input(1), x, "y_scale").to(compute);
  at::Tensor zero_point = ctx.optional_input(2);
  // Without a zero point the output is uint8, or from opset 21 output_dtype's type.
  at::ScalarType type = zero_point.defined() ? zero_point.scalar_type() : at::kByte;
  if (const int64_t output_dtype = ctx.attr_i("output_dtype", 0); output_dtype != 0) {
    const at::ScalarType asked = scalar_type_of_onnx(static_cast<int32_t>(output_dtype));
    if (zero_point.defined() && asked != type) ctx.fail("output_dtype differs from y_zero_point's type");
    type = asked;
  }
  if (zero_point.defined()) zero_point = linear_quant_param(ctx, zero_point, x, "y_zero_point");
  return single(requantize(ctx, x.to(compute) / scale, zero_point, type));
}

std::vector<EvalValue> dequantize_linear(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  refuse_blocks(ctx);
  if (x.scalar_type() != at::kByte && x.scalar_type() != at::kChar && x.scalar_type() != at::kInt)
    ctx.fail(std::string("x is ") + c10::toString(x.scalar_type()) + ", not uint8, int8 or int32");
  const at::Tensor& given_scale = ctx.input(1);
  const at::Tensor scale = linear_quant_param(ctx, given_scale, x, "x_scale").to(at::kFloat);
  at::Tensor values = x.to(at::kInt);
  if (ctx.has_input(2)) values = values - linear_quant_param(ctx, ctx.input(2), x, "x_zero_point").to(at::kInt);
  // From opset 19 the output has the scale's type (float16 and bfloat16 too); before, float.
  const at::ScalarType type = ctx.opset() >= 19 ? given_scale.scalar_type() : at::kFloat;
  return single((values.to(at::kFloat) * scale).to(type));
}

std::vector<EvalValue> dynamic_quantize_linear(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  if (x.scalar_type() != at::kFloat) ctx.fail(std::string("x is ") + c10::toString(x.scalar_type()) + ", not float");
  float lo = 0, hi = 0;  // the range always includes 0
  if (x.numel() > 0) {
    auto [min, max] = at::aminmax(x);
    lo = std::min(lo, min.item<float>());
    hi = std::max(hi, max.item<float>());
  }
  // An all-zero input has no range: scale 1 quantizes it to the zero point 0 (as onnxruntime does).
  const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  const float zero_point = std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f);
  const auto options = at::TensorOptions().dtype(at::kFloat);
  const at::Tensor zp = at::scalar_tensor(zero_point, options);
  return {requantize(ctx, x / scale, zp, at::kByte), at::scalar_tensor(scale, options), zp.to(at::kByte)};
}

// An 8-bit quantized tensor minus its zero point (undefined: 0), as int32 values in [-255, 255].
at::Tensor centered(const at::Tensor& q, const at::Tensor& zero_point) {
  at::Tensor v = q.to(at::kInt);
  return zero_point.defined() ? v - zero_point.to(at::kInt) : v;
}

// A bilinear integer op (convolution, matmul) computed by ATen in floating point.
using BilinearOp = std::function<at::Tensor(const at::Tensor&, const at::Tensor&)>;

// op(a, b) for centered 8-bit operands (|values| <= 255) whose outputs sum `terms` products, exact
// (as int64) whatever ATen's summation order: in float while every partial sum stays below 2^24;
// else, for up to 4112 terms, as 16 * op(high, b) + op(low, b) with a = 16 * high + low
// (high in [-16, 15], low in [0, 15]: products of at most 16 * 255), still in float (about half the
// time of double); else in double.
at::Tensor exact_integer_op(const BilinearOp& op, const at::Tensor& a, const at::Tensor& b, int64_t terms) {
  constexpr int64_t float_exact = int64_t{1} << 24;
  if (terms * 255 * 255 < float_exact) return op(a.to(at::kFloat), b.to(at::kFloat)).to(at::kLong);
  if (terms * 16 * 255 < float_exact) {
    const at::Tensor high = at::div(a, 16, "floor");
    const at::Tensor low = a - high * 16;
    const at::Tensor bf = b.to(at::kFloat);
    return op(high.to(at::kFloat), bf).to(at::kLong) * 16 + op(low.to(at::kFloat), bf).to(at::kLong);
  }
  return op(a.to(at::kDouble), b.to(at::kDouble)).to(at::kLong);
}

// An exact int64 result as int32, wrapping around as 32-bit accumulation does.
at::Tensor wrap_to_int32(const at::Tensor& exact) { return exact.to(at::kInt); }

// ConvInteger/QLinearConv's convolution of x and w (floating, integer-valued), following
// the attributes kernel_shape, strides, dilations, pads, auto_pad and group.
at::Tensor integer_convolution(const KernelContext& ctx, const at::Tensor& x, const at::Tensor& w) {
  const int64_t spatial = x.dim() - 2;
  if (spatial < 1 || w.dim() != x.dim())
    ctx.fail("x (rank " + std::to_string(x.dim()) + ") and w (rank " + std::to_string(w.dim()) +
             ") must have the same rank, at least 3");
  const std::vector<int64_t> ones(static_cast<size_t>(spatial), 1);
  const auto strides = ctx.attr_ints("strides", ones);
  const auto dilations = ctx.attr_ints("dilations", ones);
  const std::vector<int64_t> kernel(w.sizes().begin() + 2, w.sizes().end());
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape") != kernel)
    ctx.fail("kernel_shape does not match the shape of w");
  if (static_cast<int64_t>(strides.size()) != spatial || static_cast<int64_t>(dilations.size()) != spatial)
    ctx.fail("strides and dilations need one value per spatial axis");
  std::vector<int64_t> begin(static_cast<size_t>(spatial), 0), end(static_cast<size_t>(spatial), 0);
  const std::string auto_pad = ctx.attr_s("auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < begin.size(); ++i) {
      const int64_t in = x.size(static_cast<int64_t>(i) + 2);
      const int64_t out = (in + strides[i] - 1) / strides[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in);
      begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end[i] = total - begin[i];
    }
  } else if (auto_pad == "NOTSET") {
    const auto pads = ctx.attr_ints("pads", std::vector<int64_t>(static_cast<size_t>(2 * spatial), 0));
    if (static_cast<int64_t>(pads.size()) != 2 * spatial) ctx.fail("pads needs two values per spatial axis");
    std::copy(pads.begin(), pads.begin() + spatial, begin.begin());
    std::copy(pads.begin() + spatial, pads.end(), end.begin());
  } else if (auto_pad != "VALID") {
    ctx.fail("auto_pad '" + auto_pad + "' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  }
  // Padding is zero in the centered domain, i.e. the zero point in the quantized one. ATen pads
  // symmetrically; asymmetric padding is applied first.
  at::Tensor input = x;
  std::vector<int64_t> padding = begin;
  if (begin != end) {
    std::vector<int64_t> pad_last_first;
    for (int64_t i = spatial - 1; i >= 0; --i) {
      pad_last_first.push_back(begin[static_cast<size_t>(i)]);
      pad_last_first.push_back(end[static_cast<size_t>(i)]);
    }
    input = at::constant_pad_nd(x, pad_last_first, 0);
    std::fill(padding.begin(), padding.end(), 0);
  }
  return at::convolution(input, w, {}, strides, padding, dilations, false,
                         std::vector<int64_t>(static_cast<size_t>(spatial), 0), ctx.attr_i("group", 1));
}

// The zero point of w (undefined when absent): per tensor or per output channel.
at::Tensor weight_zero_point(const KernelContext& ctx, size_t input, const at::Tensor& w) {
  if (!ctx.has_input(input)) return {};
  return along_axis(ctx, ctx.input(input), w.dim(), 0, w.size(0), "w_zero_point");
}

// A per-tensor-only zero point or scale (undefined when absent).
at::Tensor scalar_param(const KernelContext& ctx, size_t input, const char* what) {
  if (!ctx.has_input(input)) return {};
  const at::Tensor& p = ctx.input(input);
  if (p.numel() != 1) ctx.fail(std::string(what) + " must be a scalar");
  return p.reshape({});
}

// The exact int32 accumulation of ConvInteger/QLinearConv (without bias).
at::Tensor integer_conv_accumulation(const KernelContext& ctx, const at::Tensor& x, const at::Tensor& x_zero_point,
                                     const at::Tensor& w, const at::Tensor& w_zero_point) {
  require_8bit(ctx, x, "x");
  require_8bit(ctx, w, "w");
  if (w.dim() < 3) ctx.fail("w must have rank 3 or more");
  const int64_t terms = w.numel() / std::max<int64_t>(w.size(0), 1);  // C / group * kernel size
  const BilinearOp conv = [&ctx](const at::Tensor& a, const at::Tensor& b) { return integer_convolution(ctx, a, b); };
  return exact_integer_op(conv, centered(x, x_zero_point), centered(w, w_zero_point), terms);
}

std::vector<EvalValue> conv_integer(const KernelContext& ctx) {
  const at::Tensor& w = ctx.input(1);
  return single(wrap_to_int32(integer_conv_accumulation(ctx, ctx.input(0), scalar_param(ctx, 2, "x_zero_point"), w,
                                                        weight_zero_point(ctx, 3, w))));
}

std::vector<EvalValue> qlinear_conv(const KernelContext& ctx) {
  const at::Tensor& w = ctx.input(3);
  at::Tensor acc = integer_conv_accumulation(ctx, ctx.input(0), scalar_param(ctx, 2, "x_zero_point"), w,
                                             weight_zero_point(ctx, 5, w));
  const int64_t channels = w.size(0);
  if (ctx.has_input(8)) {
    const at::Tensor& bias = ctx.input(8);
    if (bias.numel() != channels) ctx.fail("B must have one value per output channel");
    std::vector<int64_t> shape(static_cast<size_t>(acc.dim()), 1);
    shape[1] = channels;
    acc = acc + bias.to(at::kLong).reshape(shape);
  }
  // The requantization multiplier x_scale * w_scale / y_scale, per output channel, in float.
  const at::Tensor w_scale = along_axis(ctx, ctx.input(4), acc.dim(), 1, channels, "w_scale").to(at::kFloat);
  const at::Tensor multiplier =
      scalar_param(ctx, 1, "x_scale").to(at::kFloat) * w_scale / scalar_param(ctx, 6, "y_scale").to(at::kFloat);
  const at::Tensor y_zero_point = scalar_param(ctx, 7, "y_zero_point");
  return single(
      requantize(ctx, wrap_to_int32(acc).to(at::kFloat) * multiplier, y_zero_point, y_zero_point.scalar_type()));
}

// QLinearMatMul's scale or zero point of an operand: per tensor, per row of a (1-D of M values or
// [..., M, 1]) or per column of b (1-D of N values or [..., 1, N]).
at::Tensor matmul_param(const KernelContext& ctx, size_t input, const at::Tensor& operand, bool per_row) {
  const at::Tensor& p = ctx.input(input);
  if (p.numel() == 1) return p.reshape({});
  if (p.dim() == 1 && per_row && operand.dim() >= 2) return p.unsqueeze(-1);
  return p;
}

std::vector<EvalValue> qlinear_matmul(const KernelContext& ctx) {
  const at::Tensor& a = ctx.input(0);
  const at::Tensor& b = ctx.input(3);
  require_8bit(ctx, a, "a");
  require_8bit(ctx, b, "b");
  const BilinearOp matmul = [](const at::Tensor& x, const at::Tensor& y) { return at::matmul(x, y); };
  const at::Tensor acc =
      wrap_to_int32(exact_integer_op(matmul, centered(a, matmul_param(ctx, 2, a, true)),
                                     centered(b, matmul_param(ctx, 5, b, false)), a.dim() == 0 ? 1 : a.size(-1)));
  const at::Tensor multiplier = matmul_param(ctx, 1, a, true).to(at::kFloat) *
                                matmul_param(ctx, 4, b, false).to(at::kFloat) / ctx.input(6).to(at::kFloat);
  const at::Tensor& y_zero_point = ctx.input(7);
  return single(requantize(ctx, acc.to(at::kFloat) * multiplier, y_zero_point, y_zero_point.scalar_type()));
}

// --- NonMaxSuppression ------------------------------------------------------------------------

struct Box {
  float y_min, x_min, y_max, x_max;
  float area() const { return (y_max - y_min) * (x_max - x_min); }
};

// Whether two boxes overlap by more than `threshold` intersection over union.
bool overlaps_too_much(const Box& a, const Box& b, float threshold) {
  const float height = std::max(std::min(a.y_max, b.y_max) - std::max(a.y_min, b.y_min), 0.0f);
  const float width = std::max(std::min(a.x_max, b.x_max) - std::max(a.x_min, b.x_min), 0.0f);
  const float intersection = height * width;
  if (intersection <= 0) return false;
  const float area_a = a.area(), area_b = b.area();
  const float union_area = area_a + area_b - intersection;
  if (area_a <= 0 || area_b <= 0 || union_area <= 0) return false;
  return intersection / union_area > threshold;
}

// The boxes of [num_batches, spatial, 4] data as corners, from diagonal corners [y1, x1, y2, x2]
// (center_point_box 0) or [x_center, y_center, width, height] (1).
std::vector<Box> corner_boxes(const KernelContext& ctx, const at::Tensor& boxes) {
  const int64_t format = ctx.attr_i("center_point_box", 0);
  if (format != 0 && format != 1) ctx.fail("center_point_box must be 0 or 1");
  const at::Tensor data = boxes.to(at::kFloat).contiguous();
  const float* p = data.data_ptr<float>();
  std::vector<Box> out(static_cast<size_t>(data.numel() / 4));
  for (auto& box : out) {
    if (format == 0) {
      box = {std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]), std::max(p[1], p[3])};
    } else {
      box = {p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2};
    }
    p += 4;
  }
  return out;
}

std::vector<EvalValue> non_max_suppression(const KernelContext& ctx) {
  const at::Tensor& boxes = ctx.input(0);
  const at::Tensor& scores = ctx.input(1);
  if (boxes.dim() != 3 || boxes.size(2) != 4) ctx.fail("boxes must have shape [num_batches, spatial_dimension, 4]");
  if (scores.dim() != 3 || scores.size(0) != boxes.size(0) || scores.size(2) != boxes.size(1))
    ctx.fail("scores must have shape [num_batches, num_classes, spatial_dimension] matching boxes");
  const int64_t max_per_class = ctx.has_input(2) ? std::max<int64_t>(0, ctx.input(2).item<int64_t>()) : 0;
  const float iou_threshold = ctx.has_input(3) ? ctx.input(3).item<float>() : 0.0f;
  const bool filter_scores = ctx.has_input(4);
  const float score_threshold = filter_scores ? ctx.input(4).item<float>() : 0.0f;

  const int64_t batches = boxes.size(0), classes = scores.size(1), spatial = boxes.size(1);
  const std::vector<Box> all_boxes = corner_boxes(ctx, boxes);
  const at::Tensor score_data = scores.to(at::kFloat).contiguous();
  std::vector<int64_t> selected_triples;
  std::vector<int64_t> candidates;
  std::vector<const Box*> kept;
  for (int64_t b = 0; b < batches && max_per_class > 0; ++b) {
    const Box* batch_boxes = all_boxes.data() + b * spatial;
    for (int64_t c = 0; c < classes; ++c) {
      const float* s = score_data.data_ptr<float>() + (b * classes + c) * spatial;
      candidates.clear();
      for (int64_t i = 0; i < spatial; ++i)
        if (!filter_scores || s[i] > score_threshold) candidates.push_back(i);
      // Highest score first; equal scores keep the lower box index first.
      std::stable_sort(candidates.begin(), candidates.end(), [s](int64_t i, int64_t j) { return s[i] > s[j]; });
      kept.clear();
      for (int64_t i : candidates) {
        if (static_cast<int64_t>(kept.size()) >= max_per_class) break;
        const Box& box = batch_boxes[i];
        if (std::any_of(kept.begin(), kept.end(),
                        [&](const Box* k) { return overlaps_too_much(*k, box, iou_threshold); }))
          continue;
        kept.push_back(&box);
        selected_triples.insert(selected_triples.end(), {b, c, i});
      }
    }
  }
  const auto count = static_cast<int64_t>(selected_triples.size() / 3);
  return single(at::tensor(selected_triples, at::TensorOptions().dtype(at::kLong)).reshape({count, 3}));
}

// --- signal processing ------------------------------------------------------------------------

// The signal of an ONNX [..., 1] (real) or [..., 2] (real, imaginary) tensor without its last
// axis: real or complex, in double (as ONNX's reference transforms compute: in float, rounding
// leaves ~1e-7 where the exact result is 0, beyond the absolute tolerance of 1e-7).
at::Tensor signal_of(const KernelContext& ctx, const at::Tensor& x) {
  if (!at::isFloatingType(x.scalar_type()))
    ctx.fail(std::string("the signal is ") + c10::toString(x.scalar_type()) + ", not a floating type");
  if (x.dim() < 2 || (x.size(-1) != 1 && x.size(-1) != 2))
    ctx.fail("the signal's last axis must have size 1 (real) or 2 (complex)");
  const at::Tensor v = x.to(at::kDouble);
  return x.size(-1) == 1 ? v.squeeze(-1) : at::view_as_complex(v.contiguous());
}

// A complex spectrum as ONNX's [..., 2] tensor of `type`.
at::Tensor onnx_complex(const at::Tensor& spectrum, at::ScalarType type) {
  return at::view_as_real(spectrum.resolve_conj()).to(type).contiguous();
}

// Whether to keep only the non-redundant half of a real signal's spectrum.
bool onesided(const KernelContext& ctx, int64_t fallback, bool complex_input) {
  const bool half = ctx.attr_i("onesided", fallback) != 0;
  if (half && complex_input) ctx.fail("onesided output is not possible for a complex signal");
  return half;
}

std::vector<EvalValue> dft(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const at::Tensor signal = signal_of(ctx, x);
  const int64_t rank = x.dim();
  // DFT-17 takes the axis as an attribute (default 1), DFT-20 as an optional input (default -2).
  const int64_t given = ctx.opset() < 20 ? ctx.attr_i("axis", 1)
                        : ctx.has_input(2) ? ctx.input(2).reshape({}).item<int64_t>()
                                           : -2;
  int64_t axis = given < 0 ? given + rank : given;
  if (axis < 0 || axis > rank - 2)
    ctx.fail("axis " + std::to_string(given) + " is not a signal axis of a rank-" + std::to_string(rank) + " input");
  c10::optional<int64_t> length;
  if (ctx.has_input(1)) {
    length = ctx.input(1).item<int64_t>();
    if (*length < 1) ctx.fail("dft_length must be positive");
  }
  const bool inverse = ctx.attr_i("inverse", 0) != 0;
  const bool half = onesided(ctx, 0, signal.is_complex());
  if (half && inverse) ctx.fail("onesided with inverse is not evaluated");
  const at::Tensor spectrum = inverse ? at::fft_ifft(signal, length, axis)
                              : half  ? at::fft_rfft(signal, length, axis)
                                      : at::fft_fft(signal, length, axis);
  return single(onnx_complex(spectrum, x.scalar_type()));
}

std::vector<EvalValue> stft(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  if (x.dim() != 3) ctx.fail("signal must have shape [batch_size, signal_length, 1 or 2]");
  const at::Tensor signal = signal_of(ctx, x);
  const int64_t step = ctx.input(1).item<int64_t>();
  if (step < 1) ctx.fail("frame_step must be positive");
  const at::Tensor window = ctx.optional_input(2);
  if (window.defined() && window.dim() != 1) ctx.fail("window must be 1-D");
  if (!window.defined() && !ctx.has_input(3)) ctx.fail("either window or frame_length must be given");
  const int64_t length = ctx.has_input(3) ? ctx.input(3).item<int64_t>() : window.size(0);
  if (length < 1) ctx.fail("frame_length must be positive");
  if (window.defined() && window.size(0) != length)
    ctx.fail("window has " + std::to_string(window.size(0)) + " values for frame_length " + std::to_string(length));
  if (signal.size(1) < length)
    ctx.fail("the signal (" + std::to_string(signal.size(1)) + " samples) is shorter than one frame (" +
             std::to_string(length) + ")");
  const bool half = onesided(ctx, 1, signal.is_complex());
  at::Tensor frames = signal.unfold(1, length, step);  // [batch, frames, length]
  if (window.defined()) frames = frames * window.to(at::kDouble);
  const at::Tensor spectrum = half ? at::fft_rfft(frames, c10::nullopt, -1) : at::fft_fft(frames, c10::nullopt, -1);
  return single(onnx_complex(spectrum, x.scalar_type()));
}

// A generalized cosine window  w[n] = sum_k (-1)^k a_k cos(2 pi k n / N)  of the length in input 0,
// with N = size (periodic) or size - 1 (symmetric), of type output_datatype.
std::vector<EvalValue> cosine_window(const KernelContext& ctx, std::initializer_list<double> coefficients) {
  const int64_t size = ctx.input(0).item<int64_t>();
  if (size < 0) ctx.fail("size must not be negative");
  const at::ScalarType type = scalar_type_of_onnx(static_cast<int32_t>(ctx.attr_i("output_datatype", 1)));
  const int64_t period = ctx.attr_i("periodic", 1) != 0 ? size : size - 1;
  const auto options = at::TensorOptions().dtype(at::kDouble);
  // A symmetric window of one value has no period: it is 1, as numpy's and torch's windows are.
  if (period == 0) return single(at::ones({size}, options).to(type));
  const at::Tensor phase = at::arange(size, options) * (2 * M_PI / static_cast<double>(period));
  at::Tensor w = at::zeros({size}, options);
  double sign = 1;
  int64_t k = 0;
  for (double a : coefficients) {
    w.add_(at::cos(phase * static_cast<double>(k++)), sign * a);
    sign = -sign;
  }
  return single(w.to(type));
}

std::vector<EvalValue> mel_weight_matrix(const KernelContext& ctx) {
  const int64_t mel_bins = ctx.input(0).item<int64_t>();
  const int64_t dft_length = ctx.input(1).item<int64_t>();
  const int64_t sample_rate = ctx.input(2).item<int64_t>();
  const float lower_hz = ctx.input(3).item<float>();
  const float upper_hz = ctx.input(4).item<float>();
  if (mel_bins < 1 || dft_length < 1 || sample_rate < 1)
    ctx.fail("num_mel_bins, dft_length and sample_rate must be positive");
  const at::ScalarType type = scalar_type_of_onnx(static_cast<int32_t>(ctx.attr_i("output_datatype", 1)));
  const int64_t spectrogram_bins = dft_length / 2 + 1;
  // The edges of the mel bands, evenly spaced on the mel scale, mapped back to hertz and to
  // spectrogram bins (log10(1 + hz / 700) in float, the rest in double, as ONNX's reference does).
  auto to_mel = [](float hz) { return 2595.0 * static_cast<double>(std::log10(1.0f + hz / 700.0f)); };
  const double low_mel = to_mel(lower_hz);
  const double mel_step = (to_mel(upper_hz) - low_mel) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> edge(static_cast<size_t>(mel_bins + 2));
  for (size_t i = 0; i < edge.size(); ++i) {
    const double mel = static_cast<double>(i) * mel_step + low_mel;
    const double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
    edge[i] =
        static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate)));
    if (edge[i] < 0 || edge[i] >= spectrogram_bins)
      ctx.fail("the mel band edge at " + std::to_string(hz) + " Hz lies outside the " +
               std::to_string(spectrogram_bins) + " spectrogram bins");
  }
  at::Tensor out = at::zeros({spectrogram_bins, mel_bins}, at::TensorOptions().dtype(at::kDouble));
  auto m = out.accessor<double, 2>();
  for (int64_t band = 0; band < mel_bins; ++band) {
    const int64_t left = edge[static_cast<size_t>(band)], center = edge[static_cast<size_t>(band + 1)],
                  right = edge[static_cast<size_t>(band + 2)];
    if (center == left) {
      m[center][band] = 1;
    } else {
      for (int64_t j = left; j <= center; ++j)
        m[j][band] = static_cast<double>(j - left) / static_cast<double>(center - left);
    }
    for (int64_t j = center; j < right; ++j)
      m[j][band] = static_cast<double>(right - j) / static_cast<double>(right - center);
  }
  return single(out.to(type));
}

// --- random generators ------------------------------------------------------------------------

// A generator seeded by attribute `seed` (a float: integral values seed with that integer, others
// with their bit pattern), or none (ATen's default generator) when the attribute is absent.
c10::optional<at::Generator> generator_of(const KernelContext& ctx) {
  if (!ctx.has_attr("seed")) return c10::nullopt;
  const float seed = ctx.attr_f("seed", 0);
  uint64_t value;
  if (std::nearbyint(seed) == seed && std::fabs(seed) < 9.2e18f) {
    value = static_cast<uint64_t>(static_cast<int64_t>(seed));
  } else {
    uint32_t bits;
    std::memcpy(&bits, &seed, sizeof bits);
    value = bits;
  }
  return at::make_generator<at::CPUGeneratorImpl>(value);
}

// The floating output type of RandomUniform/Normal[Like]: attribute dtype, else `fallback`.
at::ScalarType random_float_type(const KernelContext& ctx, at::ScalarType fallback) {
  const at::ScalarType type =
      ctx.has_attr("dtype") ? scalar_type_of_onnx(static_cast<int32_t>(ctx.attr_i("dtype", 1))) : fallback;
  if (type != at::kHalf && type != at::kFloat && type != at::kDouble)
    ctx.fail(std::string("the output type ") + c10::toString(type) + " is not float16, float or double");
  return type;
}

// Random values of `shape` and `type`: uniform on [low, high) or normal (mean, scale), from the
// attributes named by `uniform`.
at::Tensor random_values(const KernelContext& ctx, at::IntArrayRef shape, at::ScalarType type, bool uniform) {
  at::Tensor out = at::empty(shape, at::TensorOptions().dtype(type == at::kDouble ? at::kDouble : at::kFloat));
  if (uniform) {
    out.uniform_(ctx.attr_f("low", 0), ctx.attr_f("high", 1), generator_of(ctx));
  } else {
    out.normal_(ctx.attr_f("mean", 0), ctx.attr_f("scale", 1), generator_of(ctx));
  }
  return out.to(type);
}

Kernel random_from_shape(bool uniform) {
  return [uniform](const KernelContext& ctx) {
    if (!ctx.has_attr("shape")) ctx.fail("attribute shape is missing");
    return single(random_values(ctx, ctx.attr_ints("shape"), random_float_type(ctx, at::kFloat), uniform));
  };
}

Kernel random_like(bool uniform) {
  return [uniform](const KernelContext& ctx) {
    const at::Tensor& like = ctx.input(0);
    return single(random_values(ctx, like.sizes(), random_float_type(ctx, like.scalar_type()), uniform));
  };
}

std::vector<EvalValue> bernoulli(const KernelContext& ctx) {
  const at::Tensor& p = ctx.input(0);
  if (!at::isFloatingType(p.scalar_type()))
    ctx.fail(std::string("input is ") + c10::toString(p.scalar_type()) + ", not a floating type");
  const at::ScalarType type =
      ctx.has_attr("dtype") ? scalar_type_of_onnx(static_cast<int32_t>(ctx.attr_i("dtype", 1))) : p.scalar_type();
  const at::Tensor draws =
      at::bernoulli(p.to(p.scalar_type() == at::kDouble ? at::kDouble : at::kFloat), generator_of(ctx));
  return single(draws.to(type));
}

std::vector<EvalValue> multinomial(const KernelContext& ctx) {
  const at::Tensor& logits = ctx.input(0);
  if (logits.dim() != 2) ctx.fail("input must have shape [batch_size, class_size]");
  const at::ScalarType type = scalar_type_of_onnx(static_cast<int32_t>(ctx.attr_i("dtype", onnx::TensorProto::INT32)));
  if (type != at::kInt && type != at::kLong) ctx.fail("dtype must be int32 or int64");
  const int64_t samples = ctx.attr_i("sample_size", 1);
  if (samples < 1) ctx.fail("sample_size must be positive");
  const at::Tensor probabilities =
      at::softmax(logits.to(logits.scalar_type() == at::kDouble ? at::kDouble : at::kFloat), 1);
  return single(at::multinomial(probabilities, samples, true, generator_of(ctx)).to(type));
}

}  // namespace

void register_misc_kernels(KernelTable& table) {
  table["QuantizeLinear"] = {quantize_linear, 10, 21};
  table["DequantizeLinear"] = {dequantize_linear, 10, 21};
  table["DynamicQuantizeLinear"] = {dynamic_quantize_linear, 11};
  table["ConvInteger"] = {conv_integer, 10};
  table["QLinearConv"] = {qlinear_conv, 10};
  table["QLinearMatMul"] = {qlinear_matmul, 10};
  table["NonMaxSuppression"] = {non_max_suppression, 10};
  table["DFT"] = {dft, 17, 20};
  table["STFT"] = {stft, 17};
  table["HannWindow"] = {[](const KernelContext& ctx) { return cosine_window(ctx, {0.5, 0.5}); }, 17};
  table["HammingWindow"] = {[](const KernelContext& ctx) { return cosine_window(ctx, {25.0 / 46, 21.0 / 46}); }, 17};
  table["BlackmanWindow"] = {[](const KernelContext& ctx) { return cosine_window(ctx, {0.42, 0.5, 0.08}); }, 17};
  table["MelWeightMatrix"] = {mel_weight_matrix, 17};
  table["RandomUniform"] = {random_from_shape(true), 1};
  table["RandomNormal"] = {random_from_shape(false), 1};
  table["RandomUniformLike"] = {random_like(true), 1};
  table["RandomNormalLike"] = {random_like(false), 1};
  table["Bernoulli"] = {bernoulli, 15};
  table["Multinomial"] = {multinomial, 7};
}

}  // namespace onnxport::core::eval
