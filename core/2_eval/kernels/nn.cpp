// Conv, ConvTranspose, the pools, the normalizations, Dropout, Resize/Upsample, GridSample, the recurrent
// ops (RNN, GRU, LSTM), RoiAlign, MaxRoiPool and the two losses.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <tuple>

#include "2_eval/kernel.h"

namespace onnxport::core::eval {

namespace {

// --- shared helpers -----------------------------------------------------------------------

// An ints attribute with one value per axis, or `fallback` on every axis when absent.
std::vector<int64_t> axis_attr(const KernelContext& ctx, const char* name, size_t count, int64_t fallback) {
  auto values = ctx.attr_ints(name);
  if (values.empty()) return std::vector<int64_t>(count, fallback);
  if (values.size() != count)
    ctx.fail(std::string(name) + " has " + std::to_string(values.size()) + " values where " + std::to_string(count) +
             " are expected");
  return values;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The spatial axes 2..rank-1 of a tensor.
std::vector<int64_t> spatial_axes(const at::Tensor& x) {
  std::vector<int64_t> axes(static_cast<size_t>(std::max<int64_t>(x.dim() - 2, 0)));
  std::iota(axes.begin(), axes.end(), 2);
  return axes;
}

// A per-channel tensor shaped to broadcast against N x C x D1 x ... of rank `rank`.
at::Tensor per_channel(const at::Tensor& t, int64_t rank) {
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[1] = -1;
  return t.reshape(shape);
}

// Pads the spatial axes of an N x C x ... tensor (negative amounts crop).
at::Tensor pad_spatial(const at::Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                       double value) {
  std::vector<int64_t> pads;  // ATen's order: last axis first
  for (size_t i = begin.size(); i-- > 0;) {
    pads.push_back(begin[i]);
    pads.push_back(end[i]);
  }
  if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; })) return x;
  return at::constant_pad_nd(x, pads, value);
}

// The sliding window of a conv or pool node over the spatial axes: kernel, strides, dilations and the
// pads before and after each axis (from `pads` or `auto_pad`).
struct Window {
  std::vector<int64_t> kernel, strides, dilations, begin, end;

  size_t rank() const { return kernel.size(); }
  int64_t extent(size_t i) const { return (kernel[i] - 1) * dilations[i] + 1; }
  // Whether ATen's own padding (symmetric, at most half the kernel) expresses the pads.
  bool aten_pads() const {
    for (size_t i = 0; i < rank(); ++i)
      if (begin[i] != end[i] || begin[i] > kernel[i] / 2) return false;
    return true;
  }
  // The same window with a leading unit axis: 1-d pooling runs as 2-d.
  Window lifted() const {
    Window w = *this;
    for (auto* v : {&w.kernel, &w.strides, &w.dilations}) v->insert(v->begin(), 1);
    w.begin.insert(w.begin.begin(), 0);
    w.end.insert(w.end.begin(), 0);
    return w;
  }
};

Window read_window(const KernelContext& ctx, const at::Tensor& x, std::vector<int64_t> kernel) {
  const size_t n = kernel.size();
  if (n == 0) ctx.fail("the kernel shape is empty");
  if (x.dim() != static_cast<int64_t>(n) + 2)
    ctx.fail("input of rank " + std::to_string(x.dim()) + " for a kernel of " + std::to_string(n) + " spatial axes");
  Window w;
  w.kernel = std::move(kernel);
  w.strides = axis_attr(ctx, "strides", n, 1);
  w.dilations = axis_attr(ctx, "dilations", n, 1);
  w.begin.assign(n, 0);
  w.end.assign(n, 0);
  for (size_t i = 0; i < n; ++i)
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1)
      ctx.fail("kernel sizes, strides and dilations must be positive");
  const std::string auto_pad = ctx.attr_s("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET" || auto_pad.empty()) {
    const auto pads = axis_attr(ctx, "pads", 2 * n, 0);
    for (size_t i = 0; i < n; ++i) {
      w.begin[i] = pads[i];
      w.end[i] = pads[n + i];
      if (w.begin[i] < 0 || w.end[i] < 0) ctx.fail("negative pads");
    }
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // output = ceil(input / stride); an odd total puts the extra pad at the end (UPPER) or start (LOWER).
    for (size_t i = 0; i < n; ++i) {
      const int64_t in = x.size(static_cast<int64_t>(i) + 2);
      const int64_t out = ceil_div(in, w.strides[i]);
      const int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + w.extent(i) - in);
      w.begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.end[i] = total - w.begin[i];
    }
  } else if (auto_pad != "VALID") {
    ctx.fail("auto_pad '" + auto_pad + "' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  }
  return w;
}

// The kernel_shape attribute of a pool (required).
std::vector<int64_t> pool_kernel(const KernelContext& ctx) {
  auto kernel = ctx.attr_ints("kernel_shape");
  if (kernel.empty()) ctx.fail("kernel_shape is missing");
  if (kernel.size() > 3) ctx.fail("pooling over more than 3 spatial axes is not evaluated");
  return kernel;
}

// Output length of a pooling axis. In ceil mode a last window that would start in the end padding is
// dropped (as ONNX's reference and PyTorch do).
std::vector<int64_t> pooled_sizes(const KernelContext& ctx, const at::Tensor& x, const Window& w, bool ceil_mode) {
  std::vector<int64_t> out(w.rank());
  for (size_t i = 0; i < w.rank(); ++i) {
    const int64_t in = x.size(static_cast<int64_t>(i) + 2);
    const int64_t span = in + w.begin[i] + w.end[i] - w.extent(i);
    if (span < 0) ctx.fail("the window is larger than the padded input on spatial axis " + std::to_string(i));
    out[i] = (ceil_mode ? ceil_div(span, w.strides[i]) : span / w.strides[i]) + 1;
    if (ceil_mode && (out[i] - 1) * w.strides[i] >= in + w.begin[i]) --out[i];
  }
  return out;
}

// The input padded (or cropped at the end) so that pad-free, floor-mode ATen pooling gives exactly `out`
// windows per axis.
at::Tensor pad_for_windows(const at::Tensor& x, const Window& w, const std::vector<int64_t>& out, double value) {
  std::vector<int64_t> end(w.rank());
  for (size_t i = 0; i < w.rank(); ++i)
    end[i] = (out[i] - 1) * w.strides[i] + w.extent(i) - x.size(static_cast<int64_t>(i) + 2) - w.begin[i];
  return pad_spatial(x, w.begin, end, value);
}

// Sums over each window (2-d or 3-d, no padding).
at::Tensor window_sums(const at::Tensor& x, const Window& w) {
  if (w.rank() == 2) return at::avg_pool2d(x, w.kernel, w.strides, 0, false, true, 1);
  return at::avg_pool3d(x, w.kernel, w.strides, 0, false, true, 1);
}

// Runs a 2-d/3-d pooling body on x, lifting 1-d inputs to 2-d.
template <class Body>
at::Tensor pool_lifting_1d(const at::Tensor& x, const Window& w, const std::vector<int64_t>& out, Body body) {
  if (w.rank() != 1) return body(x, w, out);
  std::vector<int64_t> out2 = out;
  out2.insert(out2.begin(), 1);
  return body(x.unsqueeze(2), w.lifted(), out2).squeeze(2);
}

// --- Conv, ConvTranspose ------------------------------------------------------------------

void check_kernel_shape(const KernelContext& ctx, const std::vector<int64_t>& kernel) {
  const auto given = ctx.attr_ints("kernel_shape");
  if (!given.empty() && given != kernel) ctx.fail("kernel_shape disagrees with the weight's shape");
}

std::vector<EvalValue> conv(const KernelContext& ctx) {
  const at::Tensor x = widened(ctx.input(0));
  const at::Tensor weight = widened(ctx.input(1)).to(x.scalar_type());
  at::Tensor bias = ctx.optional_input(2);
  if (bias.defined()) bias = bias.to(x.scalar_type());
  if (weight.dim() < 3) ctx.fail("the weight must have rank 3 or more");
  const std::vector<int64_t> kernel(weight.sizes().begin() + 2, weight.sizes().end());
  check_kernel_shape(ctx, kernel);
  const Window w = read_window(ctx, x, kernel);
  const bool aten_pads = std::equal(w.begin.begin(), w.begin.end(), w.end.begin());
  const at::Tensor input = aten_pads ? x : pad_spatial(x, w.begin, w.end, 0);
  const std::vector<int64_t> padding = aten_pads ? w.begin : std::vector<int64_t>(w.rank(), 0);
  auto y = at::convolution(input, weight, bias, w.strides, padding, w.dilations, false,
                           std::vector<int64_t>(w.rank(), 0), ctx.attr_i("group", 1));
  return single(y.to(ctx.input(0).scalar_type()));
}

std::vector<EvalValue> conv_transpose(const KernelContext& ctx) {
  const at::Tensor x = widened(ctx.input(0));
  const at::Tensor weight = widened(ctx.input(1)).to(x.scalar_type());
  at::Tensor bias = ctx.optional_input(2);
  if (bias.defined()) bias = bias.to(x.scalar_type());
  if (weight.dim() < 3 || weight.dim() != x.dim()) ctx.fail("the weight's rank must match the input's (3 or more)");
  const size_t n = static_cast<size_t>(x.dim() - 2);
  const std::vector<int64_t> kernel(weight.sizes().begin() + 2, weight.sizes().end());
  check_kernel_shape(ctx, kernel);
  const auto strides = axis_attr(ctx, "strides", n, 1);
  const auto dilations = axis_attr(ctx, "dilations", n, 1);
  const auto output_padding = axis_attr(ctx, "output_padding", n, 0);
  for (auto p : output_padding)
    if (p < 0) ctx.fail("negative output_padding");
  const int64_t group = ctx.attr_i("group", 1);
  const std::string auto_pad = ctx.attr_s("auto_pad", "NOTSET");
  auto output_shape = ctx.attr_ints("output_shape");
  if (output_shape.size() == n + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != n) ctx.fail("output_shape has the wrong number of values");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!same && auto_pad != "NOTSET" && !auto_pad.empty() && auto_pad != "VALID")
    ctx.fail("auto_pad '" + auto_pad + "' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  const auto pads = axis_attr(ctx, "pads", 2 * n, 0);

  // Per axis: the full output length (every input position's window plus output_padding), where the
  // result starts in it and the result's length.
  std::vector<int64_t> full(n), begin(n), out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = x.size(static_cast<int64_t>(i) + 2);
    full[i] = strides[i] * (in - 1) + (kernel[i] - 1) * dilations[i] + 1 + output_padding[i];
    if (!output_shape.empty() || same) {
      out[i] = output_shape.empty() ? in * strides[i] : output_shape[i];
      const int64_t total = std::max<int64_t>(0, full[i] - out[i]);
      // Opset 11 puts the odd pad at the end for SAME_UPPER; opset 1's text put it at the start.
      const bool small_first = ctx.opset() >= 11 ? auto_pad == "SAME_UPPER" : auto_pad != "SAME_UPPER";
      begin[i] = small_first ? total / 2 : total - total / 2;
    } else if (auto_pad == "VALID") {
      begin[i] = 0;
      out[i] = full[i];
    } else {
      begin[i] = pads[i];
      out[i] = full[i] - pads[i] - pads[n + i];
      if (pads[i] < 0 || pads[n + i] < 0) ctx.fail("negative pads");
    }
    if (out[i] < 0) ctx.fail("the output would have a negative size");
  }
  bool aten_pads = true;  // symmetric pads and an output_padding ATen accepts
  for (size_t i = 0; i < n; ++i)
    aten_pads = aten_pads && full[i] - out[i] == 2 * begin[i] && output_padding[i] < std::max(strides[i], dilations[i]);
  at::Tensor y;
  if (aten_pads) {
    y = at::convolution(x, weight, bias, strides, begin, dilations, true, output_padding, group);
  } else {
    y = at::convolution(x, weight, c10::nullopt, strides, std::vector<int64_t>(n, 0), dilations, true,
                        std::vector<int64_t>(n, 0), group);
    std::vector<int64_t> crop_begin(n), end(n);
    for (size_t i = 0; i < n; ++i) {
      crop_begin[i] = -begin[i];
      end[i] = out[i] + begin[i] - y.size(static_cast<int64_t>(i) + 2);
    }
    y = pad_spatial(y, crop_begin, end, 0);
    if (bias.defined()) y = y + per_channel(bias, y.dim());
  }
  return single(y.to(ctx.input(0).scalar_type()));
}

