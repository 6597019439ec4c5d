#include "symbolic_call.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <utility>
#include <string>
#include <vector>

#include "interpreter.h"
#include "onnxport/errors.h"
#include "onnxport/graph.h"

namespace py = pybind11;

namespace onnxport::python_bridge {

namespace {

// Parameters and other large constants reach the symbolic as typed graph inputs, as torch.onnx
// shows parameters; only small constants are onnx::Constant nodes _maybe_get_const can read.
constexpr int64_t kMaxConstantElements = 64;

py::tuple tensor_data(const Tensor& t) {
  return py::make_tuple(static_cast<int>(t.dtype()), t.shape(),
                        py::bytes(static_cast<const char*>(t.data()), t.nbytes()));
}

Tensor tensor_from(const py::handle& description) {  // ("tensor", dtype, shape, bytes)
  auto d = description.cast<py::tuple>();
  const std::string bytes = d[3].cast<std::string>();
  return Tensor(static_cast<DType>(d[1].cast<int>()), d[2].cast<std::vector<int64_t>>(),
                std::vector<uint8_t>(bytes.begin(), bytes.end()));
}

py::object dims_of(const TensorType& type) {
  if (!type.shape) return py::none();
  py::list dims;
  for (const Dim& d : *type.shape) dims.append(d.is_static() ? d.value : -1);
  return std::move(dims);
}

py::object payload(const Value::Constant& c) {
  struct Visit {
    py::object operator()(std::monostate) const { return py::none(); }
    py::object operator()(int64_t v) const { return py::int_(v); }
    py::object operator()(double v) const { return py::float_(v); }
    py::object operator()(bool v) const { return py::bool_(v); }
    py::object operator()(const std::string& v) const { return py::str(v); }
    py::object operator()(const std::vector<int64_t>& v) const { return py::cast(v); }
    py::object operator()(const std::vector<double>& v) const { return py::cast(v); }
    py::object operator()(const Tensor& t) const { return tensor_data(t); }
  };
  return std::visit(Visit{}, c);
}

// One argument as onnxport._bridge._Scratch.argument takes it.
py::tuple describe(const Value* v) {
  if (!v || v->is_none()) return py::make_tuple("none");
  if (v->is_list()) {
    py::list items;
    for (const Value* e : v->elements()) items.append(describe(e));
    return py::make_tuple("list", items);
  }
  if (v->is_constant()) {
    const Tensor* t = v->maybe_tensor();
    if (!t || t->numel() <= kMaxConstantElements) return py::make_tuple("const", payload(v->constant()));
  }
  return py::make_tuple(v->is_sequence() ? "sequence" : "tensor", static_cast<int>(v->dtype()), dims_of(v->type()));
}

TensorType type_from(const py::handle& description) {  // (dtype, dims or None, is a sequence)
  auto d = description.cast<py::tuple>();
  TensorType t;
  t.dtype = static_cast<DType>(d[0].cast<int>());
  if (!d[1].is_none()) {
    t.shape.emplace();
    for (int64_t dim : d[1].cast<std::vector<int64_t>>()) t.shape->push_back(dim >= 0 ? Dim::fixed(dim) : Dim::unknown());
  }
  return t;
}

// Replays what run_symbolic described into the SDK graph: nodes by their index, the inputs of
// sub-blocks by (block, position).
class Replay {
 public:
  explicit Replay(const Args& args) : args_(args) {}

  void nodes(Graph& g, const py::list& described) {
    for (auto n : described) node(g, n.cast<py::tuple>());
  }

  Value* resolve(Graph& g, const py::handle& ref) {
    if (ref.is_none()) return nullptr;
    auto r = ref.cast<py::tuple>();
    const std::string kind = r[0].cast<std::string>();
    if (kind == "node") return produced_.at(r[1].cast<size_t>()).at(r[2].cast<size_t>());
    if (kind == "block_input") return block_inputs_.at({r[1].cast<size_t>(), r[2].cast<size_t>()});
    if (kind == "tensor") return g.constant(tensor_from(r));
    if (kind == "none") return g.none();
    if (kind == "list") {  // ("list", [references]): one list value
      std::vector<Value*> items;
      for (auto item : r[1].cast<py::list>()) items.push_back(resolve(g, item));
      return g.list(items);
    }
    Value* v = args_.at(r[1].cast<size_t>());  // ("arg", i, element, element...)
    for (size_t i = 2; i < r.size(); ++i) v = v->elements().at(r[i].cast<size_t>());
    return v;
  }

