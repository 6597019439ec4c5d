// Shape and indexing ops: Reshape, Flatten, Squeeze/Unsqueeze, Transpose, Concat, Split, Slice,
// the Gather and Scatter ops, Expand, Tile, Pad, Shape, Size, ConstantOfShape, Range, NonZero,
// Compress, OneHot, Trilu, EyeLike, DepthToSpace/SpaceToDepth, Unique, ReverseSequence.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "2_eval/kernel.h"

namespace onnxport::core::eval {

namespace {

// --- helpers ------------------------------------------------------------------------------

int64_t product(at::IntArrayRef dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

std::vector<int64_t> concat_dims(at::IntArrayRef a, at::IntArrayRef b, at::IntArrayRef c = {}) {
  std::vector<int64_t> out(a.begin(), a.end());
  out.insert(out.end(), b.begin(), b.end());
  out.insert(out.end(), c.begin(), c.end());
  return out;
}

std::string dims_text(at::IntArrayRef dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

// An int list that the op took as attribute `name` before opset `input_from` and as input
// `input` since then; nullopt when not given.
std::optional<std::vector<int64_t>> ints_attr_or_input(const KernelContext& ctx, const char* name, size_t input,
                                                       int input_from) {
  if (ctx.opset() >= input_from)
    return ctx.has_input(input) ? std::optional<std::vector<int64_t>>(int_values(ctx.input(input))) : std::nullopt;
  return ctx.has_attr(name) ? std::optional<std::vector<int64_t>>(ctx.attr_ints(name)) : std::nullopt;
}

// Integer indices into an axis of `size` as int64 in [0, size): negative ones count from the end;
// KernelError for any outside [-size, size-1].
at::Tensor checked_indices(const KernelContext& ctx, const at::Tensor& indices, int64_t size) {
  at::Tensor i = indices.to(at::kLong);
  if (i.numel() == 0) return i;
  auto [lo, hi] = at::aminmax(i);
  if (lo.item<int64_t>() < -size || hi.item<int64_t>() >= size)
    ctx.fail("an index is outside [" + std::to_string(-size) + ", " + std::to_string(size - 1) + "]");
  return at::where(i < 0, i + size, i);
}

// Each index tuple of the last dimension of `indices` (k = its size) as a linear position into the
// dimensions `dims` (of which the first k are indexed), flattened to 1-d. Used by GatherND/ScatterND.
at::Tensor linear_positions(const KernelContext& ctx, const at::Tensor& indices, at::IntArrayRef dims) {
  const int64_t k = indices.size(-1);
  if (k > static_cast<int64_t>(dims.size()))
    ctx.fail("index tuples of length " + std::to_string(k) + " for " + std::to_string(dims.size()) + " dimensions");
  at::Tensor idx = indices.to(at::kLong).reshape({-1, k});
  at::Tensor lin = at::zeros({idx.size(0)}, at::kLong);
  for (int64_t j = 0; j < k; ++j) lin = lin * dims[j] + checked_indices(ctx, idx.select(1, j), dims[j]);
  return lin;
}

// --- reshaping ----------------------------------------------------------------------------

std::vector<EvalValue> reshape(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  auto shape = ints_attr_or_input(ctx, "shape", 1, 5);
  if (!shape) ctx.fail("the target shape is missing");
  const bool allow_zero = ctx.opset() >= 14 && ctx.attr_i("allowzero", 0) != 0;
  int inferred = 0;
  for (size_t i = 0; i < shape->size(); ++i) {
    int64_t& d = (*shape)[i];
    if (d == 0 && !allow_zero) {
      if (static_cast<int64_t>(i) >= x.dim()) ctx.fail("a 0 in the shape copies a dimension the input lacks");
      d = x.size(static_cast<int64_t>(i));
    } else if (d == -1) {
      ++inferred;
    } else if (d < 0) {
      ctx.fail("negative dimension " + std::to_string(d) + " in the shape");
    }
  }
  if (inferred > 1) ctx.fail("more than one -1 in the shape");
  return single(x.reshape(*shape));
}

std::vector<EvalValue> flatten(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const int64_t rank = x.dim();
  int64_t axis = ctx.attr_i("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) ctx.fail("axis " + std::to_string(ctx.attr_i("axis", 1)) + " is out of range");
  const auto sizes = x.sizes();
  return single(x.reshape({product(sizes.slice(0, axis)), product(sizes.slice(axis))}));
}

std::vector<EvalValue> squeeze(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const int64_t rank = x.dim();
  std::vector<bool> drop(rank, false);
  if (auto axes = ints_attr_or_input(ctx, "axes", 1, 13)) {
    for (int64_t a : *axes) {
      const int64_t axis = normalize_axis(a, rank, ctx);
      if (x.size(axis) != 1)
        ctx.fail("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(x.size(axis)));
      drop[axis] = true;
    }
  } else {
    for (int64_t i = 0; i < rank; ++i) drop[i] = x.size(i) == 1;
  }
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i]) shape.push_back(x.size(i));
  return single(x.reshape(shape));
}

std::vector<EvalValue> unsqueeze(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  auto axes = ints_attr_or_input(ctx, "axes", 1, 13);
  if (!axes) ctx.fail("axes are missing");
  const int64_t out_rank = x.dim() + static_cast<int64_t>(axes->size());
  std::vector<bool> inserted(out_rank, false);
  for (int64_t a : *axes) {
    const int64_t axis = normalize_axis(a, out_rank, ctx);
    if (inserted[axis]) ctx.fail("axis " + std::to_string(a) + " is repeated");
    inserted[axis] = true;
  }
  std::vector<int64_t> shape;
  int64_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i) shape.push_back(inserted[i] ? 1 : x.size(next++));
  return single(x.reshape(shape));
}

std::vector<EvalValue> transpose(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  std::vector<int64_t> perm = ctx.attr_ints("perm");
  if (!ctx.has_attr("perm"))
    for (int64_t i = x.dim() - 1; i >= 0; --i) perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != x.dim())
    ctx.fail("perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(x.dim()));
  return single(x.permute(perm));
}

// DCR (depth-column-row) or CRD rearrangement of NCHW depth into blocks of space.
std::vector<EvalValue> depth_to_space(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const int64_t b = ctx.attr_i("blocksize", 0);
  if (x.dim() != 4) ctx.fail("the input must be 4-d (NCHW)");
  if (b <= 0 || x.size(1) % (b * b) != 0) ctx.fail("channels are not a multiple of blocksize^2");
  const int64_t n = x.size(0), c = x.size(1) / (b * b), h = x.size(2), w = x.size(3);
  const std::string mode = ctx.opset() >= 11 ? ctx.attr_s("mode", "DCR") : "DCR";
  at::Tensor y;
  if (mode == "DCR")
    y = x.reshape({n, b, b, c, h, w}).permute({0, 3, 4, 1, 5, 2});
  else if (mode == "CRD")
    y = x.reshape({n, c, b, b, h, w}).permute({0, 1, 4, 2, 5, 3});
  else
    ctx.fail("unknown mode '" + mode + "'");
  return single(y.reshape({n, c, h * b, w * b}));
}

std::vector<EvalValue> space_to_depth(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const int64_t b = ctx.attr_i("blocksize", 0);
  if (x.dim() != 4) ctx.fail("the input must be 4-d (NCHW)");
  if (b <= 0 || x.size(2) % b != 0 || x.size(3) % b != 0) ctx.fail("height and width are not multiples of blocksize");
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2) / b, w = x.size(3) / b;
  return single(x.reshape({n, c, h, b, w, b}).permute({0, 3, 5, 1, 2, 4}).reshape({n, c * b * b, h, w}));
}

// --- joining and splitting ----------------------------------------------------------------

std::vector<EvalValue> concat(const KernelContext& ctx) {
  if (ctx.input_count() == 0) ctx.fail("no inputs");
  if (ctx.opset() >= 4 && !ctx.has_attr("axis")) ctx.fail("the axis attribute is missing");
  std::vector<at::Tensor> parts;
  for (size_t i = 0; i < ctx.input_count(); ++i) parts.push_back(ctx.input(i));
  return single(at::cat(parts, normalize_axis(ctx.attr_i("axis", 1), parts[0].dim(), ctx)));
}

std::vector<EvalValue> split(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const int64_t axis = normalize_axis(ctx.attr_i("axis", 0), x.dim(), ctx);
  const int64_t size = x.size(axis);
  auto sizes = ints_attr_or_input(ctx, "split", 1, 13);
  if (!sizes && ctx.opset() < 2 && ctx.has_input(1)) sizes = int_values(ctx.input(1));  // Split-1's optional input
  if (sizes && sizes->empty()) sizes.reset();                                           // an empty list means not given
  const auto n = static_cast<int64_t>(ctx.output_count());
  if (sizes && ctx.has_attr("num_outputs")) ctx.fail("both the split input and num_outputs are given");
  if (!sizes && ctx.opset() >= 18) {
    // Split-18: num_outputs pieces of ceil(size / num_outputs), the last one smaller.
    if (!ctx.has_attr("num_outputs")) ctx.fail("Split-18 needs the split input or the num_outputs attribute");
    const int64_t parts = ctx.attr_i("num_outputs", 0);
    if (parts < 1 || parts != n)
      ctx.fail("num_outputs is " + std::to_string(parts) + " for " + std::to_string(n) + " outputs");
    const int64_t piece = (size + parts - 1) / parts;
    sizes = std::vector<int64_t>();
    for (int64_t i = 0; i < parts; ++i) sizes->push_back(std::clamp<int64_t>(size - i * piece, 0, piece));
  } else if (!sizes) {
    if (n == 0 || size % n != 0)
      ctx.fail("axis of size " + std::to_string(size) + " does not split into " + std::to_string(n) + " equal parts");
    sizes = std::vector<int64_t>(n, size / n);
  }
  if (static_cast<int64_t>(sizes->size()) != n)
    ctx.fail("split has " + std::to_string(sizes->size()) + " entries for " + std::to_string(n) + " outputs");
  int64_t total = 0;
  for (int64_t s : *sizes) {
    if (s < 0) ctx.fail("negative split size");
    total += s;
  }
  if (total != size)
    ctx.fail("split sizes add up to " + std::to_string(total) + ", the axis has " + std::to_string(size));
  std::vector<EvalValue> out;
  for (auto& part : x.split_with_sizes(*sizes, axis)) out.emplace_back(part);
  return out;
}

std::vector<EvalValue> tile(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  std::vector<int64_t> repeats;
  if (ctx.opset() >= 6) {
    repeats = int_values(ctx.input(1));
    if (static_cast<int64_t>(repeats.size()) != x.dim())
      ctx.fail("repeats has " + std::to_string(repeats.size()) + " entries for rank " + std::to_string(x.dim()));
  } else {  // Tile-1: a count of copies along one axis
    repeats.assign(x.dim(), 1);
    repeats[normalize_axis(ctx.input(2).item<int64_t>(), x.dim(), ctx)] = ctx.input(1).item<int64_t>();
  }
  std::vector<int64_t> out_dims(repeats.size());
  for (size_t i = 0; i < repeats.size(); ++i) {
    if (repeats[i] < 0) ctx.fail("negative repeat count");
    if (__builtin_mul_overflow(repeats[i], x.size(static_cast<int64_t>(i)), &out_dims[i]))
      ctx.fail("repeats " + std::to_string(repeats[i]) + " overflow the dimension");
  }
  require_fits_in_memory(ctx, out_dims, x.scalar_type());
  return single(x.repeat(repeats));
}

std::vector<EvalValue> expand(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const auto shape = int_values(ctx.input(1));
  // Bidirectional broadcasting: the output may keep an input dimension where the shape has 1.
  const std::vector<int64_t> out_dims = at::infer_size(x.sizes(), shape);
  require_fits_in_memory(ctx, out_dims, x.scalar_type());
  return single(x.expand(out_dims).contiguous());
}

// --- slicing ------------------------------------------------------------------------------

// data[start:end:step] along one axis with ONNX's clamping; a negative step walks backwards.
at::Tensor slice_axis(const at::Tensor& x, int64_t axis, int64_t start, int64_t end, int64_t step) {
  const int64_t dim = x.size(axis);
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::min(std::max<int64_t>(start, 0), dim);
    end = std::min(std::max<int64_t>(end, 0), dim);
    return x.slice(axis, start, std::max(start, end), step);
  }
  start = std::min(std::max<int64_t>(start, 0), dim - 1);
  end = std::min(std::max<int64_t>(end, -1), dim - 1);
  const int64_t stride = -step;
  const int64_t count = start > end ? (start - end + stride - 1) / stride : 0;
  if (count == 0) return x.slice(axis, 0, 0);
  return x.slice(axis, start - (count - 1) * stride, start + 1, stride).flip(axis);
}

std::vector<EvalValue> slice(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const bool from_inputs = ctx.opset() >= 10;
  auto starts = ints_attr_or_input(ctx, "starts", 1, 10);
  auto ends = ints_attr_or_input(ctx, "ends", 2, 10);
  if (!starts || !ends) ctx.fail("starts and ends are required");
  auto axes = ints_attr_or_input(ctx, "axes", 3, 10);
  std::optional<std::vector<int64_t>> steps;
  if (from_inputs && ctx.has_input(4)) steps = int_values(ctx.input(4));
  const size_t n = starts->size();
  if (!axes) {
    axes.emplace();
    for (size_t i = 0; i < n; ++i) axes->push_back(static_cast<int64_t>(i));
  }
  if (!steps) steps = std::vector<int64_t>(n, 1);
  if (ends->size() != n || axes->size() != n || steps->size() != n)
    ctx.fail("starts, ends, axes and steps differ in length");
  at::Tensor y = x;
  std::vector<bool> seen(x.dim(), false);
  for (size_t i = 0; i < n; ++i) {
    const int64_t axis = normalize_axis((*axes)[i], x.dim(), ctx);
    if (seen[axis]) ctx.fail("axis " + std::to_string((*axes)[i]) + " is repeated");
    seen[axis] = true;
    if ((*steps)[i] == 0) ctx.fail("a step is 0");
    y = slice_axis(y, axis, (*starts)[i], (*ends)[i], (*steps)[i]);
  }
  return single(y);
}

// Pads one axis in edge or reflect mode (pads >= 0) by gathering mirrored or clamped positions.
at::Tensor pad_axis_by_index(const KernelContext& ctx, const at::Tensor& x, int64_t axis, int64_t before, int64_t after,
                             const std::string& mode) {
  const int64_t n = x.size(axis);
  if (n == 0) ctx.fail("cannot pad an empty axis in " + mode + " mode");
  at::Tensor pos = at::arange(-before, n + after, at::kLong);
  if (mode == "wrap") {
    pos = at::remainder(pos, n);
  } else if (mode == "edge" || n == 1) {
    pos = pos.clamp(0, n - 1);
  } else {
    const int64_t period = 2 * (n - 1);
    pos = at::remainder(pos, period);
    pos = at::where(pos >= n, period - pos, pos);
  }
  return x.index_select(axis, pos);
}

std::vector<EvalValue> pad(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const int64_t rank = x.dim();
  const std::string mode = ctx.attr_s("mode", "constant");
  // Pad-1 names the attribute paddings; Pad-2 pads; from Pad-11 it is an input.
  auto pads = ints_attr_or_input(ctx, ctx.opset() < 2 ? "paddings" : "pads", 1, 11);
  if (!pads) ctx.fail("pads are missing");
  if (ctx.opset() >= 18 && ctx.has_input(3)) {  // Pad-18's axes: pads name those axes only
    const std::vector<int64_t> axes = int_values(ctx.input(3));
    if (pads->size() != 2 * axes.size())
      ctx.fail("pads has " + std::to_string(pads->size()) + " entries for " + std::to_string(axes.size()) + " axes");
    std::vector<int64_t> all(static_cast<size_t>(2 * rank), 0);
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t d = normalize_axis(axes[i], rank, ctx);
      all[d] = (*pads)[i];
      all[d + rank] = (*pads)[i + axes.size()];
    }
    pads = all;
  }
  if (static_cast<int64_t>(pads->size()) != 2 * rank)
    ctx.fail("pads has " + std::to_string(pads->size()) + " entries for rank " + std::to_string(rank));
  std::vector<int64_t> out_dims;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = x.size(d);
    if (__builtin_add_overflow(size, (*pads)[d], &size) || __builtin_add_overflow(size, (*pads)[d + rank], &size))
      ctx.fail("pads overflow axis " + std::to_string(d));
    out_dims.push_back(std::max<int64_t>(size, 0));
    require_fits_in_memory(ctx, {out_dims.back()}, at::kLong);  // reflect/edge index along the axis
  }
  require_fits_in_memory(ctx, out_dims, x.scalar_type());
  if (mode == "constant") {
    at::Scalar value = ctx.opset() < 11   ? at::Scalar(static_cast<double>(ctx.attr_f("value", 0.f)))
                       : ctx.has_input(2) ? ctx.input(2).reshape({}).item()
                                          : at::Scalar(0);
    std::vector<int64_t> aten_pads;  // last axis first, (begin, end) pairs
    for (int64_t d = rank - 1; d >= 0; --d) {
      aten_pads.push_back((*pads)[d]);
      aten_pads.push_back((*pads)[d + rank]);
    }
    return single(at::constant_pad_nd(x, aten_pads, value));
  }
  if (mode != "reflect" && mode != "edge" && !(mode == "wrap" && ctx.opset() >= 19))
    ctx.fail("unknown mode '" + mode + "'");
  at::Tensor y = x;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t before = (*pads)[d], after = (*pads)[d + rank];
    if (before < 0 || after < 0)  // negative pads crop
      y = y.slice(d, std::max<int64_t>(-before, 0), y.size(d) - std::max<int64_t>(-after, 0));
    if (before > 0 || after > 0)
      y = pad_axis_by_index(ctx, y, d, std::max<int64_t>(before, 0), std::max<int64_t>(after, 0), mode);
  }
  return single(y);
}

