// The passes that shorten shape plumbing: Reshape-Transpose-Reshape, Transpose-Transpose and
// Concat-Concat merging, constant Reshape targets from the types (pass_reshapes.cpp,
// pass_transposes.cpp, pass_concats.cpp), and
// multi-head attention's packed in-projection split read as a chunk (packed_projection.h). Each
// rewritten graph is run against the original on the same input.
#include "doctest_torch.h"  // before any libtorch header

#include <algorithm>
#include <map>

#include <torch/csrc/jit/ir/irparser.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include "3_export/2_prepare/packed_projection.h"
#include "3_export/2_prepare/torch_graph.h"
#include "3_export/5_passes/passes.h"
#include "1_base/torch_tensors.h"
#include "support.h"

using namespace onnxport;
using namespace onnxport::core;
using namespace onnxport::core_test;

namespace {

TensorType dims_type(std::vector<Dim> dims) { return TensorType{DType::Float, std::move(dims)}; }

// Runs a graph of Constant, Reshape, Transpose, MatMul, Gemm, Add, Concat, Split and Relu nodes with ATen: `values` holds
// the graph's inputs (a computed target fed as one), initializers are read from the model.
std::map<std::string, at::Tensor> run_ops(const OnnxModel& m, std::map<std::string, at::Tensor> values) {
  for (const auto& init : m.initializers) values[init.name] = to_aten(init.tensor);
  for (const auto& node : m.nodes) {
    const auto& p = node.proto;
    if (p.op_type() == "Constant") {
      values[p.output(0)] = to_aten(from_tensor_proto(p.attribute(0).t()));
      continue;
    }
    const at::Tensor x = values.at(p.input(0));
    if (p.op_type() == "Relu") {
      values[p.output(0)] = at::relu(x);
    } else if (p.op_type() == "MatMul") {
      values[p.output(0)] = at::matmul(x, values.at(p.input(1)));
    } else if (p.op_type() == "Add") {
      values[p.output(0)] = x + values.at(p.input(1));
    } else if (p.op_type() == "Gemm") {
      const auto* trans_b = find_attr(p, "transB");
      const at::Tensor w = values.at(p.input(1));
      values[p.output(0)] = at::addmm(values.at(p.input(2)), x, trans_b && trans_b->i() ? w.t() : w);
    } else if (p.op_type() == "Concat") {
      std::vector<at::Tensor> parts;
      for (const auto& in : p.input()) parts.push_back(values.at(in));
      values[p.output(0)] = at::cat(parts, find_attr(p, "axis")->i());
    } else if (p.op_type() == "Split") {
      const auto* axis = find_attr(p, "axis");
      const auto parts = at::split(x, x.size(axis->i() < 0 ? axis->i() + x.dim() : axis->i()) / p.output_size(),
                                   axis->i());
      for (int i = 0; i < p.output_size(); ++i) values[p.output(i)] = parts[static_cast<size_t>(i)];
    } else if (p.op_type() == "Reshape") {
      std::vector<int64_t> target;
      const at::Tensor t = values.at(p.input(1));
      for (int64_t i = 0; i < t.numel(); ++i) {
        const int64_t d = t[i].item<int64_t>();
        target.push_back(d == 0 ? x.size(i) : d);
      }
      values[p.output(0)] = x.reshape(target);
    } else {
      REQUIRE(p.op_type() == "Transpose");
      const auto* perm = find_attr(p, "perm");
      values[p.output(0)] = x.permute(std::vector<int64_t>(perm->ints().begin(), perm->ints().end()));
    }
  }
  return values;
}

at::Tensor run_shape_ops(const OnnxModel& m, std::map<std::string, at::Tensor> values) {
  return run_ops(m, std::move(values)).at(m.outputs.at(0).name);
}

// Every graph output of `m` run on `values`, in order.
std::vector<at::Tensor> run_outputs(const OnnxModel& m, const std::map<std::string, at::Tensor>& values) {
  const auto all = run_ops(m, values);
  std::vector<at::Tensor> out;
  for (const auto& o : m.outputs) out.push_back(all.at(o.name));
  return out;
}

void set_type(OnnxModel& m, const std::string& name, std::vector<int64_t> dims) {
  m.value_types[name] = to_type_proto(float_type(std::move(dims)));
}

// A batch-first attention's projections as a program gives them, L = 5, B = 2, E = 8, H = 2:
// x [B, L, E] -> Transpose(1, 0, 2) -> MatMul(W_in [E, 3E]) -> Add -> Split(3, last) -> each
// Reshape [L, B, H, 4] -> Transpose(1, 2, 0, 3) (heads) -> Transpose(2, 0, 1, 3) -> Reshape
// [L*B, E] -> Gemm(W_out, transB) -> Reshape [L, B, E] -> Transpose(1, 0, 2) -> Relu: outputs q, k
// and the projected v.
OnnxModel projections() {
  OnnxModel m;
  add_input(m, "x", float_type({2, 5, 8}));
  m.initializers.push_back({"w_in", borrow_tensor(at::randn({8, 24})), ""});
  m.initializers.push_back({"b_in", borrow_tensor(at::randn({24})), ""});
  m.initializers.push_back({"w_out", borrow_tensor(at::randn({8, 8})), ""});
  m.initializers.push_back({"b_out", borrow_tensor(at::randn({8})), ""});
  m.initializers.push_back({"heads", Tensor::ints({5, 2, 2, 4}), ""});
  m.initializers.push_back({"rows", Tensor::ints({10, 8}), ""});
  m.initializers.push_back({"back", Tensor::ints({5, 2, 8}), ""});
  m.initializers.push_back({"thirds", Tensor::ints({8, 8, 8}), ""});
  m.nodes.push_back(onnx_node("Transpose", {"x"}, {"xt"}, {attr_ints("perm", {1, 0, 2})}));
  set_type(m, "xt", {5, 2, 8});
  m.nodes.push_back(onnx_node("MatMul", {"xt", "w_in"}, {"proj"}));
  set_type(m, "proj", {5, 2, 24});
  m.nodes.push_back(onnx_node("Add", {"proj", "b_in"}, {"biased"}));
  set_type(m, "biased", {5, 2, 24});
  m.nodes.push_back(onnx_node("Split", {"biased", "thirds"}, {"q0", "k0", "v0"}, {attr_i("axis", -1)}));
  for (const std::string part : {"q", "k", "v"}) {
    set_type(m, part + "0", {5, 2, 8});
    m.nodes.push_back(onnx_node("Reshape", {part + "0", "heads"}, {part + "1"}));
    set_type(m, part + "1", {5, 2, 2, 4});
    m.nodes.push_back(onnx_node("Transpose", {part + "1"}, {part}, {attr_ints("perm", {1, 2, 0, 3})}));
    set_type(m, part, {2, 2, 5, 4});
  }
  m.nodes.push_back(onnx_node("Transpose", {"v"}, {"vt"}, {attr_ints("perm", {2, 0, 1, 3})}));
  set_type(m, "vt", {5, 2, 2, 4});
  m.nodes.push_back(onnx_node("Reshape", {"vt", "rows"}, {"flat"}));
  set_type(m, "flat", {10, 8});
  m.nodes.push_back(onnx_node("Gemm", {"flat", "w_out", "b_out"}, {"out"}, {attr_i("transB", 1)}));
  set_type(m, "out", {10, 8});
  m.nodes.push_back(onnx_node("Reshape", {"out", "back"}, {"unflat"}));
  set_type(m, "unflat", {5, 2, 8});
  m.nodes.push_back(onnx_node("Transpose", {"unflat"}, {"y"}, {attr_ints("perm", {1, 0, 2})}));
  set_type(m, "y", {2, 5, 8});
  m.nodes.push_back(onnx_node("Relu", {"y"}, {"z"}));
  set_type(m, "z", {2, 5, 8});
  add_output(m, "q");
  add_output(m, "k");
  add_output(m, "z");
  return m;
}

at::Tensor ints(std::vector<int64_t> v) { return at::tensor(v, at::kLong); }

// The op types of `m`'s nodes but its Constants.
std::vector<std::string> computing_ops(const OnnxModel& m) {
  std::vector<std::string> ops;
  for (const auto& op : op_types(m.nodes))
    if (op != "Constant") ops.push_back(op);
  return ops;
}

// The values of the constant `name` (an initializer or a Constant node's output).
std::vector<int64_t> constant_ints(const OnnxModel& m, const std::string& name) {
  const auto value = constant_value(m, name, ValueUses(m));
  REQUIRE(value.has_value());
  return value->as_int64s();
}

// The node of `m` whose first output is `name`.
const onnx::NodeProto& made(const OnnxModel& m, const std::string& name) {
  for (const auto& n : m.nodes)
    if (n.proto.output(0) == name) return n.proto;
  FAIL("no node makes " << name);
  throw;
}

// x [L, B, E] -> Reshape [L, B*H, d] -> Transpose(1, 0, 2) -> Reshape [B, H, L, d], as multi-head
// attention views its queries; with `symbolic`, L and B are symbols and the targets computed
// (graph inputs t1, t2), the middle dims unknown where they are products.
OnnxModel attention_view(bool symbolic) {
  OnnxModel m;
  const Dim l = symbolic ? Dim::named("s1") : Dim::fixed(5), b = symbolic ? Dim::named("s0") : Dim::fixed(3);
  const Dim bh = symbolic ? Dim::unknown() : Dim::fixed(12);
  add_input(m, "x", dims_type({l, b, Dim::fixed(32)}));
  if (symbolic) {
    add_input(m, "t1", tensor_type(DType::Int64, {3}));
    add_input(m, "t2", tensor_type(DType::Int64, {4}));
  } else {
    m.initializers.push_back({"t1", Tensor::ints({5, 12, 8}), ""});
    m.initializers.push_back({"t2", Tensor::ints({3, 4, 5, 8}), ""});
  }
  m.nodes.push_back(onnx_node("Reshape", {"x", "t1"}, {"r1"}));
  m.value_types["r1"] = to_type_proto(dims_type({l, bh, Dim::fixed(8)}));
  m.nodes.push_back(onnx_node("Transpose", {"r1"}, {"t"}, {attr_ints("perm", {1, 0, 2})}));
  m.value_types["t"] = to_type_proto(dims_type({bh, l, Dim::fixed(8)}));
  m.nodes.push_back(onnx_node("Reshape", {"t", "t2"}, {"y"}));
  m.value_types["y"] = to_type_proto(dims_type({b, Dim::fixed(4), l, Dim::fixed(8)}));
  add_output(m, "y");
  return m;
}

// proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2) as %q, E = 4 (torch.nn.
// functional's _in_projection_packed), then `uses` of %q.
std::shared_ptr<torch::jit::Graph> packed_projection(const std::string& uses) {
  auto graph = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(R"IR(
graph(%proj : Float(5, 2, 12)):
  %m1 : int = prim::Constant[value=-1]()
  %m2 : int = prim::Constant[value=-2]()
  %z : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %sizes : int[] = prim::Constant[value=[3, 4]]()
  %u : Tensor = aten::unflatten(%proj, %m1, %sizes)
  %s : Tensor = aten::unsqueeze(%u, %z)
  %t : Tensor = aten::transpose(%s, %z, %m2)
  %q : Tensor = aten::squeeze(%t, %m2)
)IR" + uses,
                      graph.get());
  return graph;
}

}  // namespace

