// Resizing: aten::upsample_* (the .vec overloads tracing records, and the per-dim-scales ones),
// aten::__interpolate (scripted F.interpolate builtin) and aten::grid_sampler.
//
// Opset 9 has Upsample and opset 10 Resize-10, both taking per-dim scales and mapping output
// coordinates back with x / scale ("asymmetric"): that is PyTorch's nearest mode, but not its
// linear modes (half-pixel or align_corners), which are errors below opset 11. From opset 11
// Resize has coordinate_transformation_mode and cubic_coeff_a, and can take target sizes.
// PyTorch's align_corners=False mapping is ONNX's half_pixel (not pytorch_half_pixel, which maps
// an output of length 1 to source 0 where PyTorch takes the window's centre); Resize clamps
// linear source coordinates at 0 as PyTorch does.
#include <cmath>

#include "nn.h"
#include "onnxport/helpers.h"

namespace onnxport::nn {
namespace {

using namespace helpers;

enum class Interp { Nearest, NearestExact, Linear, Cubic };

// What to resize to: exactly one of `sizes` (a TorchScript int list / 1-d tensor of the spatial
// output sizes) and `scales` (per spatial dim) is set.
struct Target {
  Value* sizes = nullptr;
  std::vector<double> scales;
  Value* run_time_scales = nullptr;  // a 1-d float64 tensor of factors known at run time only
};

Value* run_time_scales(Graph& g, Value* given, size_t nd);

const char* interp_name(Interp m) {
  switch (m) {
    case Interp::Nearest: return "nearest";
    case Interp::NearestExact: return "nearest-exact";
    case Interp::Linear: return "linear";
    case Interp::Cubic: return "cubic";
  }
  return "?";
}

size_t spatial_rank(const TorchNode& n, const Value* x, size_t fallback) {
  if (auto r = x->rank(); r && *r >= 3) return static_cast<size_t>(*r - 2);
  if (fallback) return fallback;
  throw ArgumentError(n.kind + ": the input's rank must be known (got " + x->describe() + ")");
}

// Scales repeated per spatial dim (a single value means every dim).
std::vector<double> per_dim_scales(const TorchNode& n, std::vector<double> s, size_t nd) {
  if (s.size() == 1 && nd > 1) s.assign(nd, s[0]);
  if (s.size() != nd)
    throw ArgumentError(n.kind + ": got " + std::to_string(s.size()) + " scale factors for " + std::to_string(nd) +
                        " spatial dims");
  return s;
}

// upsample_*(input, output_size, [align_corners,] scale_factors) and the forms with one optional
// float per dim after align_corners: output_size wins when present (as in PyTorch).
Target upsample_target(Graph& g, const TorchNode& n, const Args& a, size_t size_arg, size_t scales_arg, size_t nd) {
  Target t;
  if (!a.is_none(size_arg)) {
    t.sizes = a.at(size_arg);
    return t;
  }
  if (a.size() <= scales_arg || a.is_none(scales_arg))
    throw ArgumentError(n.kind + ": neither output_size nor scale_factors is given");
  if (a.at(scales_arg)->is_list() || a.at(scales_arg)->maybe_floats()) {
    t.run_time_scales = run_time_scales(g, a.at(scales_arg), nd);
    if (!t.run_time_scales) t.scales = per_dim_scales(n, a.fs(scales_arg), nd);
    return t;
  }
  for (size_t i = scales_arg; i < a.size(); ++i) t.scales.push_back(a.f(i));
  t.scales = per_dim_scales(n, t.scales, nd);
  return t;
}

// ONNX computes an output size as floor(input * scale) in float32: nudge a ratio upwards until
// that gives `out` exactly.
float exact_scale(int64_t in, int64_t out) {
  float s = static_cast<float>(static_cast<double>(out) / static_cast<double>(in));
  while (std::floor(static_cast<float>(in) * s) < static_cast<float>(out)) s = std::nextafter(s, 2.0f * s + 1.0f);
  return s;
}

// Float scales [1, 1, s...] for Upsample/Resize-10 (float32 1-d tensor).
Value* scales_for_sizes(Graph& g, Value* x, Value* sizes_list, size_t nd) {
  auto shape = static_shape(x);
  auto sizes = sizes_list->maybe_ints();
  if (shape && sizes && sizes->size() == nd) {
    std::vector<float> s{1.0f, 1.0f};
    for (size_t i = 0; i < nd; ++i) s.push_back(exact_scale((*shape)[i + 2], (*sizes)[i]));
    return g.constant(Tensor::floats(s));
  }
  Value* spatial = slice(g, shape_of(g, x), {0}, {2}, {INT64_MAX});
  Value* ratio = g.op("Div", {cast(g, int_list(g, sizes_list), DType::Float), cast(g, spatial, DType::Float)});
  return concat(g, {g.constant(Tensor::floats({1.0f, 1.0f})), ratio}, 0);
}

Value* scales_constant(Graph& g, const std::vector<double>& scales) {
  std::vector<float> s{1.0f, 1.0f};
  for (double v : scales) s.push_back(static_cast<float>(v));
  return g.constant(Tensor::floats(s));
}

Value* resize_before_11(Graph& g, const TorchNode& n, Value* x, Interp mode, const Target& t, size_t nd) {
  if (mode != Interp::Nearest)
    throw ArgumentError(n.kind + " (" + interp_name(mode) +
                        " interpolation) needs opset 11 or later: Upsample/Resize before opset 11 only map "
                        "coordinates asymmetrically, which matches PyTorch's nearest mode only");
  Value* scales = t.sizes ? scales_for_sizes(g, x, t.sizes, nd) : scales_constant(g, t.scales);
  if (g.opset() < 10)
    if (const Tensor* c = scales->maybe_tensor())
      for (double s : c->as_doubles())
        if (s < 1.0)
          throw ArgumentError(n.kind + ": downsampling (scale " + std::to_string(s) +
                              " < 1) needs opset 10 or later: opset 9's Upsample only enlarges");
  if (g.opset() < 9) {  // Upsample-7: the scales are an attribute
    const Tensor* c = scales->maybe_tensor();
    if (!c)
      throw ArgumentError(n.kind +
                          ": at opset 8 the output size must be static (Upsample-7 takes constant scales); "
                          "export at opset 9 or later");
    std::vector<double> s = c->as_doubles();
    return g.op("Upsample", {x}, {{"mode_s", "nearest"}, {"scales_f", s}});
  }
  const std::string op = g.opset() >= 10 ? "Resize" : "Upsample";
  return g.op(op, {x, scales}, {{"mode_s", "nearest"}});
}

// Resize's attributes (opset 11+) for PyTorch's sampling in `mode`.
Attrs resize_11_attributes(Interp mode, bool align_corners) {
  Attrs attrs;
  switch (mode) {
    case Interp::Nearest:
      attrs = {{"mode_s", "nearest"}, {"coordinate_transformation_mode_s", "asymmetric"}, {"nearest_mode_s", "floor"}};
      break;
    case Interp::NearestExact:
      // PyTorch: floor((dst + 0.5) * in/out) = round-half-up of the half-pixel source coordinate.
      attrs = {{"mode_s", "nearest"},
               {"coordinate_transformation_mode_s", "half_pixel"},
               {"nearest_mode_s", "round_prefer_ceil"}};
      break;
    case Interp::Linear:
    case Interp::Cubic:
      attrs = {{"mode_s", mode == Interp::Linear ? "linear" : "cubic"},
               {"coordinate_transformation_mode_s", align_corners ? "align_corners" : "half_pixel"}};
      if (mode == Interp::Cubic) attrs.emplace_back("cubic_coeff_a_f", -0.75);
      break;
  }
  return attrs;
}

// Resize's omitted roi and scales: absent from 13, empty tensors before.
Value* omitted_resize_input(Graph& g) { return g.opset() >= 13 ? nullptr : g.constant(Tensor::floats({})); }

Value* resize_11(Graph& g, Value* x, Interp mode, bool align_corners, const Target& t) {
  const Attrs attrs = resize_11_attributes(mode, align_corners);
  Value* empty = omitted_resize_input(g);
  if (t.sizes) {
    Value* leading = slice(g, shape_of(g, x), {0}, {0}, {2});
    Value* sizes = concat(g, {leading, int_list(g, t.sizes)}, 0);
    return g.op("Resize", {x, empty, empty, sizes}, attrs);
  }
  return g.op("Resize", {x, empty, scales_constant(g, t.scales)}, attrs);
}

// The scale factors of __interpolate or upsample_* when one is a number computed at run time (a detection
// transform's `scale.item()` in script mode): a 1-d float64 tensor of `nd` factors, or nullptr
// when they are constants.
Value* run_time_scales(Graph& g, Value* given, size_t nd) {
  if (given->maybe_floats() || given->maybe_float()) return nullptr;
  std::vector<Value*> items = given->is_list() ? given->elements() : std::vector<Value*>{given};
  std::vector<Value*> parts;
  for (Value* item : items) {
    if (auto c = item->maybe_float()) {
      parts.push_back(g.constant(Tensor::scalar_of(DType::Double, *c)));
    } else if (!item->is_tensor()) {
      throw ArgumentError("a scale factor is " + item->describe() + ", expected a float");
    } else {
      parts.push_back(cast(g, item, DType::Double));
    }
    if (parts.back()->rank() != std::optional<int64_t>(1)) parts.back() = unsqueeze(g, parts.back(), {0});
  }
  if (parts.size() == 1 && nd > 1) parts.assign(nd, parts.front());
  if (parts.size() != nd)
    throw ArgumentError("scale_factor gives " + std::to_string(parts.size()) + " factors for " + std::to_string(nd) +
                        " spatial dims");
  return concat(g, parts, 0);
}

// Resize by factors known at run time (opset 11+). With recompute_scale_factor PyTorch computes
// the output size, floor(in * s) in double, and samples by in/out: Resize's `sizes`; so does
// align_corners, whose sampling, (in - 1) / (out - 1), ignores the factor (with `scales` ONNX's
// reference takes out as in * s unrounded, where ONNX Runtime and PyTorch round it). Otherwise
// the factors themselves: Resize's `scales` (1 for batch and channels).
Value* resize_by_run_time_scales(Graph& g, const TorchNode& n, Value* x, Interp mode, bool align_corners,
                                 Value* scales, size_t nd, bool recompute) {
  if (g.opset() < 11)
    throw ArgumentError(n.kind + ": a scale factor computed at run time needs Resize's scales input (opset 11)");
  if (recompute || align_corners) {
    Target t;
    Value* spatial = cast(g, slice(g, shape_of(g, x), {0}, {2}, {static_cast<int64_t>(nd) + 2}), DType::Double);
    t.sizes = cast(g, g.op("Floor", {g.op("Mul", {spatial, scales})}), DType::Int64);
    return resize_11(g, x, mode, align_corners, t);
  }
  Value* all = concat(g, {g.constant(Tensor::floats({1.0f, 1.0f})), cast(g, scales, DType::Float)}, 0);
  return g.op("Resize", {x, omitted_resize_input(g), all}, resize_11_attributes(mode, align_corners));
}

Value* resize(Graph& g, const TorchNode& n, Value* x, Interp mode, bool align_corners, const Target& t, size_t nd) {
  if (t.run_time_scales) return resize_by_run_time_scales(g, n, x, mode, align_corners, t.run_time_scales, nd, false);
  if (g.opset() < 11) return resize_before_11(g, n, x, mode, t, nd);
  return resize_11(g, x, mode, align_corners, t);
}

// upsample_nearest{1,2,3}d(input, output_size, scale_factors | scales...)
Symbolic upsample_nearest(size_t nd, Interp mode) {
  return [nd, mode](Graph& g, const TorchNode& n, const Args& a) {
    Value* x = a.tensor(0);
    return std::vector<Value*>{resize(g, n, x, mode, false, upsample_target(g, n, a, 1, 2, nd), nd)};
  };
}

// upsample_{linear1d,bilinear2d,trilinear3d,bicubic2d}(input, output_size, align_corners,
//                                                      scale_factors | scales...)
Symbolic upsample_interp(size_t nd, Interp mode) {
  return [nd, mode](Graph& g, const TorchNode& n, const Args& a) {
    Value* x = a.tensor(0);
    const bool align = !a.is_none(2) && a.b(2);
    return std::vector<Value*>{resize(g, n, x, mode, align, upsample_target(g, n, a, 1, 3, nd), nd)};
  };
}

// __interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor[, antialias])
Value* interpolate(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const size_t nd = spatial_rank(n, x, 0);
  const std::string mode = a.is_none(3) ? "nearest" : a.s(3);
  if (a.size() > 6 && !a.is_none(6) && a.b(6)) throw ArgumentError(n.kind + ": antialias=True has no ONNX equivalent");
  Interp interp;
  if (mode == "nearest")
    interp = Interp::Nearest;
  else if (mode == "nearest-exact")
    interp = Interp::NearestExact;
  else if (mode == "linear" || mode == "bilinear" || mode == "trilinear")
    interp = Interp::Linear;
  else if (mode == "bicubic")
    interp = Interp::Cubic;
  else
    throw ArgumentError(n.kind + ": mode '" + mode +
                        "' is not supported (use nearest, linear, bilinear, "
                        "trilinear or bicubic; 'area' is adaptive_avg_pool)");
  const bool align = !a.is_none(4) && a.b(4);
  Target t;
  if (!a.is_none(1)) {
    Value* s = a.at(1);
    if (auto one = s->maybe_int(); one && !s->is_list() && !s->maybe_ints())
      t.sizes = g.constant_ints(std::vector<int64_t>(nd, *one));
    else if (auto c = s->maybe_ints(); c && c->size() == 1 && nd > 1)
      t.sizes = g.constant_ints(std::vector<int64_t>(nd, (*c)[0]));
    else
      t.sizes = s;
  } else if (!a.is_none(2)) {
    const bool recompute = !a.is_none(5) && a.b(5);
    if (Value* scales = run_time_scales(g, a.at(2), nd))
      return resize_by_run_time_scales(g, n, x, interp, align, scales, nd, recompute);
    t.scales = per_dim_scales(n, a.fs(2), nd);
    if (recompute) {
      // recompute_scale_factor: PyTorch computes the output size and forgets the scale.
      auto shape = static_shape(x);
      if (!shape) throw ArgumentError(n.kind + ": recompute_scale_factor=True needs static spatial input sizes");
      std::vector<int64_t> sizes;
      for (size_t i = 0; i < nd; ++i)
        sizes.push_back(static_cast<int64_t>(std::floor(static_cast<double>((*shape)[i + 2]) * t.scales[i])));
      t.sizes = g.constant_ints(sizes);
      t.scales.clear();
    }
  } else {
    throw ArgumentError(n.kind + ": either size or scale_factor must be given");
  }
  return resize(g, n, x, interp, align, t, nd);
}

// grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners) -> GridSample (16)
Value* grid_sampler(Graph& g, const TorchNode& n, const Args& a) {
  // GridSample-20 calls bilinear and bicubic linear and cubic.
  static const char* modes[] = {"bilinear", "nearest", "bicubic"};
  static const char* modes_20[] = {"linear", "nearest", "cubic"};
  static const char* paddings[] = {"zeros", "border", "reflection"};
  const int64_t mode = a.i(2), padding = a.i(3);
  if (mode < 0 || mode > 2) a.fail(2, "interpolation mode 0 (bilinear), 1 (nearest) or 2 (bicubic)");
  if (padding < 0 || padding > 2) a.fail(3, "padding mode 0 (zeros), 1 (border) or 2 (reflection)");
  Value* x = a.tensor(0);
  if (auto r = x->rank(); r && *r != 4 && !(*r == 5 && g.opset() >= 20))
    throw ArgumentError(n.kind + ": ONNX GridSample takes 4-d input only before opset 20 (5-d from 20), got " +
                        x->describe());
  return g.op("GridSample", {x, a.tensor(1)},
              {{"mode_s", (g.opset() >= 20 ? modes_20 : modes)[mode]}, {"padding_mode_s", paddings[padding]}, {"align_corners_i", a.b(4) ? 1 : 0}});
}

// affine_grid_generator(theta, size, align_corners) -> AffineGrid (opset 20): the sampling grid
// of F.affine_grid for 2-d (size N, C, H, W) and 3-d (N, C, D, H, W) images.
Value* affine_grid_generator(Graph& g, const TorchNode&, const Args& a) {
  return g.op("AffineGrid", {a.tensor(0), int_list(g, a.at(1))}, {{"align_corners_i", a.b(2) ? 1 : 0}});
}

}  // namespace

void add_upsample(Registrar& r) {
  const char* dims[] = {"1d", "2d", "3d"};
  for (size_t nd = 1; nd <= 3; ++nd) {
    r.add(std::string("aten::upsample_nearest") + dims[nd - 1], 8, upsample_nearest(nd, Interp::Nearest));
    r.add(std::string("aten::_upsample_nearest_exact") + dims[nd - 1], 11, upsample_nearest(nd, Interp::NearestExact));
  }
  r.add("aten::upsample_linear1d", 8, upsample_interp(1, Interp::Linear));
  r.add("aten::upsample_bilinear2d", 8, upsample_interp(2, Interp::Linear));
  r.add("aten::upsample_trilinear3d", 8, upsample_interp(3, Interp::Linear));
  r.add("aten::upsample_bicubic2d", 11, upsample_interp(2, Interp::Cubic));
  r.add("aten::__interpolate", 8, interpolate);
  r.add("aten::grid_sampler", 16, grid_sampler);
  r.add("aten::affine_grid_generator", 20, affine_grid_generator);
}

}  // namespace onnxport::nn