// --- gather and scatter -------------------------------------------------------------------

std::vector<EvalValue> gather(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const at::Tensor& indices = ctx.input(1);
  const int64_t axis = normalize_axis(ctx.attr_i("axis", 0), x.dim(), ctx);
  const at::Tensor idx = checked_indices(ctx, indices, x.size(axis));
  const auto sizes = x.sizes();
  return single(x.index_select(axis, idx.reshape({-1}))
                    .reshape(concat_dims(sizes.slice(0, axis), indices.sizes(), sizes.slice(axis + 1))));
}

std::vector<EvalValue> gather_elements(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const int64_t axis = normalize_axis(ctx.attr_i("axis", 0), x.dim(), ctx);
  if (ctx.input(1).dim() != x.dim()) ctx.fail("indices and data differ in rank");
  return single(at::gather(x, axis, checked_indices(ctx, ctx.input(1), x.size(axis))));
}

std::vector<EvalValue> gather_nd(const KernelContext& ctx) {
  const at::Tensor& data = ctx.input(0);
  const at::Tensor& indices = ctx.input(1);
  const int64_t b = ctx.opset() >= 12 ? ctx.attr_i("batch_dims", 0) : 0;
  const int64_t r = data.dim(), q = indices.dim();
  if (b < 0 || b >= std::min(r, q)) ctx.fail("batch_dims must be below the ranks of data and indices");
  const auto dsizes = data.sizes(), isizes = indices.sizes();
  if (dsizes.slice(0, b) != isizes.slice(0, b)) ctx.fail("the batch dimensions of data and indices differ");
  const int64_t k = isizes[q - 1];
  if (k < 1 || k > r - b)
    ctx.fail("index tuples of length " + std::to_string(k) + " for data of rank " + std::to_string(r));
  const int64_t batch = product(dsizes.slice(0, b));
  const int64_t per_batch = product(dsizes.slice(b, k));  // positions the tuples address in one batch
  // Tuples become rows of the data viewed as [batch * per_batch, rest...].
  const int64_t tuples = product(isizes.slice(b, q - 1 - b));  // index tuples per batch
  at::Tensor lin = linear_positions(ctx, indices, dsizes.slice(b)).reshape({batch, tuples});
  lin = lin + at::arange(batch, at::kLong).unsqueeze(1) * per_batch;
  const auto rest = dsizes.slice(b + k);
  at::Tensor rows = data.reshape(concat_dims({batch * per_batch}, rest)).index_select(0, lin.reshape({-1}));
  return single(rows.reshape(concat_dims(isizes.slice(0, q - 1), rest)));
}

