// torchvision::deform_conv2d(input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w,
//                            dilation_h, dilation_w, groups, offset_groups, use_mask)
//
// ONNX DeformConv only arrives at opset 19. From opset 16 the op is built from GridSample:
//  1. every kernel tap k = (i, j) of every output position (oh, ow) samples the input at
//       y = oh * stride_h - pad_h + i * dilation_h + dy,   x = ow * stride_w - pad_w + j * dilation_w + dx
//     where (dy, dx) come from the offsets of the tap's offset group. torchvision interpolates
//     bilinearly and lets corners outside the image contribute 0: GridSample's "bilinear" with
//     padding_mode "zeros". Pixel coordinates become grid coordinates with align_corners=0
//     (pixel p <-> (2p + 1) / size - 1), which also works for a 1-pixel-wide image.
//     One GridSample samples all taps at once: the batch holds (image, offset group) pairs, the
//     grid's height the K taps and its width the Ho*Wo output positions.
//  2. the samples (times the mask, for DCNv2) are the columns of an im2col, laid out
//     [N, C * K, Ho, Wo] with channel c * K + k: a 1x1 Conv with the weight reshaped to
//     [O, C / groups * K, 1, 1] and `group` = groups applies every weight group, plus the bias.
#include <string>

#include "onnxport/helpers.h"
#include "torchvision_ops.h"

