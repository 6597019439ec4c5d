// Advanced indexing: x[idx], x[i, j], x[:, mask] (aten::index), x[idx] = v (aten::index_put),
// and nonzero. Bool masks become int64 index rows through NonZero; a lone mask uses Compress.
#include "tensor_ops.h"

namespace onnxport::tensor {
namespace {

using namespace helpers;

struct Indexed {
  int64_t pos;   // the dim of x it indexes
  Value* index;  // int64 (or a bool mask covering mask_rank dims from pos)
  bool mask = false;
  int64_t mask_rank = 1;
};

// The non-None entries of the indices list, with the dims they index.
std::vector<Indexed> indexed_dims(const Args& a, size_t arg) {
  std::vector<Indexed> out;
  int64_t pos = 0;
  for (Value* v : a.list(arg)) {
    if (v->is_none()) {
      ++pos;
      continue;
    }
    Indexed e{pos, v};
    const DType dt = dtype_of(v);
    e.mask = dt == DType::Bool || dt == DType::UInt8;
    if (e.mask) e.mask_rank = rank_of(v, a.node().kind + " bool mask index");
    pos += e.mask ? e.mask_rank : 1;
    out.push_back(e);
  }
  if (out.empty()) a.fail(arg, "at least one index tensor");
  return out;
}

// Bool masks turned into one int64 index per masked dim (rows of NonZero).
std::vector<Indexed> as_int_indices(Graph& g, const std::vector<Indexed>& in) {
  std::vector<Indexed> out;
  for (const Indexed& e : in) {
    if (!e.mask) {
      out.push_back({e.pos, as_index(g, e.index)});
      continue;
    }
    Value* nz = g.op("NonZero", {cast(g, e.index, DType::Bool)});
    for (int64_t k = 0; k < e.mask_rank; ++k) out.push_back({e.pos + k, gather(g, nz, g.constant_int(k), 0)});
  }
  return out;
}

bool consecutive(const std::vector<Indexed>& idx) {
  for (size_t i = 1; i < idx.size(); ++i)
    if (idx[i].pos != idx[i - 1].pos + 1) return false;
  return true;
}

// x with dims [pos, pos + count) merged into one (Reshape; 0 copies the leading dims).
Value* merge_dims(Graph& g, Value* x, int64_t rank, int64_t pos, int64_t count) {
  if (count == 1) return x;
  std::vector<int64_t> head(static_cast<size_t>(pos), 0);
  head.push_back(-1);
  Value* tail = shape_range(g, x, pos + count, rank);
  return reshape(g, x, concat(g, {g.constant_ints(head), tail}, 0));
}

// x[..., mask, ...] with a single mask: merge the masked dims and Compress along them.
Value* index_by_mask(Graph& g, Value* x, int64_t rank, const Indexed& m) {
  Value* merged = merge_dims(g, x, rank, m.pos, m.mask_rank);
  Value* flat_mask = reshape(g, cast(g, m.index, DType::Bool), std::vector<int64_t>{-1});
  return g.op("Compress", {merged, flat_mask}, {{"axis_i", m.pos}});
}

// The order of x's dims that puts the indexed dims first; the rest keep their order.
std::vector<int64_t> indexed_first(const std::vector<Indexed>& idx, int64_t rank) {
  std::vector<int64_t> perm;
  std::vector<bool> used(static_cast<size_t>(rank), false);
  for (const Indexed& e : idx) {
    perm.push_back(e.pos);
    used[static_cast<size_t>(e.pos)] = true;
  }
  for (int64_t d = 0; d < rank; ++d)
    if (!used[static_cast<size_t>(d)]) perm.push_back(d);
  return perm;
}

bool is_identity(const std::vector<int64_t>& perm) { return perm == iota(static_cast<int64_t>(perm.size())); }

std::vector<int64_t> inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

int64_t broadcast_rank(const std::vector<Indexed>& idx, const std::string& what) {
  int64_t r = 0;
  for (const Indexed& e : idx) r = std::max(r, rank_of(e.index, what + " index"));
  return r;
}

// Torch puts the broadcast index dims where the first indexed dim was when the indexed dims are
// adjacent, and in front otherwise; `perm` moves dims [0, nb) (index dims, in front) there.
std::vector<int64_t> index_dims_at(int64_t nb, int64_t pos, int64_t rest) {
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < pos; ++i) perm.push_back(nb + i);
  for (int64_t i = 0; i < nb; ++i) perm.push_back(i);
  for (int64_t i = pos; i < rest; ++i) perm.push_back(nb + i);
  return perm;
}

Value* index_op(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t rank = rank_of(x, n.kind + " input");
  std::vector<Indexed> given = indexed_dims(a, 1);
  if (given.size() == 1 && given[0].mask) return index_by_mask(g, x, rank, given[0]);
  std::vector<Indexed> idx = as_int_indices(g, given);
  if (idx.size() == 1) {
    const Indexed& e = idx[0];
    Value* i = g.opset() >= 11 ? e.index : wrap_negative(g, e.index, size(g, x, e.pos));
    return gather(g, x, i, e.pos);
  }
  // Several indices: move the indexed dims in front, merge them, Gather one linear index.
  const auto k = static_cast<int64_t>(idx.size());
  const std::vector<int64_t> perm = indexed_first(idx, rank);
  Value* xt = is_identity(perm) ? x : transpose(g, x, perm);
  Value* linear = nullptr;
  for (const Indexed& e : idx) {
    Value* dim_size = size(g, x, e.pos);
    Value* i = wrap_negative(g, e.index, dim_size);
    linear = linear ? g.op("Add", {g.op("Mul", {linear, dim_size}), i}) : i;
  }
  Value* flat = merge_dims(g, xt, rank, 0, k);
  Value* out = gather(g, flat, linear, 0);
  if (!consecutive(idx) || idx[0].pos == 0) return out;
  const int64_t nb = broadcast_rank(idx, n.kind);
  return transpose(g, out, index_dims_at(nb, idx[0].pos, rank - k));
}

bool single_element(const Value* v) {
  auto s = static_shape(v);
  if (!s) return false;
  for (int64_t d : *s)
    if (d != 1) return false;
  return true;
}

// x[mask] = v with one value: Where, at every opset.
Value* put_by_mask(Graph& g, Value* x, int64_t rank, const Indexed& m, Value* v, bool accumulate) {
  Value* mask = cast(g, m.index, DType::Bool);
  const int64_t trailing = rank - m.pos - m.mask_rank;
  if (trailing > 0) mask = unsqueeze(g, mask, iota(trailing, m.mask_rank));
  if (rank_of(v, "aten::index_put values") > 0) v = reshape(g, v, std::vector<int64_t>{});
  Value* filled = accumulate ? g.op("Add", {x, v}) : v;
  return g.op("Where", {mask, filled, x});
}

Value* index_put(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t rank = rank_of(x, n.kind + " input");
  Value* values = cast(g, a.tensor(2), x->dtype());
  const bool accumulate = !a.is_none(3) && a.b(3);
  std::vector<Indexed> given = indexed_dims(a, 1);
  if (given.size() == 1 && given[0].mask && single_element(values))
    return put_by_mask(g, x, rank, given[0], values, accumulate);
  if (g.opset() < 11)
    throw ArgumentError(n.kind +
                        " with index tensors (or a mask with several values) needs opset 11 or later "
                        "(ScatterND); target is opset " +
                        std::to_string(g.opset()));
  std::vector<Indexed> idx = as_int_indices(g, given);
  const auto k = static_cast<int64_t>(idx.size());
  const std::vector<int64_t> perm = indexed_first(idx, rank);
  const bool moved = !is_identity(perm);
  Value* xt = moved ? transpose(g, x, perm) : x;

  std::vector<Value*> ints;
  for (const Indexed& e : idx) ints.push_back(wrap_negative(g, e.index, size(g, x, e.pos)));
  Value* bshape = broadcast_shape(g, ints);
  std::vector<Value*> columns;
  for (Value* i : ints) columns.push_back(unsqueeze(g, g.op("Expand", {i, bshape}), {-1}));
  Value* nd_index = concat(g, columns, -1);

  // values broadcast against torch's result layout, then reordered to ScatterND's [index..., rest...].
  Value* rest = shape_range(g, xt, k, rank);
  const bool in_place = consecutive(idx) && idx[0].pos > 0;
  Value* target =
      in_place
          ? concat(g, {slice(g, rest, {0}, {0}, {idx[0].pos}), bshape, slice(g, rest, {0}, {idx[0].pos}, {rank - k})},
                   0)
          : concat(g, {bshape, rest}, 0);
  Value* updates = g.op("Expand", {values, target});
  if (in_place) {
    const int64_t nb = broadcast_rank(idx, n.kind);
    updates = transpose(g, updates, inverse(index_dims_at(nb, idx[0].pos, rank - k)));
  }
  Value* out;
  if (!accumulate) {
    out = g.op("ScatterND", {xt, nd_index, updates});
  } else if (g.opset() >= 16) {
    out = g.op("ScatterND", {xt, nd_index, updates}, {{"reduction_s", "add"}});
  } else {
    // Before opset 16 (as torch.onnx does): repeated indices add only once.
    Value* zeros = g.op("Mul", {xt, scalar_like(g, 0, xt)});
    out = g.op("Add", {xt, g.op("ScatterND", {zeros, nd_index, updates})});
  }
  return moved ? transpose(g, out, inverse(perm)) : out;
}

Value* nonzero(Graph& g, const TorchNode&, const Args& a) {
  return transpose(g, g.op("NonZero", {a.tensor(0)}), {1, 0});
}

// torch.nonzero(x, as_tuple=True): one 1-d index per dim.
Value* nonzero_numpy(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t rank = rank_of(x, n.kind + " input");
  Value* nz = g.op("NonZero", {x});
  std::vector<Value*> rows;
  for (int64_t d = 0; d < rank; ++d) rows.push_back(gather(g, nz, g.constant_int(d), 0));
  return g.list(rows);
}

}  // namespace

void add_advanced_index(Registrar& r) {
  r.add("aten::index", 9, index_op);
  add_with_inplace(r, "aten::index_put", 9, index_put);
  r.add("aten::_index_put_impl_", 9, index_put);
  r.add("aten::nonzero", 9, nonzero);
  r.add("aten::nonzero_numpy", 9, nonzero_numpy);
}

}  // namespace onnxport::tensor