TEST_CASE("a Reshape, Transpose, Reshape that splits dims becomes one Reshape and one Transpose") {
  const at::Tensor x = at::randn({5, 3, 32});
  for (bool symbolic : {false, true}) {
    CAPTURE(symbolic);
    OnnxModel m = attention_view(symbolic);
    std::map<std::string, at::Tensor> feed{{"x", x}};
    if (symbolic) feed = {{"x", x}, {"t1", ints({5, 12, 8})}, {"t2", ints({3, 4, 5, 8})}};
    const at::Tensor expected = run_shape_ops(m, feed);
    REQUIRE(merge_reshape_transpose_reshape(m) == 1);
    eliminate_dead_code(m);
    CHECK(computing_ops(m) == std::vector<std::string>{"Reshape", "Transpose"});
    const auto* perm = find_attr(made(m, "y"), "perm");
    CHECK(std::vector<int64_t>(perm->ints().begin(), perm->ints().end()) == std::vector<int64_t>{1, 2, 0, 3});
    // Symbols copy the input's dims (0); sizes are written out.
    const std::vector<int64_t> target = symbolic ? std::vector<int64_t>{0, 0, 4, 8} : std::vector<int64_t>{5, 3, 4, 8};
    CHECK(constant_ints(m, made(m, "r1").input(1)) == target);
    CHECK(at::equal(run_shape_ops(m, feed), expected));
  }
}