// ScatterElements' and ScatterND's reduction attribute (opset 16: add, mul; 18: max, min too, which
// torch.onnx 2.6 writes from 16 and ONNX Runtime runs there); Scatter never has one. Returned as
// ATen's reduce name ("sum", "prod", "amax", "amin").
std::string scatter_reduction(const KernelContext& ctx) {
  const std::string reduction =
      ctx.opset() >= 16 && ctx.node().op_type() != "Scatter" ? ctx.attr_s("reduction", "none") : "none";
  if (reduction == "none") return reduction;
  if (reduction == "add") return "sum";
  if (reduction == "mul") return "prod";
  if (reduction == "max" || reduction == "min") return "a" + reduction;
  ctx.fail("unknown reduction '" + reduction + "'");
}

std::vector<EvalValue> scatter_elements(const KernelContext& ctx) {
  const at::Tensor& data = ctx.input(0);
  const at::Tensor& updates = ctx.input(2);
  const int64_t axis = normalize_axis(ctx.attr_i("axis", 0), data.dim(), ctx);
  if (ctx.input(1).sizes() != updates.sizes()) ctx.fail("indices and updates differ in shape");
  if (updates.dim() != data.dim()) ctx.fail("updates and data differ in rank");
  const at::Tensor idx = checked_indices(ctx, ctx.input(1), data.size(axis));
  const std::string reduction = scatter_reduction(ctx);
  if (reduction == "none") return single(at::scatter(data, axis, idx, updates));
  return single(at::scatter_reduce(data, axis, idx, updates, reduction, true));
}

