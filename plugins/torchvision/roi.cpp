// Region-of-interest pooling. torchvision's rois are [K, 5] rows (batch index, x1, y1, x2, y2).
//
//  roi_align     -> RoiAlign (opset 10) on the box columns plus int64 batch indices. aligned=True
//                   shifts the scaled box by -0.5 px: from opset 16 that is RoiAlign's
//                   coordinate_transformation_mode "half_pixel" (exact); before it the boxes are
//                   shifted by 0.5/spatial_scale, which matches torch for boxes at least 1 px wide
//                   and high on the feature map (legacy RoiAlign widens smaller boxes to 1 px).
//  roi_pool      -> MaxRoiPool (opset 1), which takes the rows as they are.
//  ps_roi_align  -> RoiAlign with half-pixel boxes over all C = C_out * ph * pw channels, then
//                   the position-sensitive pick (position_sensitive below).
//  ps_roi_pool   -> per-roi bin masks and two MatMuls (average pooling over integer bins; opset 11
//                   for Range), then the same pick.
// The second outputs of roi_pool / ps_roi_* (argmax, channel mapping) are only used by the
// backward pass; they become None.
#include <cstring>

#include "onnxport/helpers.h"
#include "torchvision_ops.h"

namespace onnxport::torchvision {
namespace {

using namespace helpers;

struct RoiArgs {
  Value* input;
  Value* rois;
  double spatial_scale;
  int64_t pooled_height, pooled_width;
};

// The arguments every roi op starts with: input, rois, spatial_scale, pooled_height, pooled_width.
RoiArgs roi_args(const TorchNode& n, const Args& a) {
  RoiArgs r{a.tensor(0), a.tensor(1), a.f(2), a.i(3), a.i(4)};
  if (r.spatial_scale <= 0) a.fail(2, "a positive spatial_scale");
  if (r.pooled_height <= 0 || r.pooled_width <= 0)
    throw ArgumentError(n.kind + ": pooled size must be positive, got " + std::to_string(r.pooled_height) + "x" +
                        std::to_string(r.pooled_width));
  return r;
}

enum class Coordinates { Legacy, HalfPixel };  // aligned=False / aligned=True

Value* batch_indices(Graph& g, Value* rois) {
  return cast(g, squeeze(g, slice(g, rois, {1}, {0}, {1}), {1}), DType::Int64);
}

// RoiAlign (avg) of r over rois; coordinate_transformation_mode exists from opset 16.
Value* roi_align_op(Graph& g, const RoiArgs& r, int64_t sampling_ratio, Coordinates coords) {
  Value* boxes = slice(g, r.rois, {1}, {1}, {5});
  Attrs attrs{{"mode_s", "avg"},
              {"output_height_i", r.pooled_height},
              {"output_width_i", r.pooled_width},
              // torch samples adaptively (ceil(roi size / bins)) for any ratio <= 0; ONNX for 0.
              {"sampling_ratio_i", sampling_ratio > 0 ? sampling_ratio : int64_t{0}},
              {"spatial_scale_f", r.spatial_scale}};
  const bool half_pixel = coords == Coordinates::HalfPixel;
  if (g.opset() >= 16)
    attrs.emplace_back("coordinate_transformation_mode_s", half_pixel ? "half_pixel" : "output_half_pixel");
  else if (half_pixel)
    boxes = g.op("Sub", {boxes, scalar_like(g, 0.5 / r.spatial_scale, boxes)});
  return g.op("RoiAlign", {r.input, boxes, batch_indices(g, r.rois)}, attrs);
}

// roi_align(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned)
Value* roi_align(Graph& g, const TorchNode& n, const Args& a) {
  return roi_align_op(g, roi_args(n, a), a.i(5), a.b(6) ? Coordinates::HalfPixel : Coordinates::Legacy);
}

// roi_pool(input, rois, spatial_scale, pooled_height, pooled_width) -> (output, argmax)
std::vector<Value*> roi_pool(Graph& g, const TorchNode& n, const Args& a) {
  const RoiArgs r = roi_args(n, a);
  Value* out = g.op("MaxRoiPool", {r.input, r.rois},
                    {{"pooled_shape_i", std::vector<int64_t>{r.pooled_height, r.pooled_width}},
                     {"spatial_scale_f", r.spatial_scale}});
  return {out, g.none()};
}

// A bins x bins identity matrix of `dtype`.
Value* identity_matrix(Graph& g, int64_t bins, DType dtype) {
  std::vector<float> eye(static_cast<size_t>(bins * bins), 0.0f);
  for (int64_t i = 0; i < bins; ++i) eye[static_cast<size_t>(i * bins + i)] = 1.0f;
  std::vector<uint8_t> bytes(eye.size() * sizeof(float));
  std::memcpy(bytes.data(), eye.data(), bytes.size());
  return cast(g, g.constant(Tensor(DType::Float, {bins, bins}, std::move(bytes))), dtype);
}

// The position-sensitive pick from [K, C_out*bins, ph, pw] pooled over all channels: output
// (c, i, j) is channel c*bins + i*pw + j at bin (i, j), the diagonal of a [K, C_out, bins, bins] view.
Value* position_sensitive(Graph& g, const TorchNode& n, const RoiArgs& r, Value* pooled) {
  const int64_t bins = r.pooled_height * r.pooled_width;
  int64_t out_channels = -1;
  if (auto channels = static_dim(r.input, 1)) {
    if (*channels % bins != 0)
      throw ArgumentError(n.kind + ": input channels (" + std::to_string(*channels) +
                          ") must be a multiple of pooled_height * pooled_width (" + std::to_string(bins) + ")");
    out_channels = *channels / bins;
  }
  Value* grouped = reshape(g, pooled, std::vector<int64_t>{0, out_channels, bins, bins});
  Value* diagonal =
      reduce(g, "ReduceSum", g.op("Mul", {grouped, identity_matrix(g, bins, float_dtype(r.input))}), {2}, false);
  return reshape(g, diagonal, std::vector<int64_t>{0, out_channels, r.pooled_height, r.pooled_width});
}

// ps_roi_align(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio)
//   -> (output, channel_mapping)
std::vector<Value*> ps_roi_align(Graph& g, const TorchNode& n, const Args& a) {
  const RoiArgs r = roi_args(n, a);
  return {position_sensitive(g, n, r, roi_align_op(g, r, a.i(5), Coordinates::HalfPixel)), g.none()};
}

// ---- ps_roi_pool: average pooling over integer bins, which no ONNX op does per roi. Per axis,
// torchvision rounds the scaled box (half away from zero), takes size = max(end - start, 1) and
// bin i = [floor(i*size/bins), ceil((i+1)*size/bins)) + start, both ends clamped to
// [0, extent - 1] (so the last row/column is never read), empty bins giving 0. Here each axis
// becomes a 0/1 mask [K, bins, extent]; two MatMuls sum every bin, over all channels.

Value* round_half_away(Graph& g, Value* v) {
  Value* magnitude = g.op("Floor", {g.op("Add", {g.op("Abs", {v}), scalar_like(g, 0.5, v)})});
  return g.op("Mul", {g.op("Sign", {v}), magnitude});
}

struct BinMasks {
  Value* mask;   // [K, bins, extent] 0/1 in the input's dtype
  Value* count;  // [K, bins] cells per bin
};

// start, length: [K, 1] (rounded feature-map coordinates along one axis).
BinMasks bin_masks(Graph& g, const RoiArgs& r, Value* start, Value* length, int64_t bins, int64_t axis) {
  const DType dtype = float_dtype(r.input);
  std::vector<float> lower(static_cast<size_t>(bins)), upper(static_cast<size_t>(bins));
  for (size_t i = 0; i < lower.size(); ++i) {
    lower[i] = static_cast<float>(i);
    upper[i] = static_cast<float>(i + 1);
  }
  Value* bin_size = g.op("Div", {length, scalar_like(g, static_cast<double>(bins), length)});
  Value* extent = cast(g, size(g, r.input, axis), dtype);
  Value* last = g.op("Sub", {extent, scalar_like(g, 1.0, extent)});
  auto clamp = [&](Value* v) { return g.op("Min", {g.op("Max", {v, scalar_like(g, 0.0, v)}), last}); };
  Value* lo = clamp(g.op(
      "Add", {g.op("Floor", {g.op("Mul", {cast(g, g.constant(Tensor::floats(lower)), dtype), bin_size})}), start}));
  Value* hi = clamp(
      g.op("Add", {g.op("Ceil", {g.op("Mul", {cast(g, g.constant(Tensor::floats(upper)), dtype), bin_size})}), start}));
  Value* positions = cast(g, g.op("Range", {g.constant_int(0), size(g, r.input, axis), g.constant_int(1)}), dtype);
  Value* inside = g.op("And", {g.op("Not", {g.op("Less", {positions, unsqueeze(g, lo, {2})})}),
                               g.op("Less", {positions, unsqueeze(g, hi, {2})})});
  return {cast(g, inside, dtype), g.op("Max", {g.op("Sub", {hi, lo}), scalar_like(g, 0.0, hi)})};
}

// ps_roi_pool(input, rois, spatial_scale, pooled_height, pooled_width) -> (output, channel_mapping)
std::vector<Value*> ps_roi_pool(Graph& g, const TorchNode& n, const Args& a) {
  const RoiArgs r = roi_args(n, a);
  Value* boxes = slice(g, r.rois, {1}, {1}, {5});
  Value* corners = round_half_away(g, g.op("Mul", {boxes, scalar_like(g, r.spatial_scale, boxes)}));  // x1 y1 x2 y2
  Value* start = slice(g, corners, {1}, {0}, {2});
  Value* length = g.op("Max", {g.op("Sub", {slice(g, corners, {1}, {2}, {4}), start}), scalar_like(g, 1.0, corners)});
  auto column = [&](Value* v, int64_t c) { return slice(g, v, {1}, {c}, {c + 1}); };
  const BinMasks rows = bin_masks(g, r, column(start, 1), column(length, 1), r.pooled_height, 2);
  const BinMasks cols = bin_masks(g, r, column(start, 0), column(length, 0), r.pooled_width, 3);
  Value* features = gather(g, r.input, batch_indices(g, r.rois), 0);  // [K, C, H, W]
  Value* sums = g.op("MatMul", {g.op("MatMul", {unsqueeze(g, rows.mask, {1}), features}),
                                transpose(g, unsqueeze(g, cols.mask, {1}), {0, 1, 3, 2})});  // [K, C, ph, pw]
  Value* area = g.op("Mul", {unsqueeze(g, rows.count, {1, 3}), unsqueeze(g, cols.count, {1, 2})});
  Value* means = g.op("Div", {sums, g.op("Max", {area, scalar_like(g, 1.0, area)})});
  return {position_sensitive(g, n, r, means), g.none()};
}

}  // namespace

void add_roi(Registrar& r) {
  // Same functions at 10 and 16: roi_align_op picks legacy boxes / coordinate_transformation_mode.
  r.add("torchvision::roi_align", 10, roi_align);
  r.add("torchvision::roi_align", 16, roi_align);
  r.add("torchvision::ps_roi_align", 10, ps_roi_align);
  r.add("torchvision::ps_roi_align", 16, ps_roi_align);
  r.add("torchvision::roi_pool", 9, roi_pool);
  r.add("torchvision::ps_roi_pool", 11, ps_roi_pool);  // Range
}

}  // namespace onnxport::torchvision