TEST_CASE("a Reshape chain is left alone when the last Reshape merges dims or the Transpose has another reader") {
  OnnxModel merging = attention_view(false);
  merging.initializers.back() = {"t2", Tensor::ints({12, 40}), ""};
  merging.value_types["y"] = to_type_proto(float_type({12, 40}));
  CHECK(merge_reshape_transpose_reshape(merging) == 0);

  OnnxModel shared = attention_view(false);
  shared.nodes.push_back(onnx_node("Identity", {"t"}, {"also"}));
  add_output(shared, "also");
  CHECK(merge_reshape_transpose_reshape(shared) == 0);
}

TEST_CASE("a Reshape to sizes computed at run time gets a constant target where its output type says enough") {
  OnnxModel m;
  add_input(m, "x", dims_type({Dim::named("s0"), Dim::fixed(6)}));
  add_input(m, "target", tensor_type(DType::Int64, {3}));
  add_input(m, "other", tensor_type(DType::Int64, {2}));
  m.nodes.push_back(onnx_node("Reshape", {"x", "target"}, {"y"}));
  m.value_types["y"] = to_type_proto(dims_type({Dim::named("s0"), Dim::fixed(2), Dim::fixed(3)}));
  // Two dims neither known nor the input's: the target stays as computed.
  m.nodes.push_back(onnx_node("Reshape", {"x", "other"}, {"z"}));
  m.value_types["z"] = to_type_proto(dims_type({Dim::unknown(), Dim::named("s9")}));
  add_output(m, "y");
  add_output(m, "z");
  CHECK(constant_reshape_targets(m) == 1);
  CHECK(constant_ints(m, made(m, "y").input(1)) == std::vector<int64_t>{0, 2, 3});
  CHECK(made(m, "z").input(1) == "other");
  const at::Tensor x = at::randn({4, 6});
  OnnxModel first_only = m;
  first_only.nodes.pop_back();
  CHECK(at::equal(run_shape_ops(first_only, {{"x", x}}), x.reshape({4, 2, 3})));
}