// --- pooling ------------------------------------------------------------------------------

// ATen's argmax positions (flat over each, possibly padded, spatial plane) as ONNX's: flat over the
// whole unpadded N x C x ... input, spatial axes in row-major (storage_order 0) or column-major order.
at::Tensor onnx_pool_indices(at::Tensor idx, const std::vector<int64_t>& plane, const std::vector<int64_t>& begin,
                             const std::vector<int64_t>& in, bool column_major) {
  const size_t n = plane.size();
  const bool same_layout = plane == in && std::all_of(begin.begin(), begin.end(), [](int64_t b) { return b == 0; });
  if (!same_layout || column_major) {
    std::vector<at::Tensor> coords(n);
    at::Tensor rest = idx;
    for (size_t i = n; i-- > 0;) {
      coords[i] = rest.remainder(plane[i]) - begin[i];
      rest = rest.div(plane[i], "floor");
    }
    idx = at::zeros_like(idx);
    for (size_t k = 0; k < n; ++k) {
      const size_t i = column_major ? n - 1 - k : k;
      idx = idx * in[i] + coords[i];
    }
  }
  const int64_t plane_size = std::accumulate(in.begin(), in.end(), int64_t{1}, std::multiplies<>());
  std::vector<int64_t> shape(n + 2, 1);
  shape[0] = idx.size(0);
  shape[1] = idx.size(1);
  const auto offsets = at::arange(idx.size(0) * idx.size(1), idx.options()).reshape(shape) * plane_size;
  return idx + offsets;
}

std::vector<EvalValue> max_pool(const KernelContext& ctx) {
  const at::Tensor& x0 = ctx.input(0);
  const Window w = read_window(ctx, x0, pool_kernel(ctx));
  const bool ceil_mode = ctx.attr_i("ceil_mode", 0) != 0;
  const bool column_major = ctx.attr_i("storage_order", 0) != 0;
  const auto out = pooled_sizes(ctx, x0, w, ceil_mode);
  // int8/uint8 (opset 12) are pooled as float, which holds them exactly.
  const at::Tensor x = at::isFloatingType(x0.scalar_type()) ? widened(x0) : x0.to(at::kFloat);
  at::Tensor indices;
  auto body = [&](const at::Tensor& in, const Window& win, const std::vector<int64_t>& sizes) {
    const bool aten_pads = win.aten_pads();
    const at::Tensor input = aten_pads ? in : pad_for_windows(in, win, sizes, -std::numeric_limits<double>::infinity());
    const std::vector<int64_t> padding = aten_pads ? win.begin : std::vector<int64_t>(win.rank(), 0);
    at::Tensor y, idx;
    if (win.rank() == 2)
      std::tie(y, idx) =
          at::max_pool2d_with_indices(input, win.kernel, win.strides, padding, win.dilations, ceil_mode && aten_pads);
    else
      std::tie(y, idx) =
          at::max_pool3d_with_indices(input, win.kernel, win.strides, padding, win.dilations, ceil_mode && aten_pads);
    if (ctx.wants_output(1)) {
      std::vector<int64_t> plane, begin, in_sizes;
      for (size_t i = 0; i < win.rank(); ++i) {
        plane.push_back(input.size(static_cast<int64_t>(i) + 2));
        begin.push_back(aten_pads ? 0 : win.begin[i]);
        in_sizes.push_back(in.size(static_cast<int64_t>(i) + 2));
      }
      indices = onnx_pool_indices(idx, plane, begin, in_sizes, column_major);
    }
    return y;
  };
  auto y = pool_lifting_1d(x, w, out, body).to(x0.scalar_type());
  if (indices.defined() && w.rank() == 1) indices = indices.squeeze(2);
  return {EvalValue(y), EvalValue(indices)};
}

std::vector<EvalValue> average_pool(const KernelContext& ctx) {
  const at::Tensor& x0 = ctx.input(0);
  const Window w = read_window(ctx, x0, pool_kernel(ctx));
  for (auto d : w.dilations)
    if (d != 1) ctx.fail("dilations are not evaluated for AveragePool");
  const bool ceil_mode = ctx.attr_i("ceil_mode", 0) != 0;
  const bool include_pad = ctx.opset() >= 7 && ctx.attr_i("count_include_pad", 0) != 0;
  const auto out = pooled_sizes(ctx, x0, w, ceil_mode);
  auto body = [&](const at::Tensor& in, const Window& win, const std::vector<int64_t>& sizes) {
    if (win.aten_pads()) {
      if (win.rank() == 2) return at::avg_pool2d(in, win.kernel, win.strides, win.begin, ceil_mode, include_pad);
      return at::avg_pool3d(in, win.kernel, win.strides, win.begin, ceil_mode, include_pad);
    }
    // Window sums over the explicitly padded input, divided by how many of each window's elements count:
    // input elements, plus pads when count_include_pad (never the ceil-mode overhang).
    const auto sums = window_sums(pad_for_windows(in, win, sizes, 0), win);
    at::Tensor counts = at::ones({}, sums.options());
    for (size_t i = 0; i < win.rank(); ++i) {
      const int64_t length = in.size(static_cast<int64_t>(i) + 2);
      const int64_t lo = include_pad ? -win.begin[i] : 0, hi = include_pad ? length + win.end[i] : length;
      const auto start = at::arange(sizes[i], sums.options()) * win.strides[i] - win.begin[i];
      const auto count = at::clamp_max(start + win.kernel[i], hi) - at::clamp_min(start, lo);
      std::vector<int64_t> shape(win.rank(), 1);
      shape[i] = sizes[i];
      counts = counts * count.reshape(shape);
    }
    return sums / counts;
  };
  return single(pool_lifting_1d(widened(x0), w, out, body).to(x0.scalar_type()));
}

// The p of LpPool / GlobalLpPool: a float attribute in version 1, an int from version 2.
double lp_order(const KernelContext& ctx) {
  const double p = ctx.opset() < 2 ? ctx.attr_f("p", 2.0f) : static_cast<double>(ctx.attr_i("p", 2));
  if (!(p > 0)) ctx.fail("p must be positive");
  return p;
}

