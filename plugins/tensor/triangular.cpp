// Triangles and diagonals: tril/triu (Trilu from opset 14, a mask before), diagonal, diag_embed, diag.
#include "tensor_ops.h"

namespace onnxport::tensor {
namespace {

using namespace helpers;

Tensor bool_matrix(int64_t rows, int64_t cols, const std::function<bool(int64_t, int64_t)>& keep) {
  std::vector<uint8_t> bytes;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) bytes.push_back(keep(i, j) ? 1 : 0);
  return Tensor(DType::Bool, {rows, cols}, bytes);
}

// The [rows, cols] mask of j - i <= k (lower) or j - i >= k (upper): a constant when both sizes
// and k are static, computed with Range (opset 11) otherwise. k: a 0-d int64 value.
Value* triangle_mask(Graph& g, const TorchNode& n, Value* x, Value* k, bool upper) {
  auto rows = static_dim(x, -2), cols = static_dim(x, -1);
  if (auto kc = k->maybe_int(); kc && rows && cols)
    return g.constant(bool_matrix(*rows, *cols, [&](int64_t i, int64_t j) { return upper ? j - i >= *kc : j - i <= *kc; }));
  if (g.opset() < 11)
    throw ArgumentError(n.kind + " on matrices of unknown size needs opset 11 or later (target is opset " +
                        std::to_string(g.opset()) + ")");
  const int64_t rank = rank_of(x, n.kind + " input");
  Value* zero = g.constant_int(0);
  Value* one = g.constant_int(1);
  Value* r = unsqueeze(g, g.op("Range", {zero, size(g, x, rank - 2), one}), {1});
  Value* c = g.op("Range", {zero, size(g, x, rank - 1), one});
  Value* diff = g.op("Sub", {c, r});
  return upper ? g.op("Not", {g.op("Less", {diff, k})}) : g.op("Not", {g.op("Greater", {diff, k})});
}

Symbolic triangle(bool upper) {
  return [upper](Graph& g, const TorchNode& n, const Args& a) -> std::vector<Value*> {
    Value* x = a.tensor(0);
    // The diagonal: a constant, or a number the model takes or computes (a 0-d int64 at run time).
    Value* k = a.size() < 2 || a.is_none(1) ? g.constant_int(0)
               : a.at(1)->maybe_int()      ? g.constant_int(*a.at(1)->maybe_int())
                                           : cast(g, a.tensor(1), DType::Int64);
    if (g.opset() >= 14) return {g.op("Trilu", {x, k}, {{"upper_i", upper ? 1 : 0}})};
    return {g.op("Where", {triangle_mask(g, n, x, k, upper), x, scalar_like(g, 0, x)})};
  };
}

// Positions of the diagonal with `offset` in a rows x cols matrix flattened row-major.
std::vector<int64_t> diagonal_positions(int64_t rows, int64_t cols, int64_t offset) {
  std::vector<int64_t> pos;
  const int64_t r0 = offset < 0 ? -offset : 0, c0 = offset > 0 ? offset : 0;
  for (int64_t i = 0; r0 + i < rows && c0 + i < cols; ++i) pos.push_back((r0 + i) * cols + c0 + i);
  return pos;
}

// x's dims except d1, d2, then d1, d2.
std::vector<int64_t> pair_last(int64_t rank, int64_t d1, int64_t d2) {
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != d1 && d != d2) perm.push_back(d);
  perm.push_back(d1);
  perm.push_back(d2);
  return perm;
}

// The diagonal of the last two dims of `moved` when their sizes are known only at run time:
// positions (r0 + i) * cols + c0 + i for i < min(rows - r0, cols - c0) (none if negative) in the
// flattened matrix, as Range (opset 11).
Value* run_time_diagonal(Graph& g, const std::string& what, Value* moved, int64_t rank, int64_t offset) {
  if (g.opset() < 11)
    throw ArgumentError(what + " of a matrix whose size is known only at run time needs opset 11 or later (target "
                               "is opset " + std::to_string(g.opset()) + ")");
  const int64_t r0 = offset < 0 ? -offset : 0, c0 = offset > 0 ? offset : 0;
  Value* rows = size(g, moved, rank - 2);
  Value* cols = size(g, moved, rank - 1);
  // Range gives nothing for a negative length; integer Min arrives at opset 12, so a Where.
  Value* row_room = g.op("Sub", {rows, g.constant_int(r0)});
  Value* col_room = g.op("Sub", {cols, g.constant_int(c0)});
  Value* length = g.op("Where", {g.op("Less", {row_room, col_room}), row_room, col_room});
  Value* i = g.op("Range", {g.constant_int(0), length, g.constant_int(1)});
  Value* positions = g.op("Add", {g.op("Mul", {g.op("Add", {i, g.constant_int(r0)}), cols}),
                                  g.op("Add", {i, g.constant_int(c0)})});
  Value* flat_shape = concat(g, {shape_range(g, moved, 0, rank - 2), g.constant_ints({-1})}, 0);
  return gather(g, reshape(g, moved, flat_shape), positions, rank - 2);
}

