// TorchScript lists and tuples. Lists stay List values during conversion (aten::cat, aten::view
// read their elements); a list that is really a tensor (aten::size(x) -> int[]) is unpacked
// with Gather; a list whose length is only known at run time (built in a loop) is an ONNX
// sequence.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "onnxport/helpers.h"
#include "prim.h"

namespace onnxport::prim {
namespace {

using namespace helpers;

Value* make_list(Graph& g, const TorchNode&, const Args& a) { return g.list(a.all()); }

std::vector<Value*> unpack(Graph& g, const TorchNode& n, const Args& a) {
  Value* v = a.at(0);
  const size_t want = n.num_outputs();
  if (v->is_sequence()) {
    std::vector<Value*> out;
    for (size_t i = 0; i < want; ++i) out.push_back(g.op("SequenceAt", {v, g.constant_int(static_cast<int64_t>(i))}));
    return out;
  }
  if (v->is_list()) {
    const auto& items = v->elements();
    if (items.size() != want)
      throw ArgumentError(n.kind + ": the list has " + std::to_string(items.size()) +
                          " elements but the node unpacks " + std::to_string(want));
    return items;
  }
  // A 1-d tensor standing for an int list (e.g. the Shape of aten::size(x)).
  Value* t = a.tensor(0);
  std::vector<Value*> out;
  for (size_t i = 0; i < want; ++i) out.push_back(gather(g, t, g.constant_int(static_cast<int64_t>(i)), 0));
  return out;
}

Value* list_item(const Args& a, size_t list_arg, int64_t index) {
  const std::vector<Value*> items = a.list(list_arg);
  const auto count = static_cast<int64_t>(items.size());
  if (index < -count || index >= count)
    throw ArgumentError("index " + std::to_string(index) + " is out of range for a list of " + std::to_string(count));
  return items[static_cast<size_t>(index < 0 ? index + count : index)];
}

// The items of a TorchScript list as elements of one ONNX sequence, which needs a single element
// type. Numbers of one TorchScript type may differ in ONNX dtype (an int computed through float
// math, a float constant materialized as float32 beside a double): they are cast to the list's
// element type (int -> int64, bool -> bool, float -> float32 (the dtype of float constants), or
// float64 when an item is one).
// Tensors of different dtypes in one list have no ONNX sequence.
std::vector<Value*> sequence_items(Graph& g, const TorchNode& n, const std::vector<Value*>& items) {
  bool same = true;
  for (Value* item : items) same = same && dtype_of(item) == dtype_of(items.front());
  if (same) return items;
  const bool numbers = !n.output_is_scalar.empty() && n.output_is_scalar[0];
  const DType element = n.output_types.empty() ? DType::Undefined : n.output_types[0].dtype;
  if (!numbers || element == DType::Undefined) {
    std::string dtypes;
    for (Value* item : items) dtypes += (dtypes.empty() ? "" : ", ") + item->describe();
    throw ArgumentError(n.kind + ": a list indexed at run time becomes an ONNX sequence, whose elements share one "
                        "dtype; this list holds " + dtypes);
  }
  DType target = element;
  if (element == DType::Double) {  // a TorchScript float: float32 unless an item is a double already
    target = DType::Float;
    for (Value* item : items)
      if (dtype_of(item) == DType::Double) target = DType::Double;
  }
  std::vector<Value*> cast_items;
  for (Value* item : items) cast_items.push_back(cast(g, item, target));
  return cast_items;
}

// prim::TupleIndex(tuple, i) and aten::__getitem__(list, i).
Value* get_item(Graph& g, const TorchNode& n, const Args& a) {
  if (a.at(0)->is_list() && a.at(1)->maybe_int()) return list_item(a, 0, a.i(1));
  if (a.at(0)->is_list()) {  // an index known only at run time: the list as a sequence
    Value* items = g.op("SequenceConstruct", sequence_items(g, n, a.list(0)));
    return g.op("SequenceAt", {items, cast(g, a.tensor(1), DType::Int64)});
  }
  if (a.at(0)->is_sequence()) return g.op("SequenceAt", {a.at(0), cast(g, a.tensor(1), DType::Int64)});
  Value* index = a.at(1)->maybe_int() ? g.constant_int(a.i(1)) : cast(g, a.tensor(1), DType::Int64);
  return gather(g, a.tensor(0), index, 0);
}

Value* length(Graph& g, const TorchNode&, const Args& a) {
  if (auto text = a.at(0)->maybe_string()) return g.constant_int(static_cast<int64_t>(text->size()));
  if (a.at(0)->is_list()) return g.constant_int(static_cast<int64_t>(a.list(0).size()));
  if (a.at(0)->is_sequence()) return g.op("SequenceLength", {a.at(0)});
  return size(g, a.tensor(0), 0);
}

// The number of elements of an int list held as a List or a 1-d tensor, when it is known.
std::optional<int64_t> static_length(const Value* v) {
  if (v->is_list()) return static_cast<int64_t>(v->elements().size());
  if (v->is_tensor() && v->rank() == std::optional<int64_t>(1)) return static_dim(v, 0);
  return std::nullopt;
}

// aten::eq.int_list / aten::ne.int_list: whole-list comparison, one bool. Folded when both lists
// (or their lengths) are known; otherwise elementwise Equal reduced with ReduceMin.
Value* lists_equal(Graph& g, const TorchNode& n, const Args& a, bool equal) {
  auto left = a.at(0)->maybe_ints();
  auto right = a.at(1)->maybe_ints();
  if (left && right) return g.constant(Tensor::scalar_bool((*left == *right) == equal));
  auto left_length = static_length(a.at(0));
  auto right_length = static_length(a.at(1));
  if (left_length && right_length && *left_length != *right_length) return g.constant(Tensor::scalar_bool(!equal));
  if (left_length && *left_length == 0 && right_length) return g.constant(Tensor::scalar_bool(equal));
  if (!left_length || !right_length)
    throw ArgumentError(n.kind + ": comparing int lists whose lengths are only known at run time is not supported");
  Value* same = g.op("Equal", {int_list(g, a.at(0)), int_list(g, a.at(1))});
  Value* all_same = cast(g, reduce(g, "ReduceMin", cast(g, same, DType::Int32), {0}, false), DType::Bool);
  return equal ? all_same : g.op("Not", {all_same});
}

// Python's slice bound: negative counts from the end, then clamped to [0, count].
int64_t slice_bound(std::optional<int64_t> bound, int64_t count, int64_t fallback) {
  if (!bound) return fallback;
  const int64_t k = *bound < 0 ? *bound + count : *bound;
  return std::clamp<int64_t>(k, 0, count);
}

// aten::slice.t(list, start=None, end=None, step=1): a list's slice, as Python takes it.
Value* slice_list(Graph& g, const TorchNode& n, const Args& a) {
  auto bound = [&](size_t i) -> std::optional<int64_t> {
    if (a.size() <= i || a.is_none(i)) return std::nullopt;
    return a.i(i);
  };
  const int64_t step = bound(3).value_or(1);
  if (step != 1) throw ArgumentError(n.kind + ": list slices with a step other than 1 are not supported");
  const int64_t kEnd = std::numeric_limits<int64_t>::max();
  auto run_time = [&](size_t i) { return a.size() > i && !a.is_none(i) && !a.at(i)->maybe_int(); };
  if (run_time(1) || run_time(2)) {  // bounds computed at run time: an int list becomes a 1-d tensor
    if (g.opset() < 10)
      throw ArgumentError(n.kind + ": slicing a list at bounds known only at run time needs opset 10 or later (target "
                                   "is opset " + std::to_string(g.opset()) + ")");
    auto bound_1d = [&](size_t i, int64_t if_none) {
      return run_time(i) ? int_list(g, a.at(i)) : g.constant_ints({bound(i).value_or(if_none)});
    };
    return g.op("Slice", {int_list(g, a.at(0)), bound_1d(1, 0), bound_1d(2, kEnd), g.constant_ints({0})});
  }
  if (a.at(0)->is_list()) {
    const auto& items = a.at(0)->elements();
    const auto count = static_cast<int64_t>(items.size());
    const int64_t begin = slice_bound(bound(1), count, 0);
    const int64_t end = std::max(begin, slice_bound(bound(2), count, count));
    return g.list(std::vector<Value*>(items.begin() + begin, items.begin() + end));
  }
  // An int list held as a 1-d tensor (the Shape of aten::size(x)).
  return slice(g, int_list(g, a.at(0)), {0}, {bound(1).value_or(0)}, {bound(2).value_or(kEnd)});
}

// aten::add.t(a, b): list concatenation.
Value* concat_lists(Graph& g, const TorchNode&, const Args& a) {
  if (a.at(0)->is_list() && a.at(1)->is_list()) {
    std::vector<Value*> items = a.at(0)->elements();
    items.insert(items.end(), a.at(1)->elements().begin(), a.at(1)->elements().end());
    return g.list(items);
  }
  return concat(g, {int_list(g, a.at(0)), int_list(g, a.at(1))}, 0);
}

// aten::mul.left_t(list, n) / aten::mul.right_(n, list): Python's list repetition (pitch detection's
// torch.cat(pad_length * [column], dim=-1)). A list known element by element is repeated when n is
// known at export time; an int list held as a 1-d tensor is tiled, n may then be computed at run time.
Value* repeat_list(Graph& g, const TorchNode& n, const Args& a, size_t list_arg, size_t count_arg) {
  Value* list = a.at(list_arg);
  if (list->is_list()) {
    auto count = a.at(count_arg)->maybe_int();
    if (!count)
      throw ArgumentError(n.kind + ": repeating a list a number of times known only at run time (" +
                          a.at(count_arg)->describe() + ") is not supported");
    std::vector<Value*> items;
    for (int64_t k = 0; k < *count; ++k) items.insert(items.end(), list->elements().begin(), list->elements().end());
    return g.list(items);
  }
  // (A negative count gives an empty list in Python; Tile only takes one known at export time.)
  auto count = a.at(count_arg)->maybe_int();
  Value* times = count ? g.constant_ints({std::max<int64_t>(0, *count)})
                       : reshape(g, cast(g, a.tensor(count_arg), DType::Int64), std::vector<int64_t>{1});
  return g.op("Tile", {int_list(g, list), times});
}

// aten::all / aten::any of a list (`all([...])` in scripted code): folded when every element is
// known, otherwise a ReduceMin / ReduceMax over the elements' truth values.
Value* all_or_any(Graph& g, const TorchNode&, const Args& a, bool all) {
  const std::vector<Value*> items = a.list(0);
  bool known = true, result = all;
  for (Value* item : items) {
    auto number = constant_number(item);
    known = known && number.has_value();
    if (number && ((*number != 0.0) != all)) result = !all;
  }
  if (known || items.empty()) return g.constant(Tensor::scalar_bool(result));
  std::vector<Value*> truths;
  for (Value* item : items) truths.push_back(unsqueeze(g, cast(g, cast(g, item, DType::Bool), DType::Int32), {0}));
  return cast(g, reduce(g, all ? "ReduceMin" : "ReduceMax", concat(g, truths, 0), {0}, false), DType::Bool);
}

// aten::_infer_size(a, b): the shape two shapes broadcast to (BCELoss expands its weight to it).
// Folded when both are known; otherwise, right-aligned, each dimension is b's unless b's is 1.
Value* broadcast_shape(Graph& g, const TorchNode& n, const Args& a) {
  auto left = a.at(0)->maybe_ints();
  auto right = a.at(1)->maybe_ints();
  if (left && right) {
    std::vector<int64_t> out(std::max(left->size(), right->size()), 1);
    for (size_t i = 0; i < out.size(); ++i) {
      const int64_t l = i < left->size() ? (*left)[left->size() - 1 - i] : 1;
      const int64_t r = i < right->size() ? (*right)[right->size() - 1 - i] : 1;
      if (l != r && l != 1 && r != 1)
        throw ArgumentError(n.kind + ": the shapes do not broadcast (size " + std::to_string(l) + " against " +
                            std::to_string(r) + " in dimension " + std::to_string(-1 - static_cast<int64_t>(i)) +
                            ")");
      out[out.size() - 1 - i] = r == 1 ? l : r;
    }
    return g.constant_ints(out);
  }
  auto left_length = static_length(a.at(0));
  auto right_length = static_length(a.at(1));
  if (!left_length || !right_length)
    throw ArgumentError(n.kind + ": broadcasting shapes whose lengths are only known at run time is not supported");
  const int64_t rank = std::max(*left_length, *right_length);
  auto aligned = [&](Value* list, int64_t length) {
    Value* dims = int_list(g, list);
    if (length == rank) return dims;
    return concat(g, {g.constant_ints(std::vector<int64_t>(static_cast<size_t>(rank - length), 1)), dims}, 0);
  };
  Value* l = aligned(a.at(0), *left_length);
  Value* r = aligned(a.at(1), *right_length);
  return g.op("Where", {g.op("Equal", {r, g.constant_ints(std::vector<int64_t>(static_cast<size_t>(rank), 1))}), l, r});
}

}  // namespace

void add_lists(Registrar& r) {
  for (const char* kind : {"bool", "int", "float"}) {
    r.add(std::string("aten::all.") + kind, 1,
          [](Graph& g, const TorchNode& n, const Args& a) { return all_or_any(g, n, a, true); });
    r.add(std::string("aten::any.") + kind, 1,
          [](Graph& g, const TorchNode& n, const Args& a) { return all_or_any(g, n, a, false); });
  }
  r.add("aten::eq.int_list", 1, [](Graph& g, const TorchNode& n, const Args& a) { return lists_equal(g, n, a, true); });
  r.add("aten::ne.int_list", 1,
        [](Graph& g, const TorchNode& n, const Args& a) { return lists_equal(g, n, a, false); });
  r.add("aten::slice.t", 1, slice_list);
  r.add("aten::add.t", 1, concat_lists);
  r.add("aten::mul.left_t", 9, [](Graph& g, const TorchNode& n, const Args& a) { return repeat_list(g, n, a, 0, 1); });
  r.add("aten::mul.right_", 9, [](Graph& g, const TorchNode& n, const Args& a) { return repeat_list(g, n, a, 1, 0); });
  r.add("aten::_infer_size", 1, broadcast_shape);
  r.add("prim::ListConstruct", 1, make_list);
  r.add("prim::TupleConstruct", 1, make_list);
  r.add("prim::ListUnpack", 1, unpack);
  r.add("prim::TupleUnpack", 1, unpack);
  r.add("prim::TupleIndex", 1, get_item);
  r.add("aten::__getitem__", 1, get_item);
  r.add("aten::len", 1, length);
}

}  // namespace onnxport::prim