TEST_CASE("a Transpose of a Transpose becomes one by the composed permutation") {
  OnnxModel m;
  add_input(m, "x", float_type({2, 3, 4, 5}));
  m.nodes.push_back(onnx_node("Transpose", {"x"}, {"a"}, {attr_ints("perm", {1, 2, 0, 3})}));
  m.nodes.push_back(onnx_node("Transpose", {"a"}, {"b"}, {attr_ints("perm", {0, 1, 3, 2})}));
  add_output(m, "b");
  const at::Tensor x = at::randn({2, 3, 4, 5});
  const at::Tensor expected = run_shape_ops(m, {{"x", x}});
  REQUIRE(merge_transposes(m) == 1);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Transpose"});
  CHECK(inputs_of(made(m, "b")) == std::vector<std::string>{"x"});
  CHECK(at::equal(run_shape_ops(m, {{"x", x}}), expected));
}

TEST_CASE("a Concat of Concats along its axis, each read only there, becomes one Concat") {
  // cat([a, cat([b, cat([c, d])]), cat([a, b], axis 0), e]) along axis 1: the nested pair joins
  // in; the axis-0 Concat and one that is also a graph output stay.
  OnnxModel m;
  for (const std::string name : {"a", "b", "c", "d", "e"}) add_input(m, name, float_type({2, 3}));
  m.nodes.push_back(onnx_node("Concat", {"c", "d"}, {"cd"}, {attr_i("axis", 1)}));
  m.nodes.push_back(onnx_node("Concat", {"b", "cd"}, {"bcd"}, {attr_i("axis", 1)}));
  m.nodes.push_back(onnx_node("Concat", {"a", "b"}, {"rows"}, {attr_i("axis", 0)}));
  m.nodes.push_back(onnx_node("Concat", {"a", "e"}, {"ae"}, {attr_i("axis", 1)}));
  m.nodes.push_back(onnx_node("Relu", {"rows"}, {"r"}));
  m.nodes.push_back(onnx_node("Concat", {"a", "bcd", "ae", "e"}, {"y"}, {attr_i("axis", 1)}));
  add_output(m, "y");
  add_output(m, "ae");
  add_output(m, "r");
  std::map<std::string, at::Tensor> feed;
  for (const std::string name : {"a", "b", "c", "d", "e"}) feed[name] = at::randn({2, 3});
  const auto expected = run_outputs(m, feed);
  CHECK(merge_concats(m) == 2);  // cd into bcd, then bcd into y
  eliminate_dead_code(m);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Concat", "Concat", "Relu", "Concat"});
  CHECK(inputs_of(made(m, "y")) == std::vector<std::string>{"a", "b", "c", "d", "ae", "e"});
  const auto got = run_outputs(m, feed);
  for (size_t i = 0; i < got.size(); ++i) CHECK(at::equal(got[i], expected[i]));
}