Value* diagonal_of(Graph& g, const std::string& what, Value* x, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t rank = rank_of(x, what + " input");
  const int64_t d1 = normalize_dim(dim1, rank), d2 = normalize_dim(dim2, rank);
  if (d1 == d2) throw ArgumentError(what + ": dim1 and dim2 are both " + std::to_string(d1));
  const std::vector<int64_t> perm = pair_last(rank, d1, d2);
  Value* moved = perm == iota(rank) ? x : transpose(g, x, perm);
  if (!static_dim(x, d1) || !static_dim(x, d2)) return run_time_diagonal(g, what, moved, rank, offset);
  const int64_t rows = *static_dim(x, d1), cols = *static_dim(x, d2);
  std::vector<int64_t> flat(static_cast<size_t>(rank - 2), 0);
  flat.push_back(rows * cols);
  const auto pos = diagonal_positions(rows, cols, offset);
  return gather(g, reshape(g, moved, flat), g.constant(Tensor::ints(pos)),
                rank - 2);
}

// diagonal(x, offset=0, dim1=0, dim2=1)
Value* diagonal(Graph& g, const TorchNode& n, const Args& a) {
  return diagonal_of(g, n.kind, a.tensor(0), a.is_none(1) ? 0 : a.i(1), a.is_none(2) ? 0 : a.i(2),
                     a.is_none(3) ? 1 : a.i(3));
}

Value* embed_diagonal(Graph& g, const std::string& what, Value* x, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t rank = rank_of(x, what + " input");
  if (rank == 0) throw ArgumentError(what + ": expected a tensor of at least 1 dimension");
  const int64_t len = static_size(x, rank - 1, what);
  Value* eye = g.constant(bool_matrix(len, len, [](int64_t i, int64_t j) { return i == j; }));
  Value* square = g.op("Where", {eye, unsqueeze(g, x, {rank}), scalar_like(g, 0, x)});  // [..., n, n]
  if (offset != 0) {
    const int64_t out_rank = rank + 1, shift = offset > 0 ? offset : -offset;
    std::vector<int64_t> pads(static_cast<size_t>(2 * out_rank), 0);
    // offset > 0: columns shifted right, a row added at the bottom; offset < 0: the other way.
    const size_t row = static_cast<size_t>(out_rank - 2), col = static_cast<size_t>(out_rank - 1);
    if (offset > 0) {
      pads[col] = shift;
      pads[static_cast<size_t>(out_rank) + row] = shift;
    } else {
      pads[row] = shift;
      pads[static_cast<size_t>(out_rank) + col] = shift;
    }
    square = pad_constant(g, square, pads);
  }
  const int64_t out_rank = rank + 1;
  const int64_t d1 = normalize_dim(dim1, out_rank), d2 = normalize_dim(dim2, out_rank);
  if (d1 == d2) throw ArgumentError(what + ": dim1 and dim2 are both " + std::to_string(d1));
  std::vector<int64_t> perm(static_cast<size_t>(out_rank));
  int64_t batch = 0;
  for (int64_t d = 0; d < out_rank; ++d) perm[static_cast<size_t>(d)] = d == d1 ? rank - 1 : d == d2 ? rank : batch++;
  return perm == iota(out_rank) ? square : transpose(g, square, perm);
}

// diag_embed(x, offset=0, dim1=-2, dim2=-1)
Value* diag_embed(Graph& g, const TorchNode& n, const Args& a) {
  return embed_diagonal(g, n.kind, a.tensor(0), a.size() > 1 && !a.is_none(1) ? a.i(1) : 0,
                        a.size() > 2 && !a.is_none(2) ? a.i(2) : -2, a.size() > 3 && !a.is_none(3) ? a.i(3) : -1);
}

// diag(x, diagonal=0): a 1-d x becomes a matrix, a 2-d x gives its diagonal.
Value* diag(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t offset = a.size() > 1 && !a.is_none(1) ? a.i(1) : 0;
  const int64_t rank = rank_of(x, n.kind + " input");
  if (rank == 1) return embed_diagonal(g, n.kind, x, offset, 0, 1);
  if (rank == 2) return diagonal_of(g, n.kind, x, offset, 0, 1);
  throw ArgumentError(n.kind + ": expected a 1-d or 2-d tensor, got " + x->describe());
}

}  // namespace

void add_triangular(Registrar& r) {
  add_with_inplace(r, "aten::tril", 9, triangle(false));
  add_with_inplace(r, "aten::triu", 9, triangle(true));
  r.add("aten::diagonal", 9, diagonal);
  r.add("aten::diag_embed", 9, diag_embed);
  r.add("aten::diag", 9, diag);
}

}  // namespace onnxport::tensor