std::vector<EvalValue> scatter_nd(const KernelContext& ctx) {
  const at::Tensor& data = ctx.input(0);
  const at::Tensor& indices = ctx.input(1);
  const at::Tensor& updates = ctx.input(2);
  if (indices.dim() < 1) ctx.fail("indices must have rank >= 1");
  const auto dsizes = data.sizes();
  const int64_t k = indices.size(-1);
  if (k > data.dim()) ctx.fail("index tuples are longer than the data's rank");
  const auto rest = dsizes.slice(k);
  const auto expected = concat_dims(indices.sizes().slice(0, indices.dim() - 1), rest);
  if (updates.sizes() != at::IntArrayRef(expected))
    ctx.fail("updates have shape " + dims_text(updates.sizes()) + ", expected " + dims_text(expected));
  const at::Tensor lin = linear_positions(ctx, indices, dsizes);
  at::Tensor out = data.clone(at::MemoryFormat::Contiguous);
  at::Tensor rows = out.view(concat_dims({product(dsizes.slice(0, k))}, rest));
  const at::Tensor src = updates.reshape(concat_dims({lin.size(0)}, rest));
  const std::string reduction = scatter_reduction(ctx);
  if (reduction == "none")
    rows.index_copy_(0, lin, src);
  else if (reduction == "sum")
    rows.index_add_(0, lin, src);
  else
    rows.index_reduce_(0, lin, src, reduction, true);
  return single(out);
}