std::vector<EvalValue> lp_pool(const KernelContext& ctx) {
  const at::Tensor& x0 = ctx.input(0);
  const Window w = read_window(ctx, x0, pool_kernel(ctx));
  const double p = lp_order(ctx);
  // LpPool-18 added ceil_mode and dilations.
  if (ctx.attr_i("ceil_mode", 0) != 0) ctx.fail("ceil_mode is not evaluated for LpPool");
  for (auto d : w.dilations)
    if (d != 1) ctx.fail("dilations are not evaluated for LpPool");
  const auto out = pooled_sizes(ctx, x0, w, false);
  auto body = [&](const at::Tensor& in, const Window& win, const std::vector<int64_t>& sizes) {
    return window_sums(pad_for_windows(in.abs().pow(p), win, sizes, 0), win).pow(1.0 / p);
  };
  return single(pool_lifting_1d(widened(x0), w, out, body).to(x0.scalar_type()));
}

enum class GlobalPool { average, max, lp };

std::vector<EvalValue> global_pool(const KernelContext& ctx, GlobalPool kind) {
  const at::Tensor& x0 = ctx.input(0);
  if (x0.dim() < 2) ctx.fail("the input must have rank 2 or more");
  if (x0.dim() == 2) return single(x0);
  const at::Tensor x = widened(x0);
  const auto axes = spatial_axes(x);
  at::Tensor y;
  switch (kind) {
    case GlobalPool::average: y = x.mean(axes, true); break;
    case GlobalPool::max: y = x.amax(axes, true); break;
    case GlobalPool::lp: y = at::linalg_vector_norm(x, lp_order(ctx), axes, true); break;
  }
  return single(y.to(x0.scalar_type()));
}

std::vector<EvalValue> max_unpool(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const at::Tensor indices = ctx.input(1).to(at::kLong);
  const auto kernel = pool_kernel(ctx);
  const size_t n = kernel.size();
  if (x.dim() != static_cast<int64_t>(n) + 2) ctx.fail("the input's rank does not match kernel_shape");
  if (!indices.sizes().equals(x.sizes())) ctx.fail("the indices' shape differs from the input's");
  const auto strides = axis_attr(ctx, "strides", n, 1);
  const auto pads = axis_attr(ctx, "pads", 2 * n, 0);
  // The indices address the tensor MaxPool saw, whose shape follows from the attributes; an explicit
  // output_shape (at least as large) extends it with zeros at the end of each axis (ONNX's reference).
  std::vector<int64_t> inferred{x.size(0), x.size(1)};
  for (size_t i = 0; i < n; ++i)
    inferred.push_back((x.size(static_cast<int64_t>(i) + 2) - 1) * strides[i] + kernel[i] - pads[i] - pads[n + i]);
  const int64_t total = std::accumulate(inferred.begin(), inferred.end(), int64_t{1}, std::multiplies<>());
  const auto flat_indices = indices.reshape({-1});
  if (flat_indices.numel() > 0 &&
      (flat_indices.min().item<int64_t>() < 0 || flat_indices.max().item<int64_t>() >= total))
    ctx.fail("an index is outside the unpooled tensor");
  auto y = at::zeros({total}, x.options()).index_put_({flat_indices}, x.reshape({-1})).reshape(inferred);
  if (ctx.has_input(2)) {
    const auto shape = int_values(ctx.input(2));
    if (shape.size() != inferred.size()) ctx.fail("output_shape has the wrong number of values");
    std::vector<int64_t> zeros(n, 0), extra(n);
    for (size_t i = 0; i < inferred.size(); ++i)
      if (shape[i] < inferred[i] || (i < 2 && shape[i] != inferred[i]))
        ctx.fail("output_shape is smaller than the shape the attributes give");
    for (size_t i = 0; i < n; ++i) extra[i] = shape[i + 2] - inferred[i + 2];
    y = pad_spatial(y, zeros, extra, 0);
  }
  return single(y);
}

// --- normalization ------------------------------------------------------------------------

std::vector<EvalValue> batch_norm(const KernelContext& ctx) {
  const at::Tensor& x0 = ctx.input(0);
  if (x0.dim() < 2) ctx.fail("the input must have rank 2 or more");
  const at::Tensor x = widened(x0);
  const auto type = x.scalar_type();
  const auto scale = ctx.input(1).to(type), bias = ctx.input(2).to(type);
  const auto mean = ctx.input(3).to(type), var = ctx.input(4).to(type);
  const double eps = ctx.attr_f("epsilon", 1e-5f);
  // From opset 14 an attribute says training mode; before, asking for the statistics outputs does.
  bool training = ctx.opset() >= 14 && ctx.attr_i("training_mode", 0) != 0;
  for (size_t i = 1; i < ctx.output_count() && ctx.opset() < 14; ++i) training = training || ctx.wants_output(i);
  if (!training) {
    for (size_t i = 1; i < ctx.output_count(); ++i)
      if (ctx.wants_output(i))
        ctx.fail("the running statistics outputs exist only in training mode (training_mode from opset 14)");
    if (ctx.opset() < 9 && ctx.attr_i("spatial", 1) == 0) {
      // Per-activation statistics of shape C x D1 x ... x Dn.
      auto y = (x - mean.unsqueeze(0)) / (var.unsqueeze(0) + eps).sqrt() * scale.unsqueeze(0) + bias.unsqueeze(0);
      return single(y.to(x0.scalar_type()));
    }
    return single(at::batch_norm(x, scale, bias, mean, var, false, 0.0, eps, false).to(x0.scalar_type()));
  }
  std::vector<int64_t> axes{0};
  for (int64_t a = 2; a < x.dim(); ++a) axes.push_back(a);
  const auto current_mean = x.mean(axes);
  const auto current_var = x.var(axes, /*unbiased=*/false);
  auto y = at::batch_norm(x, scale, bias, current_mean, current_var, false, 0.0, eps, false).to(x0.scalar_type());
  const double momentum = ctx.attr_f("momentum", 0.9f);
  const auto stat_type = ctx.input(3).scalar_type();
  auto running_mean = (mean * momentum + current_mean * (1 - momentum)).to(stat_type);
  auto running_var = (var * momentum + current_var * (1 - momentum)).to(ctx.input(4).scalar_type());
  if (ctx.opset() >= 14) return {EvalValue(y), EvalValue(running_mean), EvalValue(running_var)};
  // Before 14 the batch's own statistics follow (saved_mean, saved_var: for gradients).
  return {EvalValue(y), EvalValue(running_mean), EvalValue(running_var), EvalValue(current_mean.to(stat_type)),
          EvalValue(current_var.to(stat_type))};
}

std::vector<EvalValue> instance_norm(const KernelContext& ctx) {
  const at::Tensor& x0 = ctx.input(0);
  if (x0.dim() < 3) ctx.fail("the input must have rank 3 or more");
  const at::Tensor x = widened(x0);
  const auto scale = ctx.input(1).to(x.scalar_type()), bias = ctx.input(2).to(x.scalar_type());
  auto y = at::instance_norm(x, scale, bias, {}, {}, true, 0.0, ctx.attr_f("epsilon", 1e-5f), false);
  return single(y.to(x0.scalar_type()));
}

std::vector<EvalValue> layer_norm(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const int64_t axis = normalize_axis(ctx.attr_i("axis", -1), x.dim(), ctx);
  const auto stash = scalar_type_of_onnx(static_cast<int32_t>(ctx.attr_i("stash_type", 1)));
  if (!at::isFloatingType(stash)) ctx.fail("stash_type must be a floating type");
  const std::vector<int64_t> normalized_shape(x.sizes().begin() + axis, x.sizes().end());
  // Stage one (standardization) runs in the stash type; scale and bias apply in X's type.
  auto [normalized, mean, inv_std_dev] = at::native_layer_norm(widened(x.to(stash)), normalized_shape, c10::nullopt,
                                                               c10::nullopt, ctx.attr_f("epsilon", 1e-5f));
  auto y = normalized.to(x.scalar_type()) * ctx.input(1);
  if (ctx.has_input(2)) y = y + ctx.input(2);
  return {EvalValue(y), EvalValue(mean.to(stash)), EvalValue(inv_std_dev.to(stash))};
}

std::vector<EvalValue> lp_normalization(const KernelContext& ctx) {
  const at::Tensor& x0 = ctx.input(0);
  const int64_t axis = normalize_axis(ctx.attr_i("axis", -1), x0.dim(), ctx);
  const int64_t p = ctx.attr_i("p", 2);
  if (p != 1 && p != 2) ctx.fail("p must be 1 or 2");
  const at::Tensor x = widened(x0);
  return single((x / at::linalg_vector_norm(x, p, {axis}, true)).to(x0.scalar_type()));
}

std::vector<EvalValue> mean_variance_normalization(const KernelContext& ctx) {
  const at::Tensor& x0 = ctx.input(0);
  const at::Tensor x = widened(x0);
  std::vector<int64_t> axes;
  for (auto a : ctx.attr_ints("axes", {0, 2, 3})) axes.push_back(normalize_axis(a, x.dim(), ctx));
  // ONNX's function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9).
  const auto mean = x.mean(axes, true);
  const auto variance = (x * x).mean(axes, true) - mean * mean;
  return single(((x - mean) / (variance.sqrt() + 1e-9)).to(x0.scalar_type()));
}