TEST_CASE("the transposes around a batch-first attention's projections join the heads' transposes") {
  OnnxModel m = projections();
  const std::map<std::string, at::Tensor> feed{{"x", at::randn({2, 5, 8})}};
  const auto expected = run_outputs(m, feed);
  CHECK(linear_between_reshapes(m) == 1);
  // The input's, down to the heads'; v's heads' into the one before the output projection; the
  // output's, up to that one.
  CHECK(move_transposes_to_transposes(m) == 3);
  eliminate_dead_code(m);
  const std::vector<std::string> ops = computing_ops(m);
  CHECK(std::count(ops.begin(), ops.end(), "Transpose") == 3);  // q's, k's, and v's before the output projection
  CHECK(std::count(ops.begin(), ops.end(), "Gemm") == 0);
  const auto got = run_outputs(m, feed);
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].sizes() == expected[i].sizes());
    CHECK(at::allclose(got[i], expected[i], 1e-5, 1e-5));
  }
  // The types written for the values on the way follow what they now hold.
  CHECK(from_type_proto(m.value_types.at("proj")).str() == "float32[2,5,24]");
  CHECK(from_type_proto(m.value_types.at("unflat")).str() == "float32[2,5,8]");
}

TEST_CASE("a Transpose stays where a path from it reaches an op that mixes the leading axes") {
  OnnxModel m = projections();
  m.nodes.push_back(onnx_node("Softmax", {"proj"}, {"mixed"}, {attr_i("axis", 0)}));
  add_output(m, "mixed");
  move_transposes_to_transposes(m);
  CHECK(std::any_of(m.nodes.begin(), m.nodes.end(), [](const OnnxNode& n) { return n.proto.output(0) == "xt"; }));
  CHECK(inputs_of(made(m, "proj")) == std::vector<std::string>{"xt", "w_in"});
}

TEST_CASE("a Transpose whose output a sub-graph captures stays, its readers keep reading it") {
  // Transpose(2, 1, 0) -> MatMul by a constant -> Transpose(1, 0, 2), whose output an If's branch
  // reads by name (tacotron2's encoder, scripted): moving the second up into the first would leave
  // the branch reading a value no node makes. (The first moves the last axis: it cannot move down.)
  OnnxModel m;
  add_input(m, "cond", scalar_type(DType::Bool));
  add_input(m, "x", float_type({5, 4, 3}));
  m.initializers.push_back({"w", borrow_tensor(at::randn({5, 5})), ""});
  m.nodes.push_back(onnx_node("Transpose", {"x"}, {"a"}, {attr_ints("perm", {2, 1, 0})}));
  set_type(m, "a", {3, 4, 5});
  m.nodes.push_back(onnx_node("MatMul", {"a", "w"}, {"b"}));
  set_type(m, "b", {3, 4, 5});
  m.nodes.push_back(onnx_node("Transpose", {"b"}, {"c"}, {attr_ints("perm", {1, 0, 2})}));
  set_type(m, "c", {4, 3, 5});
  m.nodes.push_back(onnx_node("If", {"cond"}, {"y"},
                              {attr_g("then_branch", one_node_branch("then", node_proto("Identity", {"c"}, {"t_out"}))),
                               attr_g("else_branch", one_node_branch("else", node_proto("Identity", {"x"}, {"e_out"})))}));
  add_output(m, "y");
  CHECK(move_transposes_to_transposes(m) == 0);
  CHECK(made(m, "c").op_type() == "Transpose");
}

TEST_CASE("multi-head attention's packed projection split becomes a chunk of the projection") {
  // .contiguous(), then [0], [1], [2].
  auto graph = packed_projection(R"IR(
  %c : Tensor = aten::contiguous(%q, %z)
  %a : Tensor = aten::select(%c, %z, %z)
  %b : Tensor = aten::select(%c, %z, %one)
  %v : Tensor = aten::select(%c, %z, %two)
  %out : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %b, %v)
  return (%out)
)IR");
  const at::Tensor proj = at::randn({5, 2, 12});
  auto run = [&] {
    torch::jit::Stack stack{proj};
    run_graph(graph, stack);
    return stack.at(0).toTupleRef().elements();
  };
  const auto expected = run();
  REQUIRE(fold_packed_projection_splits(*graph) == 1);
  torch::jit::EliminateDeadCode(graph);
  std::vector<std::string> kinds;
  for (const auto* n : graph->nodes())
    if (n->kind() != c10::prim::Constant) kinds.push_back(n->kind().toQualString());
  CHECK(kinds == std::vector<std::string>{"aten::unsafe_chunk", "prim::ListUnpack", "prim::TupleConstruct"});
  const auto got = run();
  REQUIRE(got.size() == 3);
  for (size_t i = 0; i < 3; ++i) CHECK(at::equal(got[i].toTensor(), expected[i].toTensor()));
  CHECK(at::equal(got[1].toTensor(), proj.narrow(-1, 4, 4)));
}

TEST_CASE("a packed projection whose parts are read otherwise than by a constant select is left alone") {
  auto graph = packed_projection(R"IR(
  %r : Tensor = aten::relu(%q)
  return (%r)
)IR");
  CHECK(fold_packed_projection_splits(*graph) == 0);
}