std::vector<EvalValue> compress(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  at::Tensor condition = ctx.input(1).to(at::kBool).reshape({-1});
  const bool has_axis = ctx.has_attr("axis");
  const int64_t axis = has_axis ? normalize_axis(ctx.attr_i("axis", 0), x.dim(), ctx) : 0;
  const at::Tensor source = has_axis ? x : x.reshape({-1});
  const int64_t size = source.size(axis);
  if (condition.size(0) > size) {
    if (condition.slice(0, size).any().item<bool>()) ctx.fail("condition selects past the end of the axis");
    condition = condition.slice(0, 0, size);
  }
  return single(source.index_select(axis, at::nonzero(condition).reshape({-1})));
}

std::vector<EvalValue> reverse_sequence(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const int64_t batch_axis = ctx.attr_i("batch_axis", 1), time_axis = ctx.attr_i("time_axis", 0);
  if (x.dim() < 2) ctx.fail("the input must have rank >= 2");
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0)))
    ctx.fail("batch_axis and time_axis must be 0 and 1 in some order");
  const int64_t steps = x.size(time_axis), batch = x.size(batch_axis);
  const at::Tensor lens = ctx.input(1).to(at::kLong).reshape({1, -1});
  if (lens.size(1) != batch) ctx.fail("sequence_lens does not have one length per batch entry");
  if (batch > 0 && (lens.min().item<int64_t>() < 0 || lens.max().item<int64_t>() > steps))
    ctx.fail("a sequence length is outside [0, " + std::to_string(steps) + "]");
  const at::Tensor t = at::arange(steps, at::kLong).unsqueeze(1);
  at::Tensor source = at::where(t < lens, lens - 1 - t, t);  // [time, batch]: where each output step reads
  if (time_axis == 1) source = source.t();
  std::vector<int64_t> index_shape{x.size(0), x.size(1)};
  index_shape.resize(x.dim(), 1);
  return single(at::gather(x, time_axis, source.reshape(index_shape).expand(x.sizes())));
}

