// Joining and splitting. A Tensor[] result is returned as a List value; prim::ListUnpack
// (prim pack) then hands out its elements.
#include <functional>
#include <limits>

#include "onnxport/helpers.h"
#include "tensor_ops.h"

namespace onnxport::tensor {
namespace {

using namespace helpers;

bool is_legacy_empty(const Value* v) {
  auto shape = static_shape(v);
  return shape && shape->size() == 1 && (*shape)[0] == 0;
}

// torch.cat skips 1-d empty tensors (a legacy rule) and promotes dtypes.
Value* cat(Graph& g, const TorchNode& n, const Args& a) {
  // A list built in a loop: its pieces are only known at run time.
  if (a.at(0)->is_sequence()) return g.op("ConcatFromSequence", {a.at(0)}, {{"axis_i", a.is_none(1) ? 0 : a.i(1)}});
  std::vector<Value*> items;
  for (Value* v : a.list(0))
    if (!is_legacy_empty(v)) items.push_back(v);
  if (items.empty()) {
    if (a.list(0).empty()) throw ArgumentError(n.kind + ": expected a non-empty list of tensors");
    return a.list(0)[0];
  }
  int64_t dim = a.is_none(1) ? 0 : a.i(1);
  if (auto rank = items[0]->rank()) dim = normalize_dim(dim, *rank);
  return concat(g, promote(g, items), dim);
}

// Tensors of one dtype and shape joined along a new axis `dim` (non-negative).
Value* stacked(Graph& g, std::vector<Value*> items, int64_t dim) {
  for (Value*& v : items) v = unsqueeze(g, v, {dim});
  return items.size() == 1 ? items[0] : concat(g, items, dim);
}

Value* stack(Graph& g, const TorchNode& n, const Args& a) {
  if (a.at(0)->is_sequence())
    return g.op("ConcatFromSequence", {a.at(0)}, {{"axis_i", a.is_none(1) ? 0 : a.i(1)}, {"new_axis_i", 1}});
  std::vector<Value*> items = a.list(0);
  if (items.empty()) throw ArgumentError(n.kind + ": expected a non-empty list of tensors");
  int64_t dim = a.is_none(1) ? 0 : a.i(1);
  if (auto rank = items[0]->rank()) dim = normalize_dim(dim, *rank + 1);
  return stacked(g, promote(g, items), dim);
}

// pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"): each
// [L_i, *] tensor padded along dim 0 to the longest, then stacked ([B, L, *] batch first, else
// [L, B, *]). Lengths known at export pad with constants; a length known only at run time pads by
// max(L) - L_i computed in the graph (opset 11, where Pad takes its pads as an input).
// One Loop over an ONNX sequence: `each` of every element (0-d: a value per element), stacked
// along a new axis 0.
Value* map_sequence(Graph& g, Value* sequence, const std::function<Value*(Graph&, Value*)>& each) {
  Subgraph body;
  body.inputs = {Subgraph::Input{TensorType{DType::Int64, std::vector<Dim>{}}},
                 Subgraph::Input{TensorType{DType::Bool, std::vector<Dim>{}}}};
  body.build = [sequence, each](Graph& b, const std::vector<Value*>& in) {
    return std::vector<Value*>{in[1], each(b, b.op("SequenceAt", {sequence, in[0]}))};
  };
  Value* count = g.op("SequenceLength", {sequence});
  return g.op("Loop", {count, g.constant(Tensor::scalar_of(DType::Bool, 1))}, {{"body_g", body}}, 1)[0];
}

// 1-d int64 zeros, as many as the 1-d [1] `count` says.
Value* zeros_1d(Graph& g, Value* count) { return g.op("ConstantOfShape", {count}, {{"value_t", Tensor::ints({0})}}); }

// A list built at run time (an ONNX sequence, opset 11 on), whose tensors' rank ONNX inference may
// not know: one Loop finds the longest tensor, a second pads each to it (pads built for the rank
// each has), stacked along a new axis 0 (batch_first) as the Loop gives them.
Value* pad_run_time_list(Graph& g, Value* list, bool batch_first, double value, bool left) {
  Value* lengths = map_sequence(g, list, [](Graph& b, Value* t) { return size(b, t, 0); });
  Value* longest = reduce(g, "ReduceMax", lengths, {0}, /*keepdims=*/true);
  Value* padded = map_sequence(g, list, [&](Graph& b, Value* t) {
    Value* rank = shape_of(b, shape_of(b, t));
    Value* others = zeros_1d(b, b.op("Sub", {rank, b.constant_ints({1})}));
    Value* all = zeros_1d(b, rank);
    Value* added = b.op("Sub", {longest, size(b, t, 0, /*as_1d=*/true)});
    // ONNX pads: the begins of every dim, then the ends; only dim 0's is non-zero.
    Value* pads = left ? concat(b, {added, others, all}, 0) : concat(b, {all, added, others}, 0);
    std::vector<Value*> in{t, pads};
    if (value != 0.0) in.push_back(scalar_like(b, value, t));
    return b.op("Pad", in, {{"mode_s", "constant"}});
  });
  if (batch_first) return padded;
  // [n, L, ...] -> [L, n, ...] of any rank: through [n, L, product of the rest].
  Value* shape = shape_of(g, padded);
  Value* n = slice(g, shape, {0}, {0}, {1});
  Value* length = slice(g, shape, {0}, {1}, {2});
  Value* rest = slice(g, shape, {0}, {2}, {std::numeric_limits<int64_t>::max()});
  Value* flat = reshape(g, padded, concat(g, {n, length, reduce(g, "ReduceProd", rest, {0}, true)}, 0));
  return reshape(g, transpose(g, flat, {1, 0, 2}), concat(g, {length, n, rest}, 0));
}

Value* pad_sequence(Graph& g, const TorchNode& n, const Args& a) {
  const bool batch_first = !a.is_none(1) && a.b(1);
  const double value = a.is_none(2) ? 0.0 : a.f(2);
  const std::string side = n.num_inputs > 3 && !a.is_none(3) ? a.s(3) : "right";
  if (side != "left" && side != "right")
    throw ArgumentError(n.kind + ": padding_side must be 'left' or 'right', got '" + side + "'");
  const bool left = side == "left";
  if (a.at(0)->is_sequence()) return pad_run_time_list(g, a.at(0), batch_first, value, left);
  std::vector<Value*> items = promote(g, a.list(0));
  if (items.empty()) throw ArgumentError(n.kind + ": expected a non-empty list of tensors");
  const int64_t rank = rank_of(items[0], n.kind + " sequences[0]");
  if (rank < 1) throw ArgumentError(n.kind + ": the tensors must have at least one dimension");
  std::vector<std::optional<int64_t>> lengths;
  bool all_static = true;
  for (Value* v : items) {
    lengths.push_back(static_dim(v, 0));
    all_static = all_static && lengths.back().has_value();
  }
  // ONNX pads: the begins of every dim, then the ends; only dim 0's begin or end is non-zero.
  const size_t length_pad = left ? 0 : static_cast<size_t>(rank);
  // Before opset 11 Pad takes floating-point tensors only: integers (token ids) pad as doubles,
  // exactly up to 2^53.
  const DType dtype = dtype_of(items[0]);
  const bool via_double = g.opset() < 11 && dtype != DType::Float && dtype != DType::Double && dtype != DType::Float16;
  if (all_static) {
    int64_t longest = 0;
    for (const auto& l : lengths) longest = std::max(longest, *l);
    for (size_t i = 0; i < items.size(); ++i) {
      if (*lengths[i] == longest) continue;
      std::vector<int64_t> pads(static_cast<size_t>(2 * rank), 0);
      pads[length_pad] = longest - *lengths[i];
      items[i] = via_double ? cast(g, pad_constant(g, cast(g, items[i], DType::Double), pads, value), dtype)
                            : pad_constant(g, items[i], pads, value);
    }
  } else {
    if (g.opset() < 11)
      throw ArgumentError(n.kind + ": a sequence length known only at run time needs opset 11 or later (Pad's pads "
                          "as an input)");
    std::vector<Value*> sizes;
    for (Value* v : items) sizes.push_back(size(g, v, 0, /*as_1d=*/true));
    // ReduceMax and not Max, which takes int64 only from opset 12.
    Value* longest = reduce(g, "ReduceMax", concat(g, sizes, 0), {0}, /*keepdims=*/true);
    for (size_t i = 0; i < items.size(); ++i) {
      std::vector<Value*> pads(static_cast<size_t>(2 * rank), g.constant_ints({0}));
      pads[length_pad] = g.op("Sub", {longest, sizes[i]});
      std::vector<Value*> in{items[i], concat(g, pads, 0)};
      if (value != 0.0) in.push_back(scalar_like(g, value, items[i]));
      items[i] = g.op("Pad", in, {{"mode_s", "constant"}});
    }
  }
  return stacked(g, items, batch_first ? 0 : 1);
}

int64_t static_size_along(const Value* x, int64_t dim, const TorchNode& n) {
  if (auto s = static_dim(x, dim)) return *s;
  throw ArgumentError(n.kind + " needs the size of dim " + std::to_string(dim) + " of its input (" + x->describe() +
                      ") to be static: the number of pieces must be known when exporting");
}

// Pieces of `piece` elements (the last one smaller) covering `total`.
std::vector<int64_t> even_pieces(int64_t total, int64_t piece) {
  std::vector<int64_t> sizes;
  for (int64_t done = 0; done < total; done += piece) sizes.push_back(std::min(piece, total - done));
  if (sizes.empty()) sizes.push_back(0);
  return sizes;
}

// From opset 11 a list whose length depends on a run-time size is an ONNX sequence; prim::ListUnpack
// and __getitem__ take its items from there.
bool as_run_time_sequence(Graph& g, const Value* x, int64_t dim) { return !static_dim(x, dim) && g.opset() >= 11; }

Value* chunk(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  int64_t dim = a.is_none(2) ? 0 : a.i(2);
  if (!a.at(1)->maybe_int()) {  // a count the model computes (x.size(0) under dynamic axes)
    if (g.opset() < 11)
      throw ArgumentError(n.kind + ": a chunk count computed at run time needs opset 11 or later (ONNX sequences)");
    if (auto rank = x->rank()) dim = normalize_dim(dim, *rank);
    Value* parts = int_list(g, g.list({a.at(1)}));
    return split_in_pieces_to_sequence(g, x, chunk_piece(g, size(g, x, dim, /*as_1d=*/true), parts), dim);
  }
  const int64_t chunks = a.i(1);
  if (chunks <= 0) throw ArgumentError(n.kind + ": chunks must be positive, got " + std::to_string(chunks));
  if (as_run_time_sequence(g, x, dim))
    return split_in_pieces_to_sequence(g, x, chunk_piece(g, size(g, x, dim, /*as_1d=*/true), chunks), dim);
  const int64_t total = static_size_along(x, dim, n);
  const int64_t piece = (total + chunks - 1) / chunks;
  return g.list(split(g, x, even_pieces(total, std::max<int64_t>(piece, 1)), dim));
}

// Pieces whose sizes are only known at run time, one per element of `sizes` (a list of ints
// and 0-d tensors): a Split with a sizes input from opset 13; before, Slices between running sums.
std::vector<Value*> split_by_run_time_sizes(Graph& g, const TorchNode& n, Value* x, Value* sizes, int64_t dim) {
  const int64_t count = static_cast<int64_t>(sizes->elements().size());
  Value* lengths = int_list(g, sizes);
  if (g.opset() >= 13) return g.op("Split", {x, lengths}, {{"axis_i", dim}}, static_cast<int>(count));
  if (g.opset() < 11) throw ArgumentError(n.kind + ": split sizes computed at run time need opset 11 or later");
  Value* ends = g.op("CumSum", {lengths, g.constant_int(0)});
  Value* starts = g.op("Sub", {ends, lengths});
  Value* axes = g.constant_ints({dim});
  std::vector<Value*> pieces;
  for (int64_t i = 0; i < count; ++i) {
    Value* at = g.constant_ints({i});
    pieces.push_back(slice(g, x, gather(g, starts, at, 0), gather(g, ends, at, 0), axes, nullptr));
  }
  return pieces;
}

// split(x, split_size: int | split_sizes: int[], dim)
Value* split_op(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  int64_t dim = a.is_none(2) ? 0 : a.i(2);
  std::vector<int64_t> sizes;
  if (a.at(1)->is_list() && !a.at(1)->maybe_ints()) {
    if (auto rank = x->rank()) dim = normalize_dim(dim, *rank);
    return g.list(split_by_run_time_sizes(g, n, x, a.at(1), dim));
  }
  if (a.at(1)->is_list() || std::holds_alternative<std::vector<int64_t>>(a.at(1)->constant())) {
    sizes = a.is(1);
  } else {
    const int64_t piece = a.i(1);
    if (piece <= 0) throw ArgumentError(n.kind + ": split_size must be positive, got " + std::to_string(piece));
    if (as_run_time_sequence(g, x, dim)) return split_in_pieces_to_sequence(g, x, g.constant_ints({piece}), dim);
    sizes = even_pieces(static_size_along(x, dim, n), piece);
  }
  return g.list(split(g, x, sizes, dim));
}

Value* unbind(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t dim = a.is_none(1) ? 0 : a.i(1);
  if (as_run_time_sequence(g, x, dim)) return g.op("SplitToSequence", {x}, {{"axis_i", dim}, {"keepdims_i", 0}});
  const int64_t total = static_size_along(x, dim, n);
  std::vector<Value*> pieces = split(g, x, std::vector<int64_t>(static_cast<size_t>(total), 1), dim);
  for (Value*& p : pieces) p = squeeze(g, p, {dim});
  return g.list(pieces);
}

}  // namespace

void add_join(Registrar& r) {
  r.add("aten::cat", 9, cat);
  r.add("aten::concat", 9, cat);
  r.add("aten::stack", 9, stack);
  r.add("aten::pad_sequence", 9, pad_sequence);
  r.add("aten::chunk", 9, chunk);
  r.add("aten::unsafe_chunk", 9, chunk);
  r.add("aten::split", 9, split_op);
  r.add("aten::split_with_sizes", 9, split_op);
  r.add("aten::unsafe_split", 9, split_op);
  r.add("aten::unsafe_split_with_sizes", 9, split_op);
  r.add("aten::unbind", 9, unbind);
}

}  // namespace onnxport::tensor