 private:
  void node(Graph& g, const py::tuple& n) {
    const std::string op = n[0].cast<std::string>();
    const size_t index = n[4].cast<size_t>();
    std::vector<Value*> inputs;
    for (auto ref : n[1].cast<py::list>()) inputs.push_back(resolve(g, ref));
    if (op == "list") {
      produced_[index] = {g.list(inputs)};
      return;
    }
    if (op == "none") {
      produced_[index] = {g.none()};
      return;
    }
    Attrs attrs;
    for (auto a : n[2].cast<py::list>()) {
      auto pair = a.cast<py::tuple>();
      const std::string name = pair[0].cast<std::string>();
      attrs.emplace_back(name, attribute_value(name, pair[1]));
    }
    if (op == "Constant" && inputs.empty() && attrs.size() == 1 && attrs[0].name == "value_t") {
      produced_[index] = {g.constant(attrs[0].value.as_tensor())};
      return;
    }
    produced_[index] = g.op(op, inputs, attrs, n[3].cast<int>());
  }

  AttrValue attribute_value(const std::string& name, const py::handle& value) {
    if (py::isinstance<py::tuple>(value)) {
      auto t = value.cast<py::tuple>();
      return t[0].cast<std::string>() == "graph" ? AttrValue(subgraph(t)) : AttrValue(tensor_from(t));
    }
    if (py::isinstance<py::bool_>(value)) return AttrValue(value.cast<bool>());
    if (py::isinstance<py::int_>(value)) return AttrValue(value.cast<int64_t>());
    if (py::isinstance<py::float_>(value)) return AttrValue(value.cast<double>());
    if (py::isinstance<py::str>(value)) return AttrValue(value.cast<std::string>());
    auto items = value.cast<py::list>();
    const char suffix = name.back();
    if (suffix == 't') {
      std::vector<Tensor> tensors;
      for (auto item : items) tensors.push_back(tensor_from(item));
      return AttrValue(std::move(tensors));
    }
    if (suffix == 's') return AttrValue(items.cast<std::vector<std::string>>());
    if (suffix == 'f') return AttrValue(items.cast<std::vector<double>>());
    return AttrValue(items.cast<std::vector<int64_t>>());
  }

  // ("graph", id, input types, nodes, output references): built when the host builds the
  // sub-graph, during the g.op of its node. The lambda holds no reference (it may be destroyed
  // without the GIL): run_symbolic's answer keeps the description alive while it replays.
  Subgraph subgraph(const py::tuple& description) {
    Subgraph sg;
    for (auto t : description[2].cast<py::list>())
      sg.inputs.push_back({type_from(t), t.cast<py::tuple>()[2].cast<bool>()});
    sg.build = [this, handle = py::handle(description)](Graph& g, const std::vector<Value*>& inputs) {
      const auto block = py::reinterpret_borrow<py::tuple>(handle);
      const size_t id = block[1].cast<size_t>();
      for (size_t i = 0; i < inputs.size(); ++i) block_inputs_[{id, i}] = inputs[i];
      nodes(g, block[3].cast<py::list>());
      std::vector<Value*> outputs;
      for (auto ref : block[4].cast<py::list>()) outputs.push_back(resolve(g, ref));
      return outputs;
    };
    return sg;
  }

  const Args& args_;
  std::map<size_t, std::vector<Value*>> produced_;
  std::map<std::pair<size_t, size_t>, Value*> block_inputs_;
};

}  // namespace

Symbolic python_symbolic(int key, const std::string& file) {
  return [key, file](Graph& g, const TorchNode& node, const Args& args) -> std::vector<Value*> {
    PythonScope scope;
    py::list arguments, output_types;
    for (const Value* v : args.all()) arguments.append(describe(v));
    for (const TensorType& t : node.output_types) output_types.append(py::make_tuple(static_cast<int>(t.dtype), dims_of(t)));
    py::tuple answer;
    try {
      answer = bridge_module().attr("run_symbolic")(key, g.opset(), node.kind, arguments, output_types,
                                                    node.int_attributes);
    } catch (const py::error_already_set& e) {
      throw ExportError("the Python bridge failed: " + first_line(e.what()),
                        ErrorContext::with_hint("this is an onnxport bug; please report it"));
    }
    if (answer[0].cast<std::string>() != "ok")
      throw ExportError("Python symbolic failed: " + answer[1].cast<std::string>(),
                        ErrorContext::with_hint("fix the symbolic in " + (file.empty() ? "the calling process" : file) +
                                                ", or remove its registration"));
    Replay replay(args);
    replay.nodes(g, answer[1].cast<py::list>());
    const py::object result = answer[2];
    if (result.is_none())
      throw ExportError("the Python symbolic for " + node.kind + " returned None (torch.onnx then keeps the torch "
                            "node, which has no ONNX form)",
                        ErrorContext::with_hint("return the ONNX value(s) the symbolic made"));
    std::vector<Value*> outputs;
    if (py::isinstance<py::list>(result)) {
      for (auto r : result.cast<py::list>()) outputs.push_back(replay.resolve(g, r));
    } else {
      outputs.push_back(replay.resolve(g, result));
    }
    return outputs;
  };
}

}  // namespace onnxport::python_bridge