// --- shape queries and generators ---------------------------------------------------------

std::vector<EvalValue> shape(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const int64_t rank = x.dim();
  auto bound = [&](const char* name, int64_t fallback) {
    int64_t v = ctx.opset() >= 15 ? ctx.attr_i(name, fallback) : fallback;
    if (v < 0) v += rank;
    return std::min(std::max<int64_t>(v, 0), rank);
  };
  const int64_t start = bound("start", 0), end = std::max(bound("end", rank), start);
  const auto sizes = x.sizes().slice(start, end - start);
  return single(at::tensor(std::vector<int64_t>(sizes.begin(), sizes.end()), at::kLong));
}

std::vector<EvalValue> size(const KernelContext& ctx) {
  return single(at::scalar_tensor(ctx.input(0).numel(), at::kLong));
}

std::vector<EvalValue> constant_of_shape(const KernelContext& ctx) {
  const auto dims = int_values(ctx.input(0));
  for (int64_t d : dims)
    if (d < 0) ctx.fail("negative dimension in the shape");
  at::Tensor value = ctx.attr_t("value").value_or(at::zeros({1}, at::kFloat));
  if (value.numel() != 1) ctx.fail("value must have exactly one element");
  require_fits_in_memory(ctx, dims, value.scalar_type());
  return single(at::empty(dims, value.options()).fill_(value.reshape({})));
}

