// Ops that only scripted graphs hold: list mutation (append, insert, pop, _set_item, Delete),
// range arithmetic of for-loops, None tests, type refinements and no-op checks. In-place list
// ops return the list's new value (the host rebinds it, see TorchNode::updated_inputs); a
// list built in a loop arrives here as an ONNX sequence.
#include <algorithm>
#include <functional>

#include "onnxport/helpers.h"
#include "prim.h"

namespace onnxport::prim {
namespace {

using namespace helpers;

Value* index_value(Graph& g, const Args& a, size_t i) {
  if (auto k = a.at(i)->maybe_int()) return g.constant_int(*k);
  return cast(g, a.tensor(i), DType::Int64);
}

std::vector<Value*> static_items(const Args& a) { return a.list(0); }

size_t static_position(const TorchNode& n, int64_t index, size_t count, bool allow_end) {
  const auto size = static_cast<int64_t>(count);
  int64_t k = index < 0 ? index + size : index;
  if (allow_end) k = std::clamp<int64_t>(k, 0, size);  // list.insert clamps like Python
  if (k < 0 || k > size || (!allow_end && k == size))
    throw ArgumentError(n.kind + ": index " + std::to_string(index) + " is out of range for a list of " +
                        std::to_string(count));
  return static_cast<size_t>(k);
}

// A sequence position; negative ones count from the end, as in Python.
Value* sequence_position(Graph& g, Value* seq, Value* index) {
  if (auto k = index->maybe_int(); k && *k >= 0) return index;
  Value* length = g.op("SequenceLength", {seq});
  Value* from_end = g.op("Add", {index, length});
  return g.op("Where", {g.op("Less", {index, g.constant_int(0)}), from_end, index});
}

// An element going into a sequence, cast to the sequence's element type (a TorchScript float
// list may have been started as a float32 sequence while the numbers are doubles).
Value* element_for(Graph& g, Value* seq, Value* item) {
  const DType element = dtype_of(seq);
  return element == DType::Undefined ? item : cast(g, item, element);
}

// aten::append(list, el) -> list
Value* append(Graph& g, const TorchNode&, const Args& a) {
  if (a.at(0)->is_sequence()) return g.op("SequenceInsert", {a.at(0), element_for(g, a.at(0), a.tensor(1))});
  std::vector<Value*> items = static_items(a);
  items.push_back(a.at(1));
  return g.list(items);
}

// aten::insert(list, index, el) -> (); the list's new value follows.
std::vector<Value*> insert(Graph& g, const TorchNode& n, const Args& a) {
  if (a.at(0)->is_sequence())
    return {g.op("SequenceInsert",
                 {a.at(0), element_for(g, a.at(0), a.tensor(2)), sequence_position(g, a.at(0), index_value(g, a, 1))})};
  std::vector<Value*> items = static_items(a);
  items.insert(items.begin() + static_cast<std::ptrdiff_t>(static_position(n, a.i(1), items.size(), true)), a.at(2));
  return {g.list(items)};
}

// aten::pop(list, index=-1) -> element; the list's new value follows.
std::vector<Value*> pop(Graph& g, const TorchNode& n, const Args& a) {
  const bool has_index = a.size() > 1 && !a.is_none(1);
  if (a.at(0)->is_sequence()) {
    Value* index = has_index ? index_value(g, a, 1) : g.constant_int(-1);
    return {g.op("SequenceAt", {a.at(0), index}), g.op("SequenceErase", {a.at(0), index})};
  }
  std::vector<Value*> items = static_items(a);
  const size_t k = static_position(n, has_index ? a.i(1) : -1, items.size(), false);
  Value* item = items[k];
  items.erase(items.begin() + static_cast<std::ptrdiff_t>(k));
  return {item, g.list(items)};
}

// aten::_set_item(list, index, el) -> list
Value* set_item(Graph& g, const TorchNode& n, const Args& a) {
  if (a.at(0)->is_sequence()) {
    Value* position = sequence_position(g, a.at(0), index_value(g, a, 1));
    return g.op("SequenceInsert",
                {g.op("SequenceErase", {a.at(0), position}), element_for(g, a.at(0), a.tensor(2)), position});
  }
  std::vector<Value*> items = static_items(a);
  items[static_position(n, a.i(1), items.size(), false)] = a.at(2);
  return g.list(items);
}

// aten::Delete(list, index) -> (); the list's new value follows.
std::vector<Value*> delete_item(Graph& g, const TorchNode& n, const Args& a) {
  if (a.at(0)->is_sequence()) return {g.op("SequenceErase", {a.at(0), index_value(g, a, 1)})};
  std::vector<Value*> items = static_items(a);
  items.erase(items.begin() + static_cast<std::ptrdiff_t>(static_position(n, a.i(1), items.size(), false)));
  return {g.list(items)};
}

// aten::list(list) -> a copy: values are immutable here, so the same value.
Value* copy_list(Graph&, const TorchNode&, const Args& a) { return a.at(0); }

// aten::add_.t(list, other) -> list, extending `list` in place (`a += [x]`): the new list is both
// the output and the list's new value.
std::vector<Value*> extend(Graph& g, const TorchNode&, const Args& a) {
  Value* extended;
  if (a.at(0)->is_sequence()) {
    extended = a.at(0);
    for (Value* item : a.list(1)) extended = g.op("SequenceInsert", {extended, element_for(g, extended, item)});
  } else {
    std::vector<Value*> items = static_items(a);
    for (Value* item : a.list(1)) items.push_back(item);
    extended = g.list(items);
  }
  return {extended, extended};
}

// aten::__range_length(lo, hi, step): how many values range(lo, hi, step) yields.
Value* range_length(Graph& g, const TorchNode& n, const Args& a) {
  if (auto lo = a.at(0)->maybe_int(), hi = a.at(1)->maybe_int(), step = a.at(2)->maybe_int(); lo && hi && step) {
    if (*step == 0) throw ArgumentError(n.kind + ": range() step must not be zero");
    const int64_t span = *hi - *lo;
    const int64_t count = *step > 0 ? (span + *step - 1) / *step : (span + *step + 1) / *step;
    return g.constant_int(std::max<int64_t>(count, 0));
  }
  Value* lo = index_value(g, a, 0);
  Value* hi = index_value(g, a, 1);
  Value* step = index_value(g, a, 2);
  // (hi - lo + step - sign(step)) / step, clamped at 0; the quotient is exact where it matters.
  Value* numerator = g.op("Sub", {g.op("Add", {g.op("Sub", {hi, lo}), step}), g.op("Sign", {step})});
  return g.op("Max", {g.op("Div", {numerator, step}), g.constant_int(0)});
}

// aten::__derive_index(index, start, step) = start + index * step
Value* derive_index(Graph& g, const TorchNode&, const Args& a) {
  if (auto i = a.at(0)->maybe_int(), s = a.at(1)->maybe_int(), t = a.at(2)->maybe_int(); i && s && t)
    return g.constant_int(*s + *i * *t);
  return g.op("Add", {index_value(g, a, 1), g.op("Mul", {index_value(g, a, 0), index_value(g, a, 2)})});
}

// aten::__is__ / __isnot__: in exported graphs these test for None, which is known statically.
Symbolic identity_test(bool negate) {
  return [negate](Graph& g, const TorchNode& n, const Args& a) -> std::vector<Value*> {
    Value* x = a.at(0);
    Value* y = a.at(1);
    bool same;
    if (x->is_none() || y->is_none())
      same = x->is_none() && y->is_none();
    else if (x == y)
      same = true;
    else
      throw ArgumentError(n.kind + " compares two values that are not None (" + x->describe() + ", " + y->describe() +
                          "): object identity has no ONNX equivalent");
    return {g.constant(Tensor::scalar_bool(same != negate))};
  };
}

// prim::max / prim::min on two numbers or on a list of numbers.
Symbolic number_extremum(const std::string& onnx_op) {
  return [onnx_op](Graph& g, const TorchNode&, const Args& a) -> std::vector<Value*> {
    std::vector<Value*> items = a.size() == 1 && a.at(0)->is_list() ? a.list(0) : a.all();
    if (items.size() == 1 && items[0]->is_tensor() && !items[0]->is_scalar())  // an int[] held as a 1-d tensor
      return {reduce(g, onnx_op == "Max" ? "ReduceMax" : "ReduceMin", items[0], {0}, false)};
    items = promote(g, items);
    const DType dtype = dtype_of(items[0]);
    if (g.opset() < 12 && is_integral(dtype)) {  // integer Max/Min arrive at opset 12
      for (Value*& v : items) v = cast(g, v, DType::Double);
      return {cast(g, g.op(onnx_op, items), dtype)};
    }
    return {g.op(onnx_op, items)};
  };
}

int64_t int_attribute(const TorchNode& n, const std::string& name) {
  auto it = n.int_attributes.find(name);
  return it == n.int_attributes.end() ? 0 : it->second;
}

// x split along the node's `dim` attribute into pieces of `piece` (the last one smaller), one per
// output; `piece_of` gets the static size along dim and returns the piece size. Where that size
// is only known at run time, `run_time_piece` computes the piece from it (a 1-d [1] int64) and
// each output is a Slice (a piece past the end comes out empty, as the traced count is fixed).
std::vector<Value*> split_by_attribute(Graph& g, const TorchNode& n, Value* x, const std::string& attribute,
                                       const std::function<int64_t(int64_t)>& piece_of,
                                       const std::function<Value*(Value*)>& run_time_piece) {
  const int64_t dim = int_attribute(n, "dim");
  const auto total = static_dim(x, dim);
  const int64_t value = int_attribute(n, attribute);
  if (value <= 0) throw ArgumentError(n.kind + " needs a positive '" + attribute + "' attribute");
  if (!total) {
    if (g.opset() < 10)
      throw ArgumentError(n.kind + " needs a static size along dim " + std::to_string(dim) + " (" + x->describe() +
                          ") below opset 10");
    return split_in_pieces(g, x, run_time_piece(size(g, x, dim, /*as_1d=*/true)),
                           static_cast<int64_t>(n.num_outputs()), dim);
  }
  const int64_t piece = piece_of(*total);
  std::vector<int64_t> sizes;
  for (int64_t done = 0; done < *total; done += piece) sizes.push_back(std::min(piece, *total - done));
  if (sizes.size() != n.num_outputs())
    throw ArgumentError(n.kind + ": " + std::to_string(sizes.size()) + " pieces for " +
                        std::to_string(n.num_outputs()) + " outputs");
  return split(g, x, sizes, dim);
}

// prim::ConstantChunk(x)[chunks, dim]: torch.chunk with the count as a node attribute.
std::vector<Value*> constant_chunk(Graph& g, const TorchNode& n, const Args& a) {
  const int64_t chunks = int_attribute(n, "chunks");
  return split_by_attribute(
      g, n, a.tensor(0), "chunks", [chunks](int64_t total) { return (total + chunks - 1) / chunks; },
      [&g, chunks](Value* total) { return chunk_piece(g, total, chunks); });
}

// prim::ConstantSplit(x)[split_size, dim]: torch.split with the size as a node attribute.
std::vector<Value*> constant_split(Graph& g, const TorchNode& n, const Args& a) {
  const int64_t piece = int_attribute(n, "split_size");
  return split_by_attribute(
      g, n, a.tensor(0), "split_size", [piece](int64_t) { return piece; },
      [&g, piece](Value*) { return g.constant_ints({piece}); });
}

// aten::__contains__(list, item): `item in list`, static when both are constants.
Value* contains(Graph& g, const TorchNode& n, const Args& a) {
  if (auto item = a.at(1)->maybe_string()) {  // PyTorch 2.x's `x.device.type in ["cpu", "cuda", ...]`
    bool found = false;
    for (const Value* v : a.list(0)) {
      const auto s = v->maybe_string();
      if (!s) fail_node(n, "`in` over strings needs each of them known at export, got " + v->describe());
      found = found || *s == *item;
    }
    return g.constant(Tensor::scalar_bool(found));
  }
  if (auto values = a.at(0)->maybe_floats(); values && a.at(1)->maybe_float()) {
    const double item = *a.at(1)->maybe_float();
    return g.constant(Tensor::scalar_bool(std::find(values->begin(), values->end(), item) != values->end()));
  }
  const std::vector<Value*> items = a.list(0);
  if (auto item = a.at(1)->maybe_float()) {
    bool all_constant = true, found = false;
    for (const Value* v : items) {
      auto k = v->maybe_float();
      all_constant = all_constant && k.has_value();
      found = found || (k && *k == *item);
    }
    if (all_constant) return g.constant(Tensor::scalar_bool(found));
  }
  if (items.empty()) return g.constant(Tensor::scalar_bool(false));
  Value* x = a.tensor(1);
  std::vector<Value*> equal;
  for (Value* v : items) {
    auto pair = promote(g, {v, x});
    equal.push_back(unsqueeze(g, cast(g, g.op("Equal", pair), DType::Int64), {0}));
  }
  (void)n;
  Value* any = reduce(g, "ReduceMax", concat(g, equal, 0), {0}, false);
  return cast(g, any, DType::Bool);
}

// Strings only feed exception and warning messages here, which exports drop.
Value* no_string(Graph& g, const TorchNode&, const Args&) { return g.none(); }

// Raising and warning have no ONNX form: a branch that raises is a branch never taken by a
// valid input.
std::vector<Value*> nothing(Graph&, const TorchNode&, const Args&) { return {}; }

}  // namespace

void add_script_ops(Registrar& r) {
  r.add("aten::append", 9, append);  // sequences (lists changed in loops) only exist from opset 13
  r.add("aten::insert", 9, insert);
  r.add("aten::pop", 9, pop);
  r.add("aten::_set_item", 9, set_item);
  r.add("aten::Delete", 9, delete_item);
  r.add("aten::list", 9, copy_list);
  r.add("aten::add_.t", 9, extend);
  r.add("aten::__range_length", 9, range_length);
  r.add("aten::__derive_index", 9, derive_index);
  r.add("aten::__is__", 9, identity_test(false));
  r.add("aten::__isnot__", 9, identity_test(true));
  r.add("prim::max", 9, number_extremum("Max"));
  r.add("prim::min", 9, number_extremum("Min"));
  r.add("prim::ConstantChunk", 9, constant_chunk);
  for (const char* op : {"prim::unchecked_cast", "prim::tolist"}) r.add(op, 9, identity());
  r.add("prim::shape", 9,
        [](Graph& g, const TorchNode&, const Args& a) { return std::vector<Value*>{shape_of(g, a.tensor(0))}; });
  r.add("aten::__contains__", 9, contains);
  r.add("aten::format", 9, no_string);
  r.add("prim::type", 9, no_string);  // a device's type name: devices mean nothing in ONNX
  r.add("prim::ConstantSplit", 9, constant_split);
  // torch.onnx's own placeholder node: stands for its first input.
  r.add("onnx::Placeholder", 9, [](Graph&, const TorchNode&, const Args& a) { return std::vector<Value*>{a.at(0)}; });
  r.add("prim::RaiseException", 9, nothing);
  r.add("aten::warn", 9, nothing);
  // print() in a scripted model: ONNX has no output channel, and torch.onnx removes it too.
  r.add("prim::Print", 9, nothing);
}

}  // namespace onnxport::prim