namespace onnxport::torchvision {
namespace {

using namespace helpers;

constexpr int kGridSampleOpset = 16;

struct DeformArgs {
  Value *input, *weight, *offset, *mask, *bias;
  int64_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups, offset_groups;
  bool use_mask;
  // From the weight's static shape [O, C / groups, kh, kw].
  int64_t out_channels, channels, kernel_h, kernel_w;
  int64_t taps() const { return kernel_h * kernel_w; }
};

[[noreturn]] void fail(const TorchNode& n, const std::string& message) { throw ArgumentError(n.kind + ": " + message); }

DeformArgs deform_args(const TorchNode& n, const Args& a) {
  DeformArgs d{a.tensor(0), a.tensor(1), a.tensor(2), a.at(3), a.at(4), a.i(5), a.i(6), a.i(7), a.i(8),
               a.i(9),      a.i(10),     a.i(11),     a.i(12), a.b(13), 0,      0,      0,      0};
  const auto weight = static_shape(d.weight);
  if (!weight || weight->size() != 4)
    fail(n, "needs a 4-d weight of known shape [out_channels, in_channels / groups, kh, kw], got " +
                d.weight->type().str());
  if (d.groups < 1 || d.offset_groups < 1) fail(n, "groups and offset_groups must be positive");
  d.out_channels = (*weight)[0];
  d.channels = (*weight)[1] * d.groups;
  d.kernel_h = (*weight)[2];
  d.kernel_w = (*weight)[3];
  if (d.channels % d.offset_groups != 0)
    fail(n, "input channels (" + std::to_string(d.channels) + ") must be a multiple of offset_groups (" +
                std::to_string(d.offset_groups) + ")");
  if (auto c = static_dim(d.input, 1); c && *c != d.channels)
    fail(n, "input has " + std::to_string(*c) + " channels, the weight expects " + std::to_string(d.channels));
  return d;
}

// Output positions oh * stride - pad (or ow * ...) for `extent` (0-d int64) positions, as [extent].
Value* positions(Graph& g, Value* extent, int64_t stride, int64_t pad, DType dtype) {
  Value* p = cast(g, g.op("Range", {g.constant_int(0), extent, g.constant_int(1)}), dtype);
  if (stride != 1) p = g.op("Mul", {p, g.constant_scalar(dtype, static_cast<double>(stride))});
  if (pad != 0) p = g.op("Sub", {p, g.constant_scalar(dtype, static_cast<double>(pad))});
  return p;
}

// Per tap k = i * kw + j: i * dilation_h (rows) or j * dilation_w (columns), as [K, 1].
Value* tap_offsets(Graph& g, const DeformArgs& d, bool rows, DType dtype) {
  std::vector<float> v;
  for (int64_t i = 0; i < d.kernel_h; ++i)
    for (int64_t j = 0; j < d.kernel_w; ++j)
      v.push_back(static_cast<float>(rows ? i * d.dilation_h : j * d.dilation_w));
  return cast(g, reshape(g, g.constant(Tensor::floats(v)), std::vector<int64_t>{d.taps(), 1}), dtype);
}

struct SamplePoints {
  Value* y;  // [K, Ho * Wo]: where each tap samples for each output position, before the offsets
  Value* x;
};

// out_hw: [Ho, Wo] as a 1-d int64 tensor.
SamplePoints sample_points(Graph& g, const DeformArgs& d, Value* out_hw, DType dtype) {
  auto extent = [&](int64_t i) { return gather(g, out_hw, g.constant_int(i), 0); };
  Value* rows = unsqueeze(g, positions(g, extent(0), d.stride_h, d.pad_h, dtype), {1});  // [Ho, 1]
  Value* cols = unsqueeze(g, positions(g, extent(1), d.stride_w, d.pad_w, dtype), {0});  // [1, Wo]
  auto flat = [&](Value* v) { return reshape(g, g.op("Expand", {v, out_hw}), std::vector<int64_t>{1, -1}); };
  return {g.op("Add", {tap_offsets(g, d, true, dtype), flat(rows)}),
          g.op("Add", {tap_offsets(g, d, false, dtype), flat(cols)})};
}

// Pixel coordinate p along an axis of `extent` pixels -> GridSample coordinate (align_corners=0).
Value* to_grid(Graph& g, Value* p, Value* extent, DType dtype) {
  Value* twice_plus_one = g.op("Add", {g.op("Mul", {p, g.constant_scalar(dtype, 2.0)}), g.constant_scalar(dtype, 1.0)});
  return g.op("Sub", {g.op("Div", {twice_plus_one, extent}), g.constant_scalar(dtype, 1.0)});
}

// The deformed samples [N * offset_groups, C / offset_groups, K, Ho * Wo]; length = [Ho * Wo].
Value* sample(Graph& g, const DeformArgs& d, Value* out_hw, Value* length) {
  const DType dtype = float_dtype(d.input);
  // offset channel (group * K + tap) * 2 + {0: dy, 1: dx}
  Value* deltas = cast(g, reshape(g, d.offset, concat(g, {g.constant_ints({-1, d.taps(), 2}), length}, 0)), dtype);
  auto delta = [&](int64_t c) { return squeeze(g, slice(g, deltas, {2}, {c}, {c + 1}), {2}); };
  const SamplePoints base = sample_points(g, d, out_hw, dtype);
  auto extent = [&](int64_t axis) { return cast(g, size(g, d.input, axis), dtype); };
  Value* x = to_grid(g, g.op("Add", {delta(1), base.x}), extent(3), dtype);
  Value* y = to_grid(g, g.op("Add", {delta(0), base.y}), extent(2), dtype);
  Value* grid = concat(g, {unsqueeze(g, x, {3}), unsqueeze(g, y, {3})}, 3);  // [N*G, K, Ho*Wo, 2]
  // Reshape's 0 keeps the input's H and W.
  Value* images = reshape(g, d.input, std::vector<int64_t>{-1, d.channels / d.offset_groups, 0, 0});
  return g.op("GridSample", {images, grid},
              {{"mode_s", g.opset() >= 20 ? "linear" : "bilinear"}, {"padding_mode_s", "zeros"}, {"align_corners_i", 0}});
}

// deform_conv2d -> [N, O, Ho, Wo]; Ho and Wo are the offsets' (torchvision checks they match).
Value* deform_conv2d(Graph& g, const TorchNode& n, const Args& a) {
  const DeformArgs d = deform_args(n, a);
  Value* out_hw = slice(g, shape_of(g, d.offset), {0}, {2}, {4});
  Value* length = reduce(g, "ReduceProd", out_hw, {0}, true);
  Value* samples = sample(g, d, out_hw, length);
  if (d.use_mask) {
    // mask channel group * K + tap, the samples' (offset group, tap) layout
    Value* mask = reshape(g, d.mask, concat(g, {g.constant_ints({-1, 1, d.taps()}), length}, 0));
    samples = g.op("Mul", {samples, cast(g, mask, float_dtype(d.input))});
  }
  // [N*G, C/G, K, L] -> [N, C*K, Ho, Wo]: channel c * K + k, the order of the weight's (c, kh, kw)
  Value* columns = reshape(g, samples, concat(g, {g.constant_ints({-1, d.channels * d.taps()}), out_hw}, 0));
  Value* weight = reshape(g, d.weight, std::vector<int64_t>{d.out_channels, -1, 1, 1});
  std::vector<Value*> inputs{columns, weight};
  if (!d.bias->is_none()) inputs.push_back(d.bias);
  return g.op("Conv", inputs, {{"kernel_shape_i", std::vector<int64_t>{1, 1}}, {"group_i", d.groups}});
}

}  // namespace

void add_deform_conv(Registrar& r) { r.add("torchvision::deform_conv2d", kGridSampleOpset, deform_conv2d); }

}  // namespace onnxport::torchvision