std::vector<EvalValue> range(const KernelContext& ctx) {
  const at::Tensor &start = ctx.input(0), &limit = ctx.input(1), &delta = ctx.input(2);
  const auto type = start.scalar_type();
  if (limit.scalar_type() != type || delta.scalar_type() != type) ctx.fail("start, limit and delta differ in type");
  if (at::isFloatingType(type)) {
    const double s = start.item<double>(), l = limit.item<double>(), d = delta.item<double>();
    if (d == 0) ctx.fail("delta is 0");
    const double count = std::max(std::ceil((l - s) / d), 0.0);
    if (!(count < 9.2e18)) ctx.fail("the range holds more elements than a 64-bit size can count");
    const auto n = static_cast<int64_t>(count);
    require_fits_in_memory(ctx, {n}, at::kDouble);
    return single((at::arange(n, at::kDouble) * d + s).to(type));
  }
  const int64_t s = start.item<int64_t>(), l = limit.item<int64_t>(), d = delta.item<int64_t>();
  if (d == 0) ctx.fail("delta is 0");
  int64_t span = 0;
  if (d == std::numeric_limits<int64_t>::min() || (d > 0 ? __builtin_sub_overflow(l, s, &span) : __builtin_sub_overflow(s, l, &span)))
    ctx.fail("the range holds more elements than a 64-bit size can count");
  const int64_t step = d > 0 ? d : -d;
  const int64_t n = span > 0 ? span / step + (span % step != 0) : 0;
  require_fits_in_memory(ctx, {n}, at::kLong);
  return single((at::arange(n, at::kLong) * d + s).to(type));
}

std::vector<EvalValue> non_zero(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  // A scalar counts as a 1-element vector (numpy's and onnxruntime's behaviour).
  return single(at::nonzero(x.dim() == 0 ? x.reshape({1}) : x).t().contiguous());
}

std::vector<EvalValue> one_hot(const KernelContext& ctx) {
  const at::Tensor& indices = ctx.input(0);
  if (ctx.input(1).numel() != 1) ctx.fail("depth must have one element");
  const auto depth = static_cast<int64_t>(ctx.input(1).reshape({}).item<double>());
  if (depth < 1) ctx.fail("depth must be positive");
  std::vector<int64_t> out_dims = indices.sizes().vec();
  out_dims.push_back(depth);
  const at::Tensor& values = ctx.input(2);
  require_fits_in_memory(ctx, out_dims, values.scalar_type());
  if (values.numel() != 2) ctx.fail("values must be [off_value, on_value]");
  at::Tensor idx = indices.to(at::kLong);
  if (ctx.opset() >= 11) idx = at::where(idx < 0, idx + depth, idx);  // indices in [-depth, -1] count from the end
  // Indices outside [0, depth) match nothing: all off_value.
  const at::Tensor hot = idx.unsqueeze(-1) == at::arange(depth, at::kLong);
  const at::Tensor flat = values.reshape({2});
  at::Tensor y = at::where(hot, flat[1], flat[0]);
  return single(y.movedim(-1, normalize_axis(ctx.attr_i("axis", -1), indices.dim() + 1, ctx)));
}