std::vector<EvalValue> lrn(const KernelContext& ctx) {
  const at::Tensor& x0 = ctx.input(0);
  if (x0.dim() < 2) ctx.fail("the input must have rank 2 or more");
  const int64_t size = ctx.attr_i("size", 0);
  if (size < 1) ctx.fail("size must be positive");
  const double alpha = ctx.attr_f("alpha", 1e-4f), beta = ctx.attr_f("beta", 0.75f), bias = ctx.attr_f("bias", 1.0f);
  const at::Tensor x = widened(x0);
  // Sums of squares over channels [c - floor((size-1)/2), c + ceil((size-1)/2)] as a (size x 1) window sum.
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const auto squares = (x * x).reshape({x.size(0), 1, x.size(1), -1});
  const auto sums =
      at::avg_pool2d(at::constant_pad_nd(squares, {0, 0, before, after}), {size, 1}, {1, 1}, 0, false, true, 1);
  auto y = x / (bias + alpha / static_cast<double>(size) * sums.reshape(x.sizes())).pow(beta);
  return single(y.to(x0.scalar_type()));
}

// --- Resize, Upsample ---------------------------------------------------------------------

enum class Interpolation { nearest, linear, cubic };

struct ResizeAttrs {
  Interpolation mode = Interpolation::nearest;
  std::string coordinates = "asymmetric";  // coordinate_transformation_mode
  std::string nearest = "simple";          // nearest_mode; "simple" is the rule before opset 11
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0;
};

Interpolation interpolation_of(const KernelContext& ctx, bool cubic_allowed) {
  const std::string mode = ctx.attr_s("mode", "nearest");
  if (mode == "nearest") return Interpolation::nearest;
  if (mode == "linear") return Interpolation::linear;
  if (mode == "cubic" && cubic_allowed) return Interpolation::cubic;
  ctx.fail("mode '" + mode + "' is not evaluated");
}

// How one axis of the output samples the input axis: per tap (1 nearest, 2 linear, 4 cubic) the input
// index and weight of each output position, and which positions fall outside the crop (extrapolated).
struct AxisTaps {
  std::vector<std::vector<int64_t>> index;
  std::vector<std::vector<double>> weight;
  std::vector<bool> outside;

  // Whether the output axis is the input axis unchanged.
  bool identity(int64_t in) const {
    if (static_cast<int64_t>(outside.size()) != in) return false;
    for (int64_t o = 0; o < in; ++o) {
      double at_o = 0;
      for (size_t k = 0; k < index.size(); ++k) {
        if (index[k][o] == o)
          at_o += weight[k][o];
        else if (weight[k][o] != 0)
          return false;
      }
      if (at_o != 1) return false;
    }
    return true;
  }
};

