// Layout changes without arithmetic: flip/roll/rot90, movedim/numpy_T, unfold, repeat_interleave,
// tensor_split/hsplit/vsplit/dsplit, atleast_Nd, meshgrid, broadcast_tensors, as_strided, ...
#include <algorithm>
#include <limits>
#include <optional>

#include "tensor_ops.h"

namespace onnxport::tensor {
namespace {

using namespace helpers;

constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();

Value* flip(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t rank = rank_of(x, n.kind + " input");
  return flip_dims(g, x, normalize_dims(a.is(1), rank), n.kind);
}

Symbolic flip_fixed(int64_t dim) {
  return [dim](Graph& g, const TorchNode& n, const Args& a) -> std::vector<Value*> {
    return {flip_dims(g, a.tensor(0), {dim}, n.kind)};
  };
}

// One roll along dim: the last `shift` elements move to the front.
Value* roll_dim(Graph& g, Value* x, int64_t shift, int64_t dim) {
  if (auto len = static_dim(x, dim)) {
    if (*len == 0) return x;
    shift = ((shift % *len) + *len) % *len;
    if (shift == 0) return x;
    return concat(g, {slice(g, x, {dim}, {*len - shift}, {kEnd}), slice(g, x, {dim}, {0}, {*len - shift})}, dim);
  }
  if (shift == 0) return x;
  // Unknown length: |shift| must be smaller than it (as in torch.onnx); x[-s:] ++ x[:-s] either way.
  return concat(g, {slice(g, x, {dim}, {-shift}, {kEnd}), slice(g, x, {dim}, {0}, {-shift})}, dim);
}

// roll(x, shifts, dims); without dims the flattened tensor is rolled and reshaped back.
Value* roll(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const std::vector<int64_t> shifts = a.is(1);
  const std::vector<int64_t> dims = a.size() > 2 && !a.is_none(2) ? a.is(2) : std::vector<int64_t>{};
  if (dims.empty()) {
    if (shifts.size() != 1) a.fail(1, "one shift when no dims are given");
    Value* flat = reshape(g, x, std::vector<int64_t>{-1});
    return reshape(g, roll_dim(g, flat, shifts[0], 0), shape_of(g, x));
  }
  if (dims.size() != shifts.size()) a.fail(2, "as many dims as shifts");
  const int64_t rank = rank_of(x, n.kind + " input");
  for (size_t i = 0; i < dims.size(); ++i) x = roll_dim(g, x, shifts[i], normalize_dim(dims[i], rank));
  return x;
}

std::vector<int64_t> swapped(int64_t rank, int64_t a, int64_t b) {
  std::vector<int64_t> perm = iota(rank);
  std::swap(perm[static_cast<size_t>(a)], perm[static_cast<size_t>(b)]);
  return perm;
}

// rot90(x, k=1, dims=[0, 1])
Value* rot90(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t rank = rank_of(x, n.kind + " input");
  const int64_t k = ((a.is_none(1) ? 1 : a.i(1)) % 4 + 4) % 4;
  const std::vector<int64_t> dims = a.size() > 2 && !a.is_none(2) ? a.is(2) : std::vector<int64_t>{0, 1};
  if (dims.size() != 2) a.fail(2, "two dims");
  const int64_t d0 = normalize_dim(dims[0], rank), d1 = normalize_dim(dims[1], rank);
  if (d0 == d1) a.fail(2, "two different dims");
  switch (k) {
    case 1: return transpose(g, flip_dims(g, x, {d1}, n.kind), swapped(rank, d0, d1));
    case 2: return flip_dims(g, x, {d0, d1}, n.kind);
    case 3: return transpose(g, flip_dims(g, x, {d0}, n.kind), swapped(rank, d0, d1));
    default: return x;
  }
}

// movedim(x, source, destination) with ints or int lists.
Value* movedim(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t rank = rank_of(x, n.kind + " input");
  const std::vector<int64_t> src = normalize_dims(a.is(1), rank), dst = normalize_dims(a.is(2), rank);
  if (src.size() != dst.size()) a.fail(2, "as many destination dims as source dims");
  std::vector<int64_t> perm(static_cast<size_t>(rank), -1);
  std::vector<bool> moved(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < src.size(); ++i) {
    perm[static_cast<size_t>(dst[i])] = src[i];
    moved[static_cast<size_t>(src[i])] = true;
  }
  int64_t next = 0;
  for (int64_t& p : perm) {
    if (p != -1) continue;
    while (moved[static_cast<size_t>(next)]) ++next;
    p = next++;
  }
  return perm == iota(rank) ? x : transpose(g, x, perm);
}

// x.T: all dims reversed.
Value* numpy_t(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t rank = rank_of(x, n.kind + " input");
  if (rank < 2) return x;
  std::vector<int64_t> perm;
  for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
  return transpose(g, x, perm);
}

// x.mT / x.mH (x.adjoint() traces as mH) on real tensors: the last two dims swapped.
Value* matrix_t(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t rank = rank_of(x, n.kind + " input");
  if (rank < 2) throw ArgumentError(n.kind + " needs a tensor of at least 2 dims, got " + x->describe());
  return transpose(g, x, swapped(rank, rank - 2, rank - 1));
}

// unfold(x, dim, size, step): windows along dim become a new dim, each window a new last dim.
// Window w takes positions w * step + [0, size), count = (len - size) / step + 1 windows. With the
// dim's length, size and step known when exporting the positions are a constant; otherwise (a size
// or step computed in script, a dim of run-time length: torchaudio's pitch detection unfolds
// slices of a length that changes in a loop) they are computed with Range (opset 11).
// Along the last dim (dim=-1) the windows need no transpose, so the input's rank may be unknown
// there from opset 11 (Gather's negative axis): pitch detection unfolds a tensor reshaped to
// [-1] + shape[-1:], a list ONNX inference does not see the length of.
Value* unfold(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const std::optional<int64_t> known_rank = x->rank();
  const bool last_of_unknown_rank = !known_rank && a.i(1) == -1 && g.opset() >= 11;
  const int64_t rank = last_of_unknown_rank ? -1 : rank_of(x, n.kind + " input");
  if (rank == 0) throw ArgumentError(n.kind + " of a 0-d tensor is not supported");
  const int64_t dim = last_of_unknown_rank ? -1 : normalize_dim(a.i(1), rank);
  const std::optional<int64_t> width = a.at(2)->maybe_int(), step = a.at(3)->maybe_int();
  if (step && *step <= 0) a.fail(3, "a positive step");
  const std::optional<int64_t> len = static_dim(x, dim);
  Value* windows = nullptr;  // [..., count, size, ...]
  if (width && step && len) {
    if (*width > *len) a.fail(2, "a size not larger than the dim (" + std::to_string(*len) + ")");
    const int64_t count = (*len - *width) / *step + 1;
    std::vector<int64_t> positions;
    for (int64_t w = 0; w < count; ++w)
      for (int64_t i = 0; i < *width; ++i) positions.push_back(w * *step + i);
    windows = gather(g, x, g.constant(Tensor::ints(positions, {count, *width})), dim);
  } else {
    if (g.opset() < 11)
      throw ArgumentError(n.kind + ": a window size or step computed at run time, or a dim of run-time length (input " +
                          x->describe() + "), needs opset 11 or later (Range); the target is opset " +
                          std::to_string(g.opset()));
    auto scalar = [&](std::optional<int64_t> c, size_t i) {
      return c ? g.constant_int(*c) : reshape(g, cast(g, a.tensor(i), DType::Int64), std::vector<int64_t>{});
    };
    Value* size_v = scalar(width, 2);
    Value* step_v = scalar(step, 3);
    Value* zero = g.constant_int(0);
    Value* one = g.constant_int(1);
    Value* count = g.op("Add", {g.op("Div", {g.op("Sub", {size(g, x, dim), size_v}), step_v}), one});
    Value* starts = g.op("Mul", {g.op("Range", {zero, count, one}), step_v});
    Value* offsets = g.op("Range", {zero, size_v, one});
    windows = gather(g, x, g.op("Add", {unsqueeze(g, starts, {1}), unsqueeze(g, offsets, {0})}), dim);
  }
  if (last_of_unknown_rank) return windows;  // [..., count, size]
  std::vector<int64_t> perm;
  for (int64_t d = 0; d <= rank; ++d)
    if (d != dim + 1) perm.push_back(d);
  perm.push_back(dim + 1);
  return perm == iota(rank + 1) ? windows : transpose(g, windows, perm);
}

// Repeat counts known only at run time: element i of `dim` is taken repeats[i] times. Output
// position p takes the element whose cumulative count first exceeds p.
Value* repeat_interleave_runtime(Graph& g, const TorchNode& n, Value* x, Value* repeats, int64_t dim) {
  if (g.opset() < 11)
    throw ArgumentError(n.kind + ": repeats computed at run time need opset 11 (CumSum, Range); got opset " +
                        std::to_string(g.opset()));
  // One count (a number, or a tensor of one element) repeats every element that many times.
  Value* counts = g.op("Expand", {cast(g, repeats, DType::Int64), size(g, x, dim, true)});
  Value* ends = g.op("CumSum", {counts, g.constant_int(0)});
  Value* total = reduce(g, "ReduceSum", counts, {0}, false);
  Value* positions = g.op("Range", {g.constant_int(0), total, g.constant_int(1)});
  Value* passed = g.op("Not", {g.op("Less", {unsqueeze(g, positions, {1}), unsqueeze(g, ends, {0})})});
  Value* source = reduce(g, "ReduceSum", cast(g, passed, DType::Int64), {1}, false);
  return gather(g, x, source, dim);
}

// repeat_interleave(x, repeats: int | Tensor, dim=None, output_size=None)
Value* repeat_interleave(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  Value* reps = a.at(1);
  int64_t dim = 0;
  if (a.size() < 3 || a.is_none(2)) {
    x = reshape(g, x, std::vector<int64_t>{-1});
  } else {
    dim = dim_of(x, a.i(2), n.kind + " input");
  }
  const int64_t rank = rank_of(x, n.kind + " input");
  std::vector<int64_t> counts;
  if (auto i = reps->maybe_int())
    counts = {*i};
  else if (const Tensor* t = reps->maybe_tensor())
    counts = t->as_int64s();
  else
    return repeat_interleave_runtime(g, n, x, a.tensor(1), dim);
  if (counts.size() == 1) {
    // Each element repeated r times: a new dim of r after dim, then merged into it.
    const int64_t r = counts[0];
    std::vector<int64_t> tiles(static_cast<size_t>(rank + 1), 1);
    tiles[static_cast<size_t>(dim + 1)] = r;
    Value* tiled = g.op("Tile", {unsqueeze(g, x, {dim + 1}), g.constant_ints(tiles)});
    std::vector<int64_t> head(static_cast<size_t>(dim), 0);
    head.push_back(-1);
    return reshape(g, tiled, concat(g, {g.constant_ints(head), shape_range(g, x, dim + 1, rank)}, 0));
  }
  std::vector<int64_t> positions;
  for (size_t i = 0; i < counts.size(); ++i)
    for (int64_t k = 0; k < counts[i]; ++k) positions.push_back(static_cast<int64_t>(i));
  return gather(g, x, g.constant(Tensor::ints(positions)), dim);
}

// Pieces [bounds[i], bounds[i+1]) along dim, as a list.
Value* pieces(Graph& g, Value* x, int64_t dim, const std::vector<int64_t>& bounds) {
  std::vector<Value*> out;
  for (size_t i = 0; i + 1 < bounds.size(); ++i)
    out.push_back(slice(g, x, {dim}, {bounds[i]}, {std::max(bounds[i], bounds[i + 1])}));
  return g.list(out);
}

// Bounds of `sections` nearly equal pieces (the first len % sections one larger).
std::vector<int64_t> section_bounds(int64_t len, int64_t sections) {
  std::vector<int64_t> bounds{0};
  for (int64_t i = 0; i < sections; ++i)
    bounds.push_back(bounds.back() + len / sections + (i < len % sections ? 1 : 0));
  return bounds;
}

std::vector<int64_t> index_bounds(int64_t len, const std::vector<int64_t>& indices) {
  std::vector<int64_t> bounds{0};
  for (int64_t i : indices) bounds.push_back(std::clamp(i < 0 ? i + len : i, int64_t{0}, len));
  bounds.push_back(len);
  return bounds;
}

// The indices_or_sections argument: an int (sections), an int list or a 1-d tensor (indices);
// a 0-d tensor counts as sections.
bool split_points(const Value* v, std::vector<int64_t>& out) {
  if (const Tensor* t = v->maybe_tensor()) {
    out = t->as_int64s();
    return t->rank() == 0;
  }
  if (auto i = v->maybe_int(); i && !v->is_list() && !std::holds_alternative<std::vector<int64_t>>(v->constant())) {
    out = {*i};
    return true;
  }
  if (auto is = v->maybe_ints()) {
    out = *is;
    return false;
  }
  throw ArgumentError("expected a constant number of sections or constant split indices, found " + v->describe());
}

Value* split_at(Graph& g, const TorchNode& n, Value* x, const Value* how, int64_t dim, bool even) {
  const int64_t len = static_size(x, dim, n.kind);
  std::vector<int64_t> points;
  if (split_points(how, points)) {
    if (points[0] <= 0) throw ArgumentError(n.kind + ": the number of sections must be positive");
    if (even && len % points[0] != 0)
      throw ArgumentError(n.kind + ": dim " + std::to_string(dim) + " of size " + std::to_string(len) +
                          " does not split into " + std::to_string(points[0]) + " equal sections");
    return pieces(g, x, dim, section_bounds(len, points[0]));
  }
  return pieces(g, x, dim, index_bounds(len, points));
}

Value* tensor_split(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t dim = dim_of(x, a.size() > 2 && !a.is_none(2) ? a.i(2) : 0, n.kind + " input");
  return split_at(g, n, x, a.at(1), dim, false);
}

// hsplit (dim 1, or 0 for 1-d), vsplit (dim 0), dsplit (dim 2): sections must divide evenly.
Symbolic split_fixed(int64_t dim) {
  return [dim](Graph& g, const TorchNode& n, const Args& a) -> std::vector<Value*> {
    Value* x = a.tensor(0);
    const int64_t rank = rank_of(x, n.kind + " input");
    const int64_t d = dim == 1 && rank == 1 ? 0 : dim;
    if (d >= rank) throw ArgumentError(n.kind + " needs a tensor of at least " + std::to_string(d + 1) + " dims");
    return {split_at(g, n, x, a.at(1), d, true)};
  };
}

// atleast_Nd: 0-d -> [1]..., 1-d [n] -> [1, n] (2d) or [1, n, 1] (3d), 2-d [h, w] -> [h, w, 1] (3d).
Value* at_least(Graph& g, Value* x, int64_t want, const std::string& what) {
  const int64_t rank = rank_of(x, what + " input");
  if (rank >= want) return x;
  if (rank == 0) return reshape(g, x, std::vector<int64_t>(static_cast<size_t>(want), 1));
  if (want == 2) return unsqueeze(g, x, {0});
  if (rank == 1) return unsqueeze(g, x, {0, 2});
  return unsqueeze(g, x, {2});
}

Symbolic atleast(int64_t want) {
  return [want](Graph& g, const TorchNode& n, const Args& a) -> std::vector<Value*> {
    if (!a.at(0)->is_list()) return {at_least(g, a.tensor(0), want, n.kind)};
    std::vector<Value*> out;
    for (Value* v : a.list(0)) out.push_back(at_least(g, v, want, n.kind));
    return {g.list(out)};
  };
}

// meshgrid(tensors, indexing="ij"): every 1-d input spread along its own dim. "xy" is "ij" with the
// first two inputs (and outputs) swapped.
Value* meshgrid(Graph& g, const TorchNode&, const Args& a) {
  std::vector<Value*> items = a.list(0);
  if (items.empty()) a.fail(0, "a non-empty list of tensors");
  const std::string indexing = a.size() > 1 && !a.is_none(1) ? a.s(1) : "ij";
  if (indexing != "ij" && indexing != "xy") a.fail(1, "indexing 'ij' or 'xy'");
  const bool xy = indexing == "xy" && items.size() >= 2;
  if (xy) std::swap(items[0], items[1]);
  const auto count = static_cast<int64_t>(items.size());
  std::vector<Value*> flat, sizes;
  for (Value* v : items) {
    flat.push_back(reshape(g, v, std::vector<int64_t>{-1}));
    sizes.push_back(shape_of(g, flat.back()));
  }
  Value* shape = concat(g, sizes, 0);
  std::vector<Value*> out;
  for (int64_t i = 0; i < count; ++i) {
    std::vector<int64_t> along(static_cast<size_t>(count), 1);
    along[static_cast<size_t>(i)] = -1;
    Value* grid = g.op("Expand", {reshape(g, flat[static_cast<size_t>(i)], along), shape});
    out.push_back(grid);
  }
  if (xy) std::swap(out[0], out[1]);
  return g.list(out);
}

Value* broadcast_tensors(Graph& g, const TorchNode&, const Args& a) {
  std::vector<Value*> items = a.list(0);
  if (items.empty()) a.fail(0, "a non-empty list of tensors");
  Value* shape = broadcast_shape(g, items);
  std::vector<Value*> out;
  for (Value* v : items) {
    auto s = static_shape(v);
    auto target = shape->maybe_ints();
    out.push_back(s && target && *s == *target ? v : g.op("Expand", {v, shape}));
  }
  return g.list(out);
}

// as_strided(x, size, stride, storage_offset): a Gather from the flattened (contiguous) input
// with positions computed when exporting.
Value* as_strided(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  const std::vector<int64_t> sizes = a.is(1), strides = a.is(2);
  const int64_t offset = a.size() > 3 && !a.is_none(3) ? a.i(3) : 0;
  if (sizes.size() != strides.size()) a.fail(2, "as many strides as sizes");
  std::vector<int64_t> positions{offset};
  for (size_t d = 0; d < sizes.size(); ++d) {
    std::vector<int64_t> next;
    for (int64_t p : positions)
      for (int64_t i = 0; i < sizes[d]; ++i) next.push_back(p + i * strides[d]);
    positions = std::move(next);
  }
  Value* flat = reshape(g, x, std::vector<int64_t>{-1});
  return gather(g, flat, g.constant(Tensor::ints(positions, sizes)), 0);
}

Value* shape_as_tensor(Graph& g, const TorchNode&, const Args& a) { return shape_of(g, a.tensor(0)); }

Value* reshape_from_tensor(Graph& g, const TorchNode&, const Args& a) { return reshape(g, a.tensor(0), a.tensor(1)); }

// narrow_copy(x, dim, start, length) with constant bounds.
Value* narrow_copy(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t dim = dim_of(x, a.i(1), n.kind + " input");
  int64_t start = a.i(2);
  const int64_t length = a.i(3);
  if (start < 0) start += static_size(x, dim, n.kind + " with a negative start");
  return slice(g, x, {dim}, {start}, {start + length});
}

}  // namespace

void add_layout(Registrar& r) {
  r.add("aten::flip", 9, flip);
  r.add("aten::fliplr", 9, flip_fixed(1));
  r.add("aten::flipud", 9, flip_fixed(0));
  r.add("aten::roll", 9, roll);
  r.add("aten::rot90", 9, rot90);
  r.add("aten::movedim", 9, movedim);
  r.add("aten::moveaxis", 9, movedim);
  r.add("aten::numpy_T", 9, numpy_t);
  r.add("aten::mT", 9, matrix_t);
  r.add("aten::mH", 9, matrix_t);
  r.add("aten::unfold", 9, unfold);
  r.add("aten::repeat_interleave", 9, repeat_interleave);
  r.add("aten::tensor_split", 9, tensor_split);
  r.add("aten::hsplit", 9, split_fixed(1));
  r.add("aten::vsplit", 9, split_fixed(0));
  r.add("aten::dsplit", 9, split_fixed(2));
  r.add("aten::atleast_1d", 9, atleast(1));
  r.add("aten::atleast_2d", 9, atleast(2));
  r.add("aten::atleast_3d", 9, atleast(3));
  r.add("aten::meshgrid", 9, meshgrid);
  r.add("aten::broadcast_tensors", 9, broadcast_tensors);
  r.add("aten::as_strided", 9, as_strided);
  r.add("aten::_shape_as_tensor", 9, shape_as_tensor);
  r.add("aten::_reshape_from_tensor", 9, reshape_from_tensor);
  r.add("aten::narrow_copy", 9, narrow_copy);
}

}  // namespace onnxport::tensor