std::vector<EvalValue> trilu(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  if (x.dim() < 2) ctx.fail("the input must have rank >= 2");
  const int64_t k = ctx.has_input(1) ? ctx.input(1).reshape({}).item<int64_t>() : 0;
  return single(ctx.attr_i("upper", 1) ? at::triu(x, k) : at::tril(x, k));
}

std::vector<EvalValue> eye_like(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  if (x.dim() != 2) ctx.fail("the input must be 2-d");
  const auto type =
      ctx.has_attr("dtype") ? scalar_type_of_onnx(static_cast<int32_t>(ctx.attr_i("dtype", 0))) : x.scalar_type();
  at::Tensor y = at::zeros(x.sizes(), at::TensorOptions().dtype(type));
  const int64_t k = ctx.attr_i("k", 0);
  if (k < y.size(1) && -k < y.size(0)) y.diagonal(k).fill_(1);
  return single(y);
}

// np.unique's four outputs; with sorted=0 the unique values keep the order of first occurrence.
std::vector<EvalValue> unique(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const bool has_axis = ctx.has_attr("axis");
  const int64_t axis = has_axis ? normalize_axis(ctx.attr_i("axis", 0), x.dim(), ctx) : 0;
  at::Tensor y, inverse, counts;
  if (has_axis)
    std::tie(y, inverse, counts) = at::unique_dim(x, axis, true, true, true);
  else
    std::tie(y, inverse, counts) = at::_unique2(x.reshape({-1}), true, true, true);
  inverse = inverse.reshape({-1});
  const int64_t k = counts.size(0);
  // First occurrences: a stable sort of the inverse groups each value's positions in order.
  const at::Tensor positions = std::get<1>(at::sort(inverse, /*stable=*/true, 0, false));
  at::Tensor first = positions.index_select(0, at::cumsum(counts, 0) - counts);
  if (!ctx.attr_i("sorted", 1)) {
    const at::Tensor order = at::argsort(first);
    const at::Tensor new_position = at::empty_like(order).scatter_(0, order, at::arange(k, at::kLong));
    y = y.index_select(axis, order);
    first = first.index_select(0, order);
    counts = counts.index_select(0, order);
    inverse = new_position.index_select(0, inverse);
  }
  return {EvalValue(y), EvalValue(first), EvalValue(inverse), EvalValue(counts)};
}

}  // namespace

void register_shape_kernels(KernelTable& table) {
  table["Reshape"] = {reshape, 1};
  table["Flatten"] = {flatten, 1};
  table["Squeeze"] = {squeeze, 1};
  table["Unsqueeze"] = {unsqueeze, 1};
  table["Transpose"] = {transpose, 1};
  table["DepthToSpace"] = {depth_to_space, 1};
  table["SpaceToDepth"] = {space_to_depth, 1};
  table["Concat"] = {concat, 1};
  table["Split"] = {split, 1, 18};
  table["Tile"] = {tile, 1};
  table["Expand"] = {expand, 8};
  table["Slice"] = {slice, 1};
  table["Pad"] = {pad, 1, 19};
  table["Gather"] = {gather, 1};
  table["GatherElements"] = {gather_elements, 11};
  table["GatherND"] = {gather_nd, 11};
  table["Scatter"] = {scatter_elements, 9};  // deprecated alias of ScatterElements without reduction
  table["ScatterElements"] = {scatter_elements, 11, 18};
  table["ScatterND"] = {scatter_nd, 11, 18};
  table["Compress"] = {compress, 9};
  table["ReverseSequence"] = {reverse_sequence, 10};
  table["Shape"] = {shape, 1};
  table["Size"] = {size, 1};
  table["ConstantOfShape"] = {constant_of_shape, 9};
  table["Range"] = {range, 11};
  table["NonZero"] = {non_zero, 9};
  table["OneHot"] = {one_hot, 9};
  table["Trilu"] = {trilu, 14};
  table["EyeLike"] = {eye_like, 9};
  table["Unique"] = {unique, 11};
}

}  // namespace onnxport::core::eval