// The input coordinate of output position x. `resized` is the output length before rounding (input
// length x scale, times the roi's extent for tf_crop_and_resize): ONNX's reference, which made the
// backend tests, uses it rather than the rounded length in align_corners and tf_crop_and_resize.
// pytorch_half_pixel maps a length-1 output to 0, as the spec and onnxruntime do.
double source_coordinate(const KernelContext& ctx, const std::string& mode, double x, int64_t in, int64_t out,
                         double scale, double resized, double roi_start, double roi_end) {
  if (mode == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (mode == "asymmetric") return x / scale;
  if (mode == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (mode == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (mode == "align_corners") return resized == 1 ? 0.0 : x * static_cast<double>(in - 1) / (resized - 1);
  if (mode == "tf_crop_and_resize")
    return resized > 1 ? roi_start * static_cast<double>(in - 1) +
                             x * (roi_end - roi_start) * static_cast<double>(in - 1) / (resized - 1)
                       : 0.5 * (roi_start + roi_end) * static_cast<double>(in - 1);
  ctx.fail("coordinate_transformation_mode '" + mode + "' is not evaluated");
}

// A nearest tap's input coordinate in float32, as ONNX Runtime and ONNX's reference compute it
// from the float32 scales (x / scale in double lands below an integer where float lands on it:
// 20 / 1.8181819f is 10.99999997 in double, 11 in float), for the modes that divide by the scale.
std::optional<double> nearest_source_coordinate_f32(const std::string& mode, int64_t x, int64_t out, double scale) {
  const float xf = static_cast<float>(x), s = static_cast<float>(scale);
  if (mode == "asymmetric") return xf / s;
  if (mode == "half_pixel") return (xf + 0.5f) / s - 0.5f;
  if (mode == "pytorch_half_pixel") return out > 1 ? (xf + 0.5f) / s - 0.5f : 0.0f;
  if (mode == "tf_half_pixel_for_nn") return (xf + 0.5f) / s;
  return std::nullopt;
}

int64_t nearest_index(const KernelContext& ctx, const std::string& rule, double x, double scale) {
  const double below = std::floor(x), fraction = x - below;
  const auto b = static_cast<int64_t>(below);
  if (fraction == 0) return b;
  if (rule == "round_prefer_floor") return fraction <= 0.5 ? b : b + 1;
  if (rule == "round_prefer_ceil") return fraction < 0.5 ? b : b + 1;
  if (rule == "floor") return b;
  if (rule == "ceil") return b + 1;
  if (rule == "simple") return scale < 1 ? b + 1 : b;  // before opset 11: ceil when downsampling
  ctx.fail("nearest_mode '" + rule + "' is not evaluated");
}

// Keys' cubic convolution kernel with coefficient a at distance s.
double cubic_weight(double s, double a) {
  s = std::abs(s);
  if (s <= 1) return ((a + 2) * s - (a + 3)) * s * s + 1;
  if (s < 2) return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
  return 0;
}

AxisTaps axis_taps(const KernelContext& ctx, const ResizeAttrs& a, int64_t in, int64_t out, double scale,
                   double resized, double roi_start, double roi_end) {
  const size_t taps = a.mode == Interpolation::nearest ? 1 : a.mode == Interpolation::linear ? 2 : 4;
  AxisTaps t;
  t.index.assign(taps, std::vector<int64_t>(static_cast<size_t>(out)));
  t.weight.assign(taps, std::vector<double>(static_cast<size_t>(out)));
  t.outside.assign(static_cast<size_t>(out), false);
  const bool crop = a.coordinates == "tf_crop_and_resize";
  for (int64_t o = 0; o < out; ++o) {
    const double x =
        source_coordinate(ctx, a.coordinates, static_cast<double>(o), in, out, scale, resized, roi_start, roi_end);
    t.outside[o] = crop && (x < 0 || x > static_cast<double>(in - 1));
    if (a.mode == Interpolation::nearest) {
      const double at = nearest_source_coordinate_f32(a.coordinates, o, out, scale).value_or(x);
      t.index[0][o] = std::clamp<int64_t>(nearest_index(ctx, a.nearest, at, scale), 0, in - 1);
      t.weight[0][o] = 1;
      continue;
    }
    const double below = std::floor(x), fraction = x - below;
    const int64_t first = static_cast<int64_t>(below) - (a.mode == Interpolation::cubic ? 1 : 0);
    double total = 0;
    for (size_t k = 0; k < taps; ++k) {
      const int64_t i = first + static_cast<int64_t>(k);
      double w = a.mode == Interpolation::linear ? (k == 0 ? 1 - fraction : fraction)
                                                 : cubic_weight(static_cast<double>(i) - x, a.cubic_a);
      if (a.exclude_outside && (i < 0 || i >= in)) w = 0;
      t.index[k][o] = std::clamp<int64_t>(i, 0, in - 1);  // beyond the edges: the edge values
      t.weight[k][o] = w;
      total += w;
    }
    if (a.exclude_outside && total != 0)
      for (size_t k = 0; k < taps; ++k) t.weight[k][o] /= total;
  }
  return t;
}

at::Tensor apply_taps(const at::Tensor& x, int64_t axis, const AxisTaps& t) {
  std::vector<int64_t> shape(static_cast<size_t>(x.dim()), 1);
  shape[static_cast<size_t>(axis)] = -1;
  at::Tensor y;
  for (size_t k = 0; k < t.index.size(); ++k) {
    auto gathered = x.index_select(axis, at::tensor(t.index[k], at::kLong));
    if (t.index.size() > 1)
      gathered = gathered * at::tensor(t.weight[k], at::kDouble).to(x.scalar_type()).reshape(shape);
    y = y.defined() ? y + gathered : gathered;
  }
  return y;
}

// Resizes x to `out` (per axis) with the given scales (output/input when sizes were given) and, for
// tf_crop_and_resize, roi [starts..., ends...].
at::Tensor resized(const KernelContext& ctx, const at::Tensor& x0, const ResizeAttrs& a,
                   const std::vector<int64_t>& out, const std::vector<double>& scales, const std::vector<double>& roi) {
  if (a.mode != Interpolation::nearest && !at::isFloatingType(x0.scalar_type()))
    ctx.fail("linear and cubic resizing of " + std::string(c10::toString(x0.scalar_type())) + " is not evaluated");
  require_fits_in_memory(ctx, out, x0.scalar_type());
  at::Tensor y = a.mode == Interpolation::nearest ? x0 : widened(x0);
  const int64_t rank = x0.dim();
  at::Tensor outside;
  for (int64_t d = 0; d < rank; ++d) {
    const size_t i = static_cast<size_t>(d);
    const double start = roi.empty() ? 0 : roi[i], end = roi.empty() ? 1 : roi[i + static_cast<size_t>(rank)];
    const double resized_length = static_cast<double>(x0.size(d)) * scales[i] * (roi.empty() ? 1 : end - start);
    const auto taps = axis_taps(ctx, a, x0.size(d), out[i], scales[i], resized_length, start, end);
    if (!taps.identity(x0.size(d))) y = apply_taps(y, d, taps);
    if (std::find(taps.outside.begin(), taps.outside.end(), true) != taps.outside.end()) {
      std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
      shape[i] = -1;
      std::vector<uint8_t> flags(taps.outside.begin(), taps.outside.end());
      auto axis_outside = at::tensor(flags, at::kByte).to(at::kBool).reshape(shape);
      outside = outside.defined() ? at::logical_or(outside, axis_outside) : axis_outside;
    }
  }
  if (outside.defined()) y = at::where(outside, at::scalar_tensor(a.extrapolation, y.options()), y);
  return y.to(x0.scalar_type());
}

// Output sizes from scales: floor(input x scale), over the roi's extent for tf_crop_and_resize.
std::vector<int64_t> scaled_sizes(const KernelContext& ctx, const at::Tensor& x, const std::vector<double>& scales,
                                  const std::vector<double>& roi) {
  if (static_cast<int64_t>(scales.size()) != x.dim()) ctx.fail("scales must have one value per input axis");
  std::vector<int64_t> out;
  for (size_t i = 0; i < scales.size(); ++i) {
    if (!(scales[i] > 0)) ctx.fail("scales must be positive");
    const double extent = roi.empty() ? 1 : roi[i + scales.size()] - roi[i];
    // In float, as ONNX's shape inference and ONNX Runtime compute it: float32 scales such as
    // 7/3 = 2.3333333f give 7 from 3 in float, 6.99999976 (floored to 6) in double.
    const float size = std::floor(static_cast<float>(x.size(static_cast<int64_t>(i))) * static_cast<float>(scales[i]) *
                                  static_cast<float>(extent));
    if (!(size >= 0 && size < 9.2e18f)) ctx.fail("scales give axis " + std::to_string(i) + " no size");
    out.push_back(static_cast<int64_t>(size));
  }
  return out;
}

std::vector<double> double_values(const at::Tensor& t) {
  auto c = t.to(at::kDouble).contiguous().reshape({-1});
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

std::vector<EvalValue> resize(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  ResizeAttrs a;
  if (ctx.opset() < 11) {  // opset 10: X, scales; asymmetric coordinates
    a.mode = interpolation_of(ctx, false);
    const auto scales = double_values(ctx.input(1));
    return single(resized(ctx, x, a, scaled_sizes(ctx, x, scales, {}), scales, {}));
  }
  a.mode = interpolation_of(ctx, true);
  // Resize-18 and -19 added attributes the kernel does not compute; their defaults keep the
  // earlier meaning.
  if (ctx.attr_i("antialias", 0) != 0) ctx.fail("antialias is not evaluated");
  if (ctx.has_attr("axes")) ctx.fail("axes are not evaluated");
  if (ctx.attr_s("keep_aspect_ratio_policy", "stretch") != "stretch")
    ctx.fail("keep_aspect_ratio_policy other than stretch is not evaluated");
  a.coordinates = ctx.attr_s("coordinate_transformation_mode", "half_pixel");
  a.nearest = ctx.attr_s("nearest_mode", "round_prefer_floor");
  if (a.nearest == "simple") ctx.fail("nearest_mode 'simple' is not an ONNX value");
  a.cubic_a = ctx.attr_f("cubic_coeff_a", -0.75f);
  a.exclude_outside = ctx.attr_i("exclude_outside", 0) != 0;
  a.extrapolation = ctx.attr_f("extrapolation_value", 0.0f);
  std::vector<double> roi;
  if (a.coordinates == "tf_crop_and_resize") {
    if (!ctx.has_input(1)) ctx.fail("tf_crop_and_resize needs roi");
    roi = double_values(ctx.input(1));
    if (static_cast<int64_t>(roi.size()) != 2 * x.dim()) ctx.fail("roi must have two values per input axis");
  }
  const bool has_scales = ctx.has_input(2) && ctx.input(2).numel() > 0;
  const bool has_sizes = ctx.has_input(3) && ctx.input(3).numel() > 0;
  if (has_scales == has_sizes) ctx.fail("exactly one of scales and sizes must be given");
  if (has_scales) {
    const auto scales = double_values(ctx.input(2));
    return single(resized(ctx, x, a, scaled_sizes(ctx, x, scales, roi), scales, roi));
  }
  const auto sizes = int_values(ctx.input(3));
  if (static_cast<int64_t>(sizes.size()) != x.dim()) ctx.fail("sizes must have one value per input axis");
  std::vector<double> scales;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0) ctx.fail("negative sizes");
    const int64_t in = x.size(static_cast<int64_t>(i));
    if (in == 0 && sizes[i] != 0) ctx.fail("an empty axis cannot be resized to a nonzero size");
    scales.push_back(in == 0 ? 1.0 : static_cast<double>(sizes[i]) / static_cast<double>(in));
  }
  // With sizes, the roi-relative scale is the output over the roi's extent.
  if (!roi.empty())
    for (size_t i = 0; i < scales.size(); ++i)
      if (roi[i + scales.size()] != roi[i]) scales[i] /= roi[i + scales.size()] - roi[i];
  return single(resized(ctx, x, a, sizes, scales, roi));
}

std::vector<EvalValue> upsample(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  ResizeAttrs a;
  a.mode = interpolation_of(ctx, false);
  std::vector<double> scales;
  if (ctx.opset() < 9) {
    for (float s : ctx.attr_floats("scales")) scales.push_back(s);
  } else {
    scales = double_values(ctx.input(1));
  }
  return single(resized(ctx, x, a, scaled_sizes(ctx, x, scales, {}), scales, {}));
}

// --- Col2Im (opset 18) ---------------------------------------------------------------------

std::vector<EvalValue> col2im(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const std::vector<int64_t> image = int_values(ctx.input(1)), block = int_values(ctx.input(2));
  if (x.dim() != 3 || image.size() != 2 || block.size() != 2)
    ctx.fail("only 2-d images of (N, C * kh * kw, L) columns are evaluated");
  const auto dilations = axis_attr(ctx, "dilations", 2, 1), strides = axis_attr(ctx, "strides", 2, 1),
             pads = axis_attr(ctx, "pads", 4, 0);
  if (pads[0] != pads[2] || pads[1] != pads[3]) ctx.fail("uneven pads are not evaluated");
  return single(at::col2im(widened(x), image, block, dilations, {pads[0], pads[1]}, strides).to(x.scalar_type()));
}

// --- GridSample ---------------------------------------------------------------------------

std::vector<EvalValue> grid_sample(const KernelContext& ctx) {
  const at::Tensor& x0 = ctx.input(0);
  // GridSample-20 is N-d; ATen's grid_sampler computes 4-d and 5-d (not 5-d cubic).
  const int64_t rank = x0.dim();
  if ((rank != 4 && !(rank == 5 && ctx.opset() >= 20)) || ctx.input(1).dim() != rank)
    ctx.fail("only 4-d inputs and grids are evaluated (5-d from opset 20)");
  // GridSample-20 renamed the modes bilinear and bicubic to linear and cubic (its default is linear).
  const bool renamed = ctx.opset() >= 20;
  const std::string mode = ctx.attr_s("mode", renamed ? "linear" : "bilinear");
  const std::string padding = ctx.attr_s("padding_mode", "zeros");
  const int64_t interpolation = mode == (renamed ? "linear" : "bilinear")  ? 0
                                : mode == "nearest"                        ? 1
                                : mode == (renamed ? "cubic" : "bicubic") ? 2
                                                                           : -1;
  const int64_t padding_mode = padding == "zeros" ? 0 : padding == "border" ? 1 : padding == "reflection" ? 2 : -1;
  if (interpolation < 0)
    ctx.fail("mode '" + mode + "' is not " + (renamed ? "linear, nearest or cubic" : "bilinear, nearest or bicubic"));
  if (padding_mode < 0) ctx.fail("padding_mode '" + padding + "' is not zeros, border or reflection");
  if (rank == 5 && interpolation == 2) ctx.fail("cubic interpolation of a 5-d input is not evaluated");
  // ONNX defines GridSample as torch.nn.functional.grid_sample.
  const at::Tensor x = at::isFloatingType(x0.scalar_type()) ? widened(x0) : x0.to(at::kFloat);
  auto y = at::grid_sampler(x, ctx.input(1).to(x.scalar_type()), interpolation, padding_mode,
                            ctx.attr_i("align_corners", 0) != 0);
  return single(at::isFloatingType(x0.scalar_type()) ? y.to(x0.scalar_type()) : y);
}

// AffineGrid (opset 20) is torch.nn.functional.affine_grid.
std::vector<EvalValue> affine_grid(const KernelContext& ctx) {
  const at::Tensor& theta = ctx.input(0);
  const std::vector<int64_t> size = int_values(ctx.input(1));
  if (size.size() != 4 && size.size() != 5) ctx.fail("size must be (N, C, H, W) or (N, C, D, H, W)");
  const at::Tensor t = widened(theta);
  return single(at::affine_grid_generator(t, size, ctx.attr_i("align_corners", 0) != 0).to(theta.scalar_type()));
}

// --- RNN, GRU, LSTM -----------------------------------------------------------------------

// One of the activation functions the recurrent ops name, with its alpha and beta.
struct Activation {
  std::string name;  // lower case
  double alpha = 0, beta = 0;

  at::Tensor operator()(const at::Tensor& x) const {
    if (name == "sigmoid") return x.sigmoid();
    if (name == "tanh") return x.tanh();
    if (name == "relu") return x.relu();
    if (name == "affine") return x * alpha + beta;
    if (name == "leakyrelu") return at::where(x >= 0, x, x * alpha);
    if (name == "thresholdedrelu") return at::where(x > alpha, x, at::zeros_like(x));
    if (name == "scaledtanh") return (x * beta).tanh() * alpha;
    if (name == "hardsigmoid") return (x * alpha + beta).clamp(0, 1);
    if (name == "elu") return at::where(x >= 0, x, (x.exp() - 1) * alpha);
    if (name == "softsign") return x / (x.abs() + 1);
    return at::softplus(x);  // "softplus"; names are checked when read
  }
};

// The activations attribute (or the op's defaults) for each direction; activation_alpha and _beta are
// consumed in order by the functions that take them, ONNX's op defaults filling in.
std::vector<std::vector<Activation>> read_activations(const KernelContext& ctx,
                                                      const std::vector<std::string>& defaults, int64_t directions) {
  auto names = ctx.attr_strings("activations");
  if (names.empty())
    for (int64_t d = 0; d < directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  if (names.size() != defaults.size() * static_cast<size_t>(directions))
    ctx.fail("activations must name " + std::to_string(defaults.size()) + " functions per direction");
  const auto alphas = ctx.attr_floats("activation_alpha"), betas = ctx.attr_floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<std::vector<Activation>> result(static_cast<size_t>(directions));
  for (size_t i = 0; i < names.size(); ++i) {
    Activation f;
    for (char c : names[i]) f.name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    // Defaults of the corresponding ONNX ops.
    bool uses_alpha = true, uses_beta = false;
    if (f.name == "affine") {
      f.alpha = 1, f.beta = 0, uses_beta = true;
    } else if (f.name == "leakyrelu") {
      f.alpha = 0.01;
    } else if (f.name == "thresholdedrelu" || f.name == "elu") {
      f.alpha = 1.0;
    } else if (f.name == "scaledtanh") {
      f.alpha = 1, f.beta = 1, uses_beta = true;
    } else if (f.name == "hardsigmoid") {
      f.alpha = 0.2, f.beta = 0.5, uses_beta = true;
    } else if (f.name == "sigmoid" || f.name == "tanh" || f.name == "relu" || f.name == "softsign" ||
               f.name == "softplus") {
      uses_alpha = false;
    } else {
      ctx.fail("activation '" + names[i] + "' is not evaluated");
    }
    if (uses_alpha && next_alpha < alphas.size()) f.alpha = alphas[next_alpha++];
    if (uses_beta && next_beta < betas.size()) f.beta = betas[next_beta++];
    result[i / defaults.size()].push_back(f);
  }
  return result;
}

// What RNN, GRU and LSTM share: inputs in layout 0, per direction weights, lengths, initial states,
// and the time loop.
struct Recurrence {
  at::Tensor x;                     // seq x batch x input
  at::Tensor w, r, b;               // directions x gates*hidden x input / hidden, directions x 2*gates*hidden
  at::Tensor lengths;               // batch (int64), or undefined: every sequence is full
  at::Tensor initial_h, initial_c;  // directions x batch x hidden, or undefined: zeros
  int64_t hidden = 0, directions = 1, gates = 1;
  bool batch_first = false, reverse_only = false;
  std::optional<double> clip;
  std::vector<std::vector<Activation>> activations;

  at::Tensor clipped(const at::Tensor& t) const { return clip ? t.clamp(-*clip, *clip) : t; }
};

Recurrence read_recurrence(const KernelContext& ctx, int64_t gates,
                           const std::vector<std::string>& default_activations) {
  Recurrence rc;
  rc.gates = gates;
  rc.batch_first = ctx.opset() >= 14 && ctx.attr_i("layout", 0) != 0;
  const at::Tensor x0 = widened(ctx.input(0));
  const auto type = x0.scalar_type();
  if (x0.dim() != 3) ctx.fail("X must have rank 3");
  rc.x = rc.batch_first ? x0.transpose(0, 1) : x0;
  const std::string direction = ctx.attr_s("direction", "forward");
  if (direction == "bidirectional")
    rc.directions = 2;
  else if (direction == "reverse")
    rc.reverse_only = true;
  else if (direction != "forward" && direction != "foward")  // GRU-1's schema spells its default "foward"
    ctx.fail("direction '" + direction + "' is not forward, reverse or bidirectional");
  rc.w = ctx.input(1).to(type);
  rc.r = ctx.input(2).to(type);
  if (rc.w.dim() != 3 || rc.r.dim() != 3 || rc.w.size(0) != rc.directions || rc.r.size(0) != rc.directions)
    ctx.fail("W and R must have shape [num_directions, ...] with num_directions " + std::to_string(rc.directions));
  rc.hidden = ctx.attr_i("hidden_size", rc.r.size(2));
  if (rc.w.size(1) != gates * rc.hidden || rc.r.size(1) != gates * rc.hidden || rc.r.size(2) != rc.hidden ||
      rc.w.size(2) != rc.x.size(2))
    ctx.fail("W or R does not match hidden_size " + std::to_string(rc.hidden) + " and the input size");
  rc.b = ctx.has_input(3) ? ctx.input(3).to(type) : at::zeros({rc.directions, 2 * gates * rc.hidden}, x0.options());
  if (!rc.b.sizes().equals({rc.directions, 2 * gates * rc.hidden})) ctx.fail("B has the wrong shape");
  if (ctx.has_input(4)) {
    rc.lengths = ctx.input(4).to(at::kLong);
    if (!rc.lengths.sizes().equals({rc.x.size(1)})) ctx.fail("sequence_lens must have one value per batch item");
    if (rc.lengths.numel() > 0 &&
        (rc.lengths.min().item<int64_t>() < 0 || rc.lengths.max().item<int64_t>() > rc.x.size(0)))
      ctx.fail("sequence_lens values must lie in [0, seq_length]");
  }
  auto state = [&](size_t i) {
    if (!ctx.has_input(i)) return at::Tensor();
    auto t = ctx.input(i).to(type);
    if (rc.batch_first) t = t.transpose(0, 1);
    if (!t.sizes().equals({rc.directions, rc.x.size(1), rc.hidden})) ctx.fail("an initial state has the wrong shape");
    return t;
  };
  rc.initial_h = state(5);
  rc.initial_c = state(6);
  if (ctx.has_attr("clip")) rc.clip = ctx.attr_f("clip", 0);
  rc.activations = read_activations(ctx, default_activations, rc.directions);
  return rc;
}

// One time step: given the input projection x W^T + Wb of the step and the states (h, c), the new states.
using StepFunction = std::function<std::pair<at::Tensor, at::Tensor>(const at::Tensor& projected, const at::Tensor& h,
                                                                     const at::Tensor& c, int64_t direction)>;

// Runs every direction over the sequence; returns Y (seq x dirs x batch x hidden), Y_h and Y_c in the
// node's layout. Past a batch item's length, Y is 0 and the states stay as they were.
std::vector<EvalValue> run_recurrence(const Recurrence& rc, const StepFunction& step) {
  const int64_t seq = rc.x.size(0), batch = rc.x.size(1);
  std::vector<at::Tensor> ys, hs, cs;
  for (int64_t d = 0; d < rc.directions; ++d) {
    const bool reverse = rc.reverse_only || d == 1;
    const auto projected = at::matmul(rc.x, rc.w[d].t()) + rc.b[d].narrow(0, 0, rc.gates * rc.hidden);
    at::Tensor h = rc.initial_h.defined() ? rc.initial_h[d] : at::zeros({batch, rc.hidden}, rc.x.options());
    at::Tensor c = rc.initial_c.defined() ? rc.initial_c[d] : at::zeros({batch, rc.hidden}, rc.x.options());
    std::vector<at::Tensor> outputs(static_cast<size_t>(seq));
    for (int64_t s = 0; s < seq; ++s) {
      const int64_t t = reverse ? seq - 1 - s : s;
      auto [h_next, c_next] = step(projected[t], h, c, d);
      if (rc.lengths.defined()) {
        const auto active = (rc.lengths > t).unsqueeze(1);
        outputs[t] = at::where(active, h_next, at::zeros_like(h_next));
        h = at::where(active, h_next, h);
        if (c_next.defined()) c = at::where(active, c_next, c);
      } else {
        outputs[t] = h_next;
        h = h_next;
        if (c_next.defined()) c = c_next;
      }
    }
    ys.push_back(seq > 0 ? at::stack(outputs) : at::zeros({0, batch, rc.hidden}, rc.x.options()));
    hs.push_back(h);
    cs.push_back(c);
  }
  auto y = at::stack(ys, 1), y_h = at::stack(hs), y_c = at::stack(cs);
  if (rc.batch_first) {
    y = y.permute({2, 0, 1, 3});
    y_h = y_h.transpose(0, 1);
    y_c = y_c.transpose(0, 1);
  }
  return {EvalValue(y.contiguous()), EvalValue(y_h.contiguous()), EvalValue(y_c.contiguous())};
}

std::vector<EvalValue> with_input_type(std::vector<EvalValue> outputs, const KernelContext& ctx) {
  for (auto& o : outputs) o.tensor = o.tensor.to(ctx.input(0).scalar_type());
  return outputs;
}

std::vector<EvalValue> rnn(const KernelContext& ctx) {
  const Recurrence rc = read_recurrence(ctx, 1, {"Tanh"});
  auto step = [&](const at::Tensor& projected, const at::Tensor& h, const at::Tensor&, int64_t d) {
    const auto recurrent_bias = rc.b[d].narrow(0, rc.hidden, rc.hidden);
    const auto pre = rc.clipped(projected + at::matmul(h, rc.r[d].t()) + recurrent_bias);
    return std::make_pair(rc.activations[d][0](pre), at::Tensor());
  };
  auto outputs = run_recurrence(rc, step);
  outputs.pop_back();
  return with_input_type(std::move(outputs), ctx);
}

std::vector<EvalValue> gru(const KernelContext& ctx) {
  const Recurrence rc = read_recurrence(ctx, 3, {"Sigmoid", "Tanh"});
  const bool linear_before_reset = ctx.attr_i("linear_before_reset", 0) != 0;
  const int64_t H = rc.hidden;
  auto step = [&](const at::Tensor& projected, const at::Tensor& h, const at::Tensor&, int64_t d) {
    const auto& f = rc.activations[d][0];
    const auto& g = rc.activations[d][1];
    const auto r_weight = rc.r[d];
    const auto r_bias = rc.b[d].narrow(0, 3 * H, 3 * H);
    // Gates z, r, h in that order.
    const auto zr =
        projected.narrow(1, 0, 2 * H) + at::matmul(h, r_weight.narrow(0, 0, 2 * H).t()) + r_bias.narrow(0, 0, 2 * H);
    const auto z = f(rc.clipped(zr.narrow(1, 0, H)));
    const auto reset = f(rc.clipped(zr.narrow(1, H, H)));
    const auto rh_weight = r_weight.narrow(0, 2 * H, H).t();
    const auto rh_bias = r_bias.narrow(0, 2 * H, H);
    const auto candidate_pre = linear_before_reset
                                   ? projected.narrow(1, 2 * H, H) + reset * (at::matmul(h, rh_weight) + rh_bias)
                                   : projected.narrow(1, 2 * H, H) + at::matmul(reset * h, rh_weight) + rh_bias;
    const auto candidate = g(rc.clipped(candidate_pre));
    return std::make_pair((1 - z) * candidate + z * h, at::Tensor());
  };
  auto outputs = run_recurrence(rc, step);
  outputs.pop_back();
  return with_input_type(std::move(outputs), ctx);
}

std::vector<EvalValue> lstm(const KernelContext& ctx) {
  const Recurrence rc = read_recurrence(ctx, 4, {"Sigmoid", "Tanh", "Tanh"});
  const bool input_forget = ctx.attr_i("input_forget", 0) != 0;
  const int64_t H = rc.hidden;
  at::Tensor peepholes;  // directions x 3*hidden (i, o, f)
  if (ctx.has_input(7)) {
    peepholes = ctx.input(7).to(rc.x.scalar_type());
    if (!peepholes.sizes().equals({rc.directions, 3 * H})) ctx.fail("P has the wrong shape");
  }
  auto step = [&](const at::Tensor& projected, const at::Tensor& h, const at::Tensor& c, int64_t d) {
    const auto& f = rc.activations[d][0];
    const auto& g = rc.activations[d][1];
    const auto& out_activation = rc.activations[d][2];
    // Gates i, o, f, c in that order.
    const auto gates = projected + at::matmul(h, rc.r[d].t()) + rc.b[d].narrow(0, 4 * H, 4 * H);
    auto i_pre = gates.narrow(1, 0, H), o_pre = gates.narrow(1, H, H), f_pre = gates.narrow(1, 2 * H, H);
    if (peepholes.defined()) {
      i_pre = i_pre + peepholes[d].narrow(0, 0, H) * c;
      f_pre = f_pre + peepholes[d].narrow(0, 2 * H, H) * c;
    }
    const auto input_gate = f(rc.clipped(i_pre));
    const auto forget_gate = input_forget ? 1 - input_gate : f(rc.clipped(f_pre));
    const auto cell = forget_gate * c + input_gate * g(rc.clipped(gates.narrow(1, 3 * H, H)));
    if (peepholes.defined()) o_pre = o_pre + peepholes[d].narrow(0, H, H) * cell;
    const auto output_gate = f(rc.clipped(o_pre));
    return std::make_pair(output_gate * out_activation(cell), cell);
  };
  return with_input_type(run_recurrence(rc, step), ctx);
}

// --- RoiAlign, MaxRoiPool -----------------------------------------------------------------

// Bilinear sampling positions along one axis of an RoI: for each sample, the two neighbouring indices
// and their weights (zero for samples outside [-1, size]), as ONNX's reference (and onnxruntime) place them.
struct SampleAxis {
  std::vector<int64_t> low, high;
  std::vector<double> low_weight, high_weight;
};

SampleAxis roi_samples(double start, double bin, int64_t bins, int64_t grid, int64_t size) {
  SampleAxis s;
  for (int64_t p = 0; p < bins; ++p)
    for (int64_t k = 0; k < grid; ++k) {
      double v =
          start + static_cast<double>(p) * bin + (static_cast<double>(k) + 0.5) * bin / static_cast<double>(grid);
      if (v < -1.0 || v > static_cast<double>(size)) {
        s.low.push_back(0), s.high.push_back(0), s.low_weight.push_back(0), s.high_weight.push_back(0);
        continue;
      }
      v = std::max(v, 0.0);
      auto low = static_cast<int64_t>(v);
      int64_t high = low + 1;
      if (low >= size - 1) {
        low = high = size - 1;
        v = static_cast<double>(low);
      }
      const double frac = v - static_cast<double>(low);
      s.low.push_back(low), s.high.push_back(high), s.low_weight.push_back(1 - frac), s.high_weight.push_back(frac);
    }
  return s;
}

std::vector<EvalValue> roi_align(const KernelContext& ctx) {
  const at::Tensor& x0 = ctx.input(0);
  if (x0.dim() != 4) ctx.fail("X must have rank 4");
  const at::Tensor x = widened(x0);
  const auto rois = ctx.input(1).to(at::kDouble).contiguous();
  const auto batch_indices = int_values(ctx.input(2));
  if (rois.dim() != 2 || rois.size(1) != 4 || static_cast<int64_t>(batch_indices.size()) != rois.size(0))
    ctx.fail("rois must be num_rois x 4 with one batch index each");
  const std::string mode = ctx.attr_s("mode", "avg");
  if (mode != "avg" && mode != "max") ctx.fail("mode '" + mode + "' is not avg or max");
  const std::string transform =
      ctx.opset() >= 16 ? ctx.attr_s("coordinate_transformation_mode", "half_pixel") : "output_half_pixel";
  if (transform != "half_pixel" && transform != "output_half_pixel")
    ctx.fail("coordinate_transformation_mode '" + transform + "' is not half_pixel or output_half_pixel");
  const bool half_pixel = transform == "half_pixel";
  const int64_t out_h = ctx.attr_i("output_height", 1), out_w = ctx.attr_i("output_width", 1);
  const int64_t sampling_ratio = ctx.attr_i("sampling_ratio", 0);
  const double scale = ctx.attr_f("spatial_scale", 1.0f);
  const int64_t height = x.size(2), width = x.size(3);
  const auto weights_of = [&](const std::vector<double>& w) { return at::tensor(w, at::kDouble).to(x.scalar_type()); };
  const auto indices_of = [](const std::vector<int64_t>& i) { return at::tensor(i, at::kLong); };
  std::vector<at::Tensor> results;
  for (int64_t n = 0; n < rois.size(0); ++n) {
    if (batch_indices[n] < 0 || batch_indices[n] >= x.size(0)) ctx.fail("a batch index is out of range");
    const double* roi = rois.data_ptr<double>() + 4 * n;
    const double offset = half_pixel ? 0.5 : 0.0;
    const double x1 = roi[0] * scale - offset, y1 = roi[1] * scale - offset;
    double roi_w = roi[2] * scale - offset - x1, roi_h = roi[3] * scale - offset - y1;
    if (!half_pixel) roi_w = std::max(roi_w, 1.0), roi_h = std::max(roi_h, 1.0);
    const double bin_h = roi_h / static_cast<double>(out_h), bin_w = roi_w / static_cast<double>(out_w);
    const int64_t grid_h = sampling_ratio > 0 ? sampling_ratio : static_cast<int64_t>(std::ceil(bin_h));
    const int64_t grid_w = sampling_ratio > 0 ? sampling_ratio : static_cast<int64_t>(std::ceil(bin_w));
    if (grid_h <= 0 || grid_w <= 0) {  // an empty RoI: no samples
      results.push_back(at::zeros({x.size(1), out_h, out_w}, x.options()));
      continue;
    }
    const auto ys = roi_samples(y1, bin_h, out_h, grid_h, height);
    const auto xs = roi_samples(x1, bin_w, out_w, grid_w, width);
    const auto image = x[batch_indices[n]];  // C x H x W
    // The four bilinear corners of every sample (C x samples_y x samples_x), each weighted.
    std::vector<at::Tensor> corners;
    for (int row = 0; row < 2; ++row)
      for (int col = 0; col < 2; ++col) {
        const auto rows = image.index_select(1, indices_of(row ? ys.high : ys.low));
        const auto values = rows.index_select(2, indices_of(col ? xs.high : xs.low));
        const auto wy = weights_of(row ? ys.high_weight : ys.low_weight).reshape({1, -1, 1});
        const auto wx = weights_of(col ? xs.high_weight : xs.low_weight).reshape({1, 1, -1});
        corners.push_back(values * wy * wx);
      }
    at::Tensor samples;
    if (mode == "avg") {
      samples = corners[0] + corners[1] + corners[2] + corners[3];
      samples = samples.reshape({x.size(1), out_h, grid_h, out_w, grid_w}).mean({2, 4});
    } else {  // the largest weighted corner over the bin's samples (onnxruntime's definition)
      samples = at::maximum(at::maximum(corners[0], corners[1]), at::maximum(corners[2], corners[3]));
      samples = samples.reshape({x.size(1), out_h, grid_h, out_w, grid_w}).amax({2, 4});
    }
    results.push_back(samples);
  }
  auto y = results.empty() ? at::zeros({0, x.size(1), out_h, out_w}, x.options()) : at::stack(results);
  return single(y.to(x0.scalar_type()));
}

std::vector<EvalValue> max_roi_pool(const KernelContext& ctx) {
  const at::Tensor& x0 = ctx.input(0);
  if (x0.dim() != 4) ctx.fail("X must have rank 4");
  const at::Tensor x = widened(x0);
  const auto rois = ctx.input(1).to(at::kDouble).contiguous();
  if (rois.dim() != 2 || rois.size(1) != 5) ctx.fail("rois must be num_rois x 5");
  const auto pooled = ctx.attr_ints("pooled_shape");
  if (pooled.size() != 2 || pooled[0] < 1 || pooled[1] < 1) ctx.fail("pooled_shape must be two positive values");
  const double scale = ctx.attr_f("spatial_scale", 1.0f);
  const int64_t height = x.size(2), width = x.size(3);
  auto y = at::zeros({rois.size(0), x.size(1), pooled[0], pooled[1]}, x.options());
  for (int64_t n = 0; n < rois.size(0); ++n) {
    const double* roi = rois.data_ptr<double>() + 5 * n;
    const auto b = static_cast<int64_t>(roi[0]);
    if (b < 0 || b >= x.size(0)) ctx.fail("a batch index is out of range");
    // Caffe's RoI pooling: rounded corners, bins of (size + 1) / pooled, empty bins give 0.
    const auto start_w = static_cast<int64_t>(std::round(roi[1] * scale));
    const auto start_h = static_cast<int64_t>(std::round(roi[2] * scale));
    const auto end_w = static_cast<int64_t>(std::round(roi[3] * scale));
    const auto end_h = static_cast<int64_t>(std::round(roi[4] * scale));
    const double bin_h =
        static_cast<double>(std::max<int64_t>(end_h - start_h + 1, 1)) / static_cast<double>(pooled[0]);
    const double bin_w =
        static_cast<double>(std::max<int64_t>(end_w - start_w + 1, 1)) / static_cast<double>(pooled[1]);
    const auto bounds = [](double lo, double hi, int64_t start, int64_t size) {
      return std::make_pair(std::clamp<int64_t>(static_cast<int64_t>(std::floor(lo)) + start, 0, size),
                            std::clamp<int64_t>(static_cast<int64_t>(std::ceil(hi)) + start, 0, size));
    };
    for (int64_t ph = 0; ph < pooled[0]; ++ph) {
      const auto [h0, h1] =
          bounds(static_cast<double>(ph) * bin_h, static_cast<double>(ph + 1) * bin_h, start_h, height);
      for (int64_t pw = 0; pw < pooled[1]; ++pw) {
        const auto [w0, w1] =
            bounds(static_cast<double>(pw) * bin_w, static_cast<double>(pw + 1) * bin_w, start_w, width);
        if (h1 <= h0 || w1 <= w0) continue;
        y[n].select(1, ph).select(1, pw).copy_(x[b].slice(1, h0, h1).slice(2, w0, w1).amax({1, 2}));
      }
    }
  }
  return single(y.to(x0.scalar_type()));
}

// --- Dropout ------------------------------------------------------------------------------

std::vector<EvalValue> dropout(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  if (ctx.opset() >= 12) {
    const double ratio = ctx.has_input(1) ? ctx.input(1).item<double>() : 0.5;
    const bool training = ctx.has_input(2) && ctx.input(2).item<bool>();
    if (training && ratio != 0)
      ctx.fail("training_mode with a nonzero ratio drops random elements, which is not evaluated");
  }
  // Inference (and opsets before 7, whose is_test only matters to training runs): the identity.
  // The mask is bool from opset 10, of X's type before.
  const auto mask = at::ones(x.sizes(), x.options().dtype(ctx.opset() >= 10 ? at::kBool : x.scalar_type()));
  return {EvalValue(x), EvalValue(mask)};
}

// --- losses -------------------------------------------------------------------------------

at::Tensor nll_loss(const KernelContext& ctx, const at::Tensor& log_prob, const at::Tensor& target,
                    const at::Tensor& weight) {
  const std::string reduction = ctx.attr_s("reduction", "mean");
  int64_t mode = at::Reduction::Mean;
  if (reduction == "none")
    mode = at::Reduction::None;
  else if (reduction == "sum")
    mode = at::Reduction::Sum;
  else if (reduction != "mean")
    ctx.fail("reduction '" + reduction + "' is not none, sum or mean");
  if (log_prob.dim() < 2) ctx.fail("the input must have rank 2 or more");
  if (target.dim() != log_prob.dim() - 1) ctx.fail("the target's rank must be the input's minus one");
  // Without ignore_index every target must be a class: no value is ignored.
  const int64_t ignore =
      ctx.has_attr("ignore_index") ? ctx.attr_i("ignore_index", 0) : std::numeric_limits<int64_t>::min();
  at::Tensor w = weight.defined() ? weight.to(log_prob.scalar_type()) : weight;
  return at::nll_loss_nd(log_prob, target.to(at::kLong), w, mode, ignore);
}

std::vector<EvalValue> negative_log_likelihood_loss(const KernelContext& ctx) {
  const at::Tensor& input = ctx.input(0);
  return single(nll_loss(ctx, widened(input), ctx.input(1), ctx.optional_input(2)).to(input.scalar_type()));
}

std::vector<EvalValue> softmax_cross_entropy_loss(const KernelContext& ctx) {
  const at::Tensor& scores = ctx.input(0);
  if (scores.dim() < 2) ctx.fail("the scores must have rank 2 or more");
  const auto log_prob = at::log_softmax(widened(scores), 1);
  const auto loss = nll_loss(ctx, log_prob, ctx.input(1), ctx.optional_input(2));
  return {EvalValue(loss.to(scores.scalar_type())), EvalValue(log_prob.to(scores.scalar_type()))};
}

}  // namespace

void register_nn_kernels(KernelTable& table) {
  table["Conv"] = {conv, 1};
  table["ConvTranspose"] = {conv_transpose, 1};
  table["MaxPool"] = {max_pool, 1};
  table["AveragePool"] = {average_pool, 1, 19};
  table["LpPool"] = {lp_pool, 1, 18};
  table["GlobalAveragePool"] = {[](const KernelContext& ctx) { return global_pool(ctx, GlobalPool::average); }, 1};
  table["GlobalMaxPool"] = {[](const KernelContext& ctx) { return global_pool(ctx, GlobalPool::max); }, 1};
  table["GlobalLpPool"] = {[](const KernelContext& ctx) { return global_pool(ctx, GlobalPool::lp); }, 1};
  table["MaxUnpool"] = {max_unpool, 9};
  table["BatchNormalization"] = {batch_norm, 1};
  table["InstanceNormalization"] = {instance_norm, 1};
  table["LayerNormalization"] = {layer_norm, 17};
  table["LpNormalization"] = {lp_normalization, 1};
  table["MeanVarianceNormalization"] = {mean_variance_normalization, 9};
  table["LRN"] = {lrn, 1};
  table["GridSample"] = {grid_sample, 16, 20};
  table["Col2Im"] = {col2im, 18};
  table["AffineGrid"] = {affine_grid, 20};
  table["RNN"] = {rnn, 1};
  table["GRU"] = {gru, 1};
  table["LSTM"] = {lstm, 1};
  table["RoiAlign"] = {roi_align, 10};
  table["MaxRoiPool"] = {max_roi_pool, 1};
  table["Dropout"] = {dropout, 1};
  table["Resize"] = {resize, 10, 19};
  table["Upsample"] = {upsample, 7};
  table["NegativeLogLikelihoodLoss"] = {negative_log_likelihood_loss, 12};
  table["SoftmaxCrossEntropyLoss"] = {softmax_cross_entropy_loss, 12};
}

}  // namespace onnxport::core::eval
