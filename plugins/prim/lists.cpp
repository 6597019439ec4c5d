// TorchScript lists and tuples. Lists stay List values during conversion (aten::cat, aten::view
// read their elements); a list that is really a tensor (aten::size(x) -> int[]) is unpacked
// with Gather; a list whose length is only known at run time (built in a loop) is an ONNX
// sequence.
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

// prim::TupleIndex(tuple, i) and aten::__getitem__(list, i).
Value* get_item(Graph& g, const TorchNode&, const Args& a) {
  if (a.at(0)->is_list()) return list_item(a, 0, a.i(1));
  if (a.at(0)->is_sequence()) return g.op("SequenceAt", {a.at(0), cast(g, a.tensor(1), DType::Int64)});
  Value* index = a.at(1)->maybe_int() ? g.constant_int(a.i(1)) : cast(g, a.tensor(1), DType::Int64);
  return gather(g, a.tensor(0), index, 0);
}

Value* length(Graph& g, const TorchNode&, const Args& a) {
  if (a.at(0)->is_list()) return g.constant_int(static_cast<int64_t>(a.list(0).size()));
  if (a.at(0)->is_sequence()) return g.op("SequenceLength", {a.at(0)});
  return size(g, a.tensor(0), 0);
}

}  // namespace

void add_lists(Registrar& r) {
  r.add("prim::ListConstruct", 1, make_list);
  r.add("prim::TupleConstruct", 1, make_list);
  r.add("prim::ListUnpack", 1, unpack);
  r.add("prim::TupleUnpack", 1, unpack);
  r.add("prim::TupleIndex", 1, get_item);
  r.add("aten::__getitem__", 1, get_item);
  r.add("aten::len", 1, length);
}

}  // namespace onnxport::prim
