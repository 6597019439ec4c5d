// The ONNX passes (passes.h) on OnnxModels built by hand: dead-code elimination, constant
// folding, Conv+BatchNormalization fusion, and the stage that runs them under the export options.
#include "doctest_torch.h"  // before any libtorch header

#include <algorithm>
#include <cmath>

#include "2_eval/fold_kernels.h"
#include "2_eval/transposes_ahead.h"
#include "3_export/5_passes/passes.h"
#include "support.h"
#include "transposes_support.h"

using namespace onnxport;
using namespace onnxport::core;
using namespace onnxport::core_test;

namespace {

std::vector<double> values(const Tensor& t) { return t.as_doubles(); }

// x -> Conv(conv.weight[, conv.bias]) -> c -> BatchNormalization(bn.*) -> y (graph output).
struct ConvBnModel {
  OnnxModel model;
  Tensor weight = float_tensor({2, 3, 1, 1}, {0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f});
  Tensor bias = float_tensor({2}, {0.1f, -0.2f});
  Tensor scale = float_tensor({2}, {2.0f, 0.5f});
  Tensor shift = float_tensor({2}, {1.0f, -1.0f});
  Tensor mean = float_tensor({2}, {0.3f, -0.4f});
  Tensor var = float_tensor({2}, {4.0f, 0.25f});
  float epsilon = 1e-3f;

  explicit ConvBnModel(bool with_bias = true, std::vector<onnx::AttributeProto> bn_attrs = {}) {
    add_input(model, "x", float_type({1, 3, 4, 4}));
    std::vector<std::string> conv_inputs{"x", "conv.weight"};
    if (with_bias) conv_inputs.push_back("conv.bias");
    model.nodes.push_back(onnx_node("Conv", conv_inputs, {"c"}, {attr_ints("kernel_shape", {1, 1})}));
    bn_attrs.push_back(attr_f("epsilon", epsilon));
    model.nodes.push_back(onnx_node(
        "BatchNormalization", {"c", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"}, {"y"}, bn_attrs));
    add_output(model, "y");
    model.initializers.push_back({"conv.weight", weight});
    if (with_bias) model.initializers.push_back({"conv.bias", bias});
    model.initializers.push_back({"bn.weight", scale});
    model.initializers.push_back({"bn.bias", shift});
    model.initializers.push_back({"bn.running_mean", mean});
    model.initializers.push_back({"bn.running_var", var});
  }
};

ExportOptions passes_options() {
  ExportOptions o;
  o.opset_version = 17;
  return o;
}

}  // namespace

// ---- eliminate_dead_code ----------------------------------------------------------------------

TEST_CASE("dead-code elimination removes unread nodes and initializers and keeps what feeds the outputs") {
  OnnxModel m;
  add_input(m, "x", float_type({2}));
  m.nodes.push_back(onnx_node("Relu", {"x"}, {"r"}));
  m.nodes.push_back(onnx_node("Neg", {"x"}, {"unused"}));            // read by nobody
  m.nodes.push_back(onnx_node("Exp", {"unused"}, {"also_unused"}));  // a dead chain
  m.nodes.push_back(onnx_node("Add", {"r", "w"}, {"y"}));
  m.nodes.push_back(onnx_node("Mul", {"y", "w_dead"}, {"dead_mul"}));
  add_output(m, "y");
  m.initializers.push_back({"w", Tensor::floats({1.0f, 2.0f})});
  m.initializers.push_back({"w_dead", Tensor::floats({3.0f, 4.0f})});
  m.initializers.push_back({"orphan", Tensor::floats({5.0f})});
  m.initializers.push_back({"w", Tensor::floats({9.0f, 9.0f})});  // duplicate name: the first stays

  eliminate_dead_code(m);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Relu", "Add"});
  CHECK(initializer_names(m) == std::vector<std::string>{"w"});
  CHECK(values(initializer(m, "w")) == std::vector<double>{1.0, 2.0});
  REQUIRE(m.inputs.size() == 1);  // graph inputs are never removed
}

TEST_CASE("dead-code elimination keeps nodes whose outputs a sub-graph captures") {
  OnnxModel m;
  add_input(m, "cond", scalar_type(DType::Bool));
  add_input(m, "x", float_type({2}));
  m.nodes.push_back(onnx_node("Relu", {"x"}, {"captured"}));  // read only inside the branch
  m.nodes.push_back(onnx_node("Neg", {"x"}, {"dead"}));
  m.initializers.push_back({"branch_bias", Tensor::floats({1.0f, 1.0f})});  // read only inside the branch

  m.nodes.push_back(onnx_node("If", {"cond"}, {"y"},
                              {attr_g("then_branch", one_node_branch("then", node_proto("Add", {"captured", "branch_bias"}, {"t_out"}))),
                               attr_g("else_branch", one_node_branch("else", node_proto("Identity", {"x"}, {"e_out"})))}));
  add_output(m, "y");

  eliminate_dead_code(m);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Relu", "If"});
  CHECK(initializer_names(m) == std::vector<std::string>{"branch_bias"});
}

TEST_CASE("dead-code elimination of a model without outputs removes every node and initializer") {
  OnnxModel m;
  add_input(m, "x", float_type({2}));
  m.nodes.push_back(onnx_node("Relu", {"x"}, {"r"}));
  m.initializers.push_back({"w", Tensor::floats({1.0f})});
  eliminate_dead_code(m);
  CHECK(m.nodes.empty());
  CHECK(m.initializers.empty());
}

// ---- fold_constants ---------------------------------------------------------------------------

TEST_CASE("a chain of ops on initializers folds into initializers named after the outputs they replace") {
  OnnxModel m;
  add_input(m, "x", float_type({2}));
  m.initializers.push_back({"a", Tensor::floats({1.0f, 2.0f})});
  m.initializers.push_back({"b", Tensor::floats({3.0f, 4.0f})});
  m.nodes.push_back(onnx_node("Add", {"a", "b"}, {"s"}));  // [4, 6]
  m.nodes.push_back(onnx_node("Mul", {"s", "b"}, {"m"}));  // [12, 24]
  m.nodes.push_back(onnx_node("Add", {"x", "m"}, {"y"}));  // reads a graph input: stays
  add_output(m, "y");

  const FoldStats stats = fold_constants(m, 17, /*parameters_are_constant=*/true);
  CHECK(stats.folded_nodes == 2);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Add"});
  CHECK(inputs_of(m.nodes[0].proto) == std::vector<std::string>{"x", "m"});
  // The folded chain's inputs (a, b and the intermediate s) went as their last reader folded.
  CHECK(initializer_names(m) == std::vector<std::string>{"m"});
  CHECK(values(initializer(m, "m")) == std::vector<double>{12.0, 24.0});
  REQUIRE(m.value_types.count("m") == 1);
  CHECK(from_type_proto(m.value_types.at("m")).str() == "float32[2]");
}

TEST_CASE("a Transpose of a weight transposed ahead on another thread takes that copy, with the same values") {
  const at::Tensor weight = at::arange(12, at::kFloat).reshape({3, 4});
  const at::Tensor other = at::arange(6, at::kFloat).reshape({2, 3});
  TransposesAhead ahead({weight, other, at::ones({2, 2, 2})}, size_t{1} << 20);
  CHECK(ahead.started() == 2);  // 2-d tensors only
  REQUIRE(wait_made(ahead, 2));
  OnnxModel m;
  add_input(m, "x", float_type({1, 3}));
  m.initializers.push_back({"fc.weight", borrow_tensor(weight)});
  m.initializers.push_back({"other", borrow_tensor(other)});
  m.nodes.push_back(onnx_node("Transpose", {"fc.weight"}, {"t"}, {attr_ints("perm", {1, 0})}));
  m.nodes.push_back(onnx_node("MatMul", {"x", "t"}, {"y"}));
  add_input(m, "x2", float_type({1, 2}));
  m.nodes.push_back(onnx_node("Transpose", {"other"}, {"u"}));  // no perm: reversed, which is [1, 0] too
  m.nodes.push_back(onnx_node("MatMul", {"x2", "u"}, {"z"}));
  add_output(m, "y");
  add_output(m, "z");

  CHECK(fold_constants(m, 17, true, ParameterBytes{&ahead}).folded_nodes == 2);
  CHECK(values(initializer(m, "fc.weight")) == values(borrow_tensor(weight.t().contiguous())));
  CHECK(values(initializer(m, "other")) == values(borrow_tensor(other.t().contiguous())));
  // Each copy was taken by its fold: none is left to give.
  CHECK_FALSE(ahead.take(weight).has_value());
  CHECK_FALSE(ahead.take(other).has_value());
  // A tensor that was not started, or a view of other sizes over the same bytes, is not given.
  CHECK_FALSE(ahead.take(at::zeros({3, 4})).has_value());
  TransposesAhead again({weight}, size_t{1} << 20);
  REQUIRE(wait_made(again, 1));
  CHECK_FALSE(again.take(weight.view({4, 3})).has_value());
  CHECK(again.take(weight).has_value());
  // A copy past the bytes the copies may hold is not made ahead: the fold makes it.
  TransposesAhead over({weight}, 8);
  CHECK_FALSE(over.take(weight).has_value());
}

TEST_CASE("Transposes of weights of 470 KiB fold to their transposes, made ahead or in the fold") {
  // Large enough to be carved from huge-page buffers, on the thread ahead or in the pass.
  at::manual_seed(5);
  const at::Tensor ahead_weight = at::randn({300, 400});
  const at::Tensor fold_weight = at::randn({400, 300});
  TransposesAhead ahead({ahead_weight}, size_t{1} << 30);
  REQUIRE(wait_made(ahead, 1));
  OnnxModel m;
  add_input(m, "x", float_type({1, 400}));
  m.initializers.push_back({"a.weight", borrow_tensor(ahead_weight)});
  m.initializers.push_back({"b.weight", borrow_tensor(fold_weight)});
  m.nodes.push_back(onnx_node("Transpose", {"a.weight"}, {"at"}, {attr_ints("perm", {1, 0})}));
  m.nodes.push_back(onnx_node("MatMul", {"x", "at"}, {"h"}));
  m.nodes.push_back(onnx_node("Transpose", {"b.weight"}, {"bt"}));
  m.nodes.push_back(onnx_node("MatMul", {"h", "bt"}, {"y"}));
  add_output(m, "y");

  CHECK(fold_constants(m, 17, true, ParameterBytes{&ahead}).folded_nodes == 2);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"MatMul", "MatMul"});
  CHECK(at::equal(to_aten(initializer(m, "a.weight")), ahead_weight.t()));
  CHECK(at::equal(to_aten(initializer(m, "b.weight")), fold_weight.t()));
}

TEST_CASE("private parameters: a Transpose that is a weight's last reader writes the transpose over its bytes") {
  at::manual_seed(6);
  const at::Tensor alone = at::randn({300, 400});   // read by its Transpose only
  const at::Tensor tied = at::randn({200, 300});    // read by its Transpose and by an Add
  const at::Tensor storage = at::randn({2, 20, 30});  // two parameters, slices of one buffer
  const std::vector<at::Tensor> before{alone.clone(), tied.clone(), storage.clone()};
  auto build = [&] {
    OnnxModel m;
    add_input(m, "x", float_type({1, 400}));
    add_input(m, "s", float_type({200, 300}));
    add_input(m, "z", float_type({1, 30}));
    m.initializers.push_back({"a.weight", borrow_tensor(alone)});
    m.initializers.push_back({"b.weight", borrow_tensor(tied)});
    m.initializers.push_back({"c.weight", borrow_tensor(storage[0])});
    m.initializers.push_back({"d.weight", borrow_tensor(storage[0].view({30, 20}))});  // the same bytes again
    m.nodes.push_back(onnx_node("Transpose", {"a.weight"}, {"at"}, {attr_ints("perm", {1, 0})}));
    m.nodes.push_back(onnx_node("MatMul", {"x", "at"}, {"h"}));
    m.nodes.push_back(onnx_node("Transpose", {"b.weight"}, {"bt"}));
    m.nodes.push_back(onnx_node("MatMul", {"h", "bt"}, {"y"}));
    m.nodes.push_back(onnx_node("Add", {"s", "b.weight"}, {"sb"}));
    m.nodes.push_back(onnx_node("Transpose", {"c.weight"}, {"ct"}));
    m.nodes.push_back(onnx_node("MatMul", {"z", "ct"}, {"zc"}));
    m.nodes.push_back(onnx_node("MatMul", {"zc", "d.weight"}, {"zd"}));
    for (const char* out : {"y", "sb", "zd"}) add_output(m, out);
    return m;
  };
  const auto data = [](const Tensor& t) { return t.data(); };

  SUBCASE("nothing else holds them: only the lone weight is written over") {
    OnnxModel m = build();
    CHECK(fold_constants(m, 17, true, ParameterBytes{nullptr, true}).folded_nodes == 3);
    CHECK(data(initializer(m, "a.weight")) == alone.data_ptr());
    CHECK(at::equal(to_aten(initializer(m, "a.weight")), before[0].t()));
    CHECK(at::equal(to_aten(initializer(m, "b.weight_transposed")), before[1].t()));
    CHECK(at::equal(tied, before[1]));        // the Add still reads it
    CHECK(at::equal(storage, before[2]));     // d.weight shares c.weight's bytes
    CHECK(at::equal(to_aten(initializer(m, "c.weight")), before[2][0].t()));
  }
  SUBCASE("parameters the caller holds too: every transpose is a copy") {
    OnnxModel m = build();
    CHECK(fold_constants(m, 17, true).folded_nodes == 3);
    CHECK(data(initializer(m, "a.weight")) != alone.data_ptr());
    CHECK(at::equal(to_aten(initializer(m, "a.weight")), before[0].t()));
    CHECK(at::equal(alone, before[0]));
  }
}

TEST_CASE("a parameter that folds wholly into a value of its size lends that value its name and a doc_string") {
  OnnxModel m;
  add_input(m, "x", float_type({1, 3}));
  m.initializers.push_back({"fc.weight", float_tensor({2, 3}, {1, 2, 3, 4, 5, 6})});
  m.initializers.push_back({"fc.bias", Tensor::floats({0.5f, -0.5f})});
  m.nodes.push_back(onnx_node("Transpose", {"fc.weight"}, {"t"}, {attr_ints("perm", {1, 0})}));
  m.nodes.push_back(onnx_node("Neg", {"t"}, {"n"}));           // a chain: the name passes on
  m.nodes.push_back(onnx_node("MatMul", {"x", "n"}, {"mm"}));  // reads a graph input: stays
  m.nodes.push_back(onnx_node("Add", {"mm", "fc.bias"}, {"y"}));
  add_output(m, "y");

  const FoldStats stats = fold_constants(m, 17, true);
  CHECK(stats.folded_nodes == 2);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"MatMul", "Add"});
  CHECK(inputs_of(m.nodes[0].proto) == std::vector<std::string>{"x", "fc.weight"});
  CHECK(initializer_names(m) == std::vector<std::string>{"fc.bias", "fc.weight"});
  REQUIRE(find_initializer(m, "fc.weight") != nullptr);
  const Initializer& w = *find_initializer(m, "fc.weight");
  CHECK(w.tensor.shape() == std::vector<int64_t>{3, 2});
  CHECK(values(w.tensor) == std::vector<double>{-1, -4, -2, -5, -3, -6});
  CHECK(w.doc == "folded at export by onnxport: parameter fc.weight through Transpose, Neg");
  REQUIRE(m.value_types.count("fc.weight") == 1);
  CHECK(from_type_proto(m.value_types.at("fc.weight")).str() == "float32[3,2]");
}

TEST_CASE("a folded value computed from two initializers, or of another size, keeps its own name") {
  OnnxModel m;
  add_input(m, "x", float_type({1}));
  m.initializers.push_back({"a", Tensor::floats({1.0f, 2.0f})});
  m.initializers.push_back({"b", Tensor::floats({3.0f, 4.0f})});
  m.nodes.push_back(onnx_node("Add", {"a", "b"}, {"s"}));
  m.nodes.push_back(onnx_node("Concat", {"s", "s"}, {"r"}, {attr_i("axis", 0)}));
  m.nodes.push_back(onnx_node("Add", {"x", "r"}, {"y"}));
  add_output(m, "y");

  fold_constants(m, 17, true);
  CHECK(initializer_names(m) == std::vector<std::string>{"r"});
  CHECK(m.initializers[0].doc.empty());
}

TEST_CASE("a pooled weight two layers transpose folds once, named after the weight, and both read it") {
  // TorchScript's constant pooling gives two identical layers one weight: each layer's Linear
  // transposes it. The folded value is that weight's, transposed, and is named so.
  OnnxModel m;
  add_input(m, "x", float_type({1, 3}));
  m.initializers.push_back({"layers.0.linear1.weight", float_tensor({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})});
  m.nodes.push_back(onnx_node("Transpose", {"layers.0.linear1.weight"}, {"/layers.0/linear1/Transpose_output_0"},
                              {attr_ints("perm", {1, 0})}));
  m.nodes.push_back(onnx_node("MatMul", {"x", "/layers.0/linear1/Transpose_output_0"}, {"h"}));
  m.nodes.push_back(onnx_node("Transpose", {"layers.0.linear1.weight"}, {"/layers.1/linear1/Transpose_output_0"},
                              {attr_ints("perm", {1, 0})}));
  m.nodes.push_back(onnx_node("MatMul", {"h", "/layers.1/linear1/Transpose_output_0"}, {"y"}));
  add_output(m, "y");

  const FoldStats stats = fold_constants(m, 17, true);
  CHECK(stats.folded_nodes == 2);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"MatMul", "MatMul"});
  CHECK(initializer_names(m) == std::vector<std::string>{"layers.0.linear1.weight"});
  CHECK(inputs_of(m.nodes[0].proto) == std::vector<std::string>{"x", "layers.0.linear1.weight"});
  CHECK(inputs_of(m.nodes[1].proto) == std::vector<std::string>{"h", "layers.0.linear1.weight"});
  REQUIRE(find_initializer(m, "layers.0.linear1.weight") != nullptr);
  const Initializer& w = *find_initializer(m, "layers.0.linear1.weight");
  CHECK(values(w.tensor) == std::vector<double>{1, 4, 7, 2, 5, 8, 3, 6, 9});
  CHECK(w.doc == "folded at export by onnxport: parameter layers.0.linear1.weight through Transpose");
  REQUIRE(m.value_types.count("layers.0.linear1.weight") == 1);
  CHECK(m.value_types.count("/layers.0/linear1/Transpose_output_0") == 0);
}

TEST_CASE("a weight read as it is and transposed keeps its name; the transposed copy is <weight>_transposed") {
  // Tied weights: the embedding gathers rows of embed.weight, the output layer multiplies by its transpose.
  OnnxModel m;
  add_input(m, "ids", tensor_type(DType::Int64, {2}));
  m.initializers.push_back({"embed.weight", float_tensor({3, 2}, {1, 2, 3, 4, 5, 6})});
  m.nodes.push_back(onnx_node("Gather", {"embed.weight", "ids"}, {"e"}));
  m.nodes.push_back(onnx_node("Transpose", {"embed.weight"}, {"/head/Transpose_output_0"}, {attr_ints("perm", {1, 0})}));
  m.nodes.push_back(onnx_node("MatMul", {"e", "/head/Transpose_output_0"}, {"y"}));
  add_output(m, "y");

  fold_constants(m, 17, true);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Gather", "MatMul"});
  CHECK(initializer_names(m) == std::vector<std::string>{"embed.weight", "embed.weight_transposed"});
  CHECK(inputs_of(m.nodes[1].proto) == std::vector<std::string>{"e", "embed.weight_transposed"});
  REQUIRE(find_initializer(m, "embed.weight_transposed") != nullptr);
  CHECK(values(initializer(m, "embed.weight_transposed")) == std::vector<double>{1, 3, 5, 2, 4, 6});
  CHECK(find_initializer(m, "embed.weight_transposed")->doc ==
        "folded at export by onnxport: parameter embed.weight through Transpose");
}

TEST_CASE("a fold that repeats an op on a value that took a parameter's name is not mistaken for the first") {
  // Transpose(Transpose(w)): the first fold's value takes the name w, and the second node then
  // reads "w" with the same op and attributes as the first did: it is another value.
  OnnxModel m;
  add_input(m, "x", float_type({1, 2}));
  m.initializers.push_back({"w", float_tensor({2, 3}, {1, 2, 3, 4, 5, 6})});
  m.nodes.push_back(onnx_node("Transpose", {"w"}, {"t1"}, {attr_ints("perm", {1, 0})}));
  m.nodes.push_back(onnx_node("Transpose", {"t1"}, {"t2"}, {attr_ints("perm", {1, 0})}));
  m.nodes.push_back(onnx_node("MatMul", {"x", "t2"}, {"y"}));
  add_output(m, "y");

  CHECK(fold_constants(m, 17, true).folded_nodes == 2);
  CHECK(initializer_names(m) == std::vector<std::string>{"w"});
  CHECK(initializer(m, "w").shape() == std::vector<int64_t>{2, 3});
  CHECK(values(initializer(m, "w")) == std::vector<double>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("folding keeps an initializer that an unfolded node still reads, and a graph output") {
  OnnxModel m;
  add_input(m, "x", float_type({2}));
  m.initializers.push_back({"w", Tensor::floats({1.0f, 2.0f})});
  m.initializers.push_back({"b", Tensor::floats({3.0f, 4.0f})});
  m.nodes.push_back(onnx_node("Neg", {"w"}, {"n"}));            // folds: its input w is still read below
  m.nodes.push_back(onnx_node("Add", {"x", "w"}, {"y"}));       // reads a graph input: stays
  m.nodes.push_back(onnx_node("Mul", {"n", "b"}, {"z"}));       // makes a graph output: stays
  m.nodes.push_back(onnx_node("Identity", {"b"}, {"unread"}));  // its output is unread: left to DCE
  add_output(m, "y");
  add_output(m, "z");

  const FoldStats stats = fold_constants(m, 17, true);
  CHECK(stats.folded_nodes == 1);  // Neg
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Add", "Mul", "Identity"});
  // w lives on beside its folded Neg, which is named after it (and says so in its doc_string).
  CHECK(initializer_names(m) == std::vector<std::string>{"w", "b", "w_Neg"});
  CHECK(values(initializer(m, "w")) == std::vector<double>{1.0, 2.0});
  REQUIRE(find_initializer(m, "w_Neg") != nullptr);
  CHECK(values(initializer(m, "w_Neg")) == std::vector<double>{-1.0, -2.0});
  CHECK(find_initializer(m, "w_Neg")->doc == "folded at export by onnxport: parameter w through Neg");
  CHECK(inputs_of(m.nodes[1].proto) == std::vector<std::string>{"w_Neg", "b"});
}

TEST_CASE("Constant nodes fold like initializers and Shape of a fully static value folds without its data") {
  OnnxModel m;
  add_input(m, "x", float_type({2, 3}));
  m.nodes.push_back(onnx_node("Relu", {"x"}, {"r"}));
  m.value_types["r"] = to_type_proto(float_type({2, 3}));
  m.nodes.push_back(onnx_node("Shape", {"r"}, {"shape"}));
  m.nodes.push_back(constant_node("zero", Tensor::scalar_int64(0)));
  m.nodes.push_back(onnx_node("Gather", {"shape", "zero"}, {"rows"}));
  m.nodes.push_back(onnx_node("Unsqueeze", {"rows", "axes"}, {"rows_1d"}));
  m.initializers.push_back({"axes", Tensor::ints({0})});
  m.nodes.push_back(onnx_node("Reshape", {"r", "rows_1d"}, {"y"}));  // reads r: stays
  add_output(m, "y");

  const FoldStats stats = fold_constants(m, 13, true);
  CHECK(stats.folded_nodes == 3);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Relu", "Constant", "Reshape"});
  // shape, rows and axes were read only by folded nodes, so only the last fold remains.
  CHECK(initializer_names(m) == std::vector<std::string>{"rows_1d"});
  CHECK(initializer(m, "rows_1d").shape() == std::vector<int64_t>{1});
  CHECK(initializer(m, "rows_1d").as_int64s() == std::vector<int64_t>{2});
  CHECK(initializer(m, "rows_1d").dtype() == DType::Int64);

  eliminate_dead_code(m);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Relu", "Reshape"});
  CHECK(initializer_names(m) == std::vector<std::string>{"rows_1d"});
}

TEST_CASE("Shape of a value with a symbolic or unknown dim is not folded") {
  OnnxModel m;
  add_input(m, "x", TensorType{DType::Float, std::vector<Dim>{Dim::named("batch"), Dim::fixed(3)}});
  add_input(m, "z", TensorType{DType::Float, std::nullopt});
  m.nodes.push_back(onnx_node("Shape", {"x"}, {"sx"}));
  m.nodes.push_back(onnx_node("Shape", {"z"}, {"sz"}));
  m.nodes.push_back(onnx_node("Shape", {"untyped"}, {"su"}));
  m.nodes.push_back(onnx_node("Concat", {"sx", "sz", "su"}, {"y"}, {attr_i("axis", 0)}));
  add_output(m, "y");
  CHECK(fold_constants(m, 17, true).folded_nodes == 0);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Shape", "Shape", "Shape", "Concat"});
  CHECK(m.initializers.empty());
}

TEST_CASE("a foldable node whose output is a graph output stays a node") {
  OnnxModel m;
  m.initializers.push_back({"a", Tensor::floats({1.0f})});
  m.initializers.push_back({"b", Tensor::floats({2.0f})});
  m.nodes.push_back(onnx_node("Add", {"a", "b"}, {"s"}));
  m.nodes.push_back(onnx_node("Neg", {"s"}, {"y"}));
  add_output(m, "y");
  CHECK(fold_constants(m, 17, true).folded_nodes == 1);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Neg"});
  CHECK(inputs_of(m.nodes[0].proto) == std::vector<std::string>{"s"});
  CHECK(find_initializer(m, "y") == nullptr);
  CHECK(values(initializer(m, "s")) == std::vector<double>{3.0});
}

TEST_CASE("with parameters_are_constant=false initializers are not folded, Constant nodes still are") {
  OnnxModel m;
  add_input(m, "x", float_type({1}));
  m.initializers.push_back({"w", Tensor::floats({1.0f})});
  m.nodes.push_back(onnx_node("Neg", {"w"}, {"neg_w"}));
  m.nodes.push_back(constant_node("k", Tensor::floats({2.0f})));
  m.nodes.push_back(onnx_node("Neg", {"k"}, {"neg_k"}));
  m.nodes.push_back(onnx_node("Sum", {"x", "neg_w", "neg_k"}, {"y"}));
  add_output(m, "y");

  CHECK(fold_constants(m, 17, /*parameters_are_constant=*/false).folded_nodes == 1);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Neg", "Constant", "Sum"});
  CHECK(inputs_of(m.nodes[0].proto) == std::vector<std::string>{"w"});
  CHECK(initializer_names(m) == std::vector<std::string>{"w", "neg_k"});
  CHECK(values(initializer(m, "neg_k")) == std::vector<double>{-2.0});
}

TEST_CASE("a node the evaluator cannot compute, or a custom-domain node, is kept and stops the chain") {
  OnnxModel m;
  m.initializers.push_back({"a", Tensor::floats({-1.0f, 2.0f})});
  m.nodes.push_back(onnx_node("Relu", {"a"}, {"r"}));  // no evaluator for Relu
  m.nodes.push_back(onnx_node("Neg", {"r"}, {"n"}));
  OnnxNode custom = onnx_node("Neg", {"a"}, {"c"});
  custom.proto.set_domain("com.vendor");
  m.nodes.push_back(custom);
  m.nodes.push_back(onnx_node("Add", {"n", "c"}, {"y"}));
  add_output(m, "y");
  CHECK(fold_constants(m, 17, true).folded_nodes == 0);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Relu", "Neg", "Neg", "Add"});
  CHECK(initializer_names(m) == std::vector<std::string>{"a"});
}

// ---- fuse_conv_batchnorm ----------------------------------------------------------------------

namespace {

// What the model's Conv at `index` computes from x, with the initializers it reads.
at::Tensor conv_of_model(const OnnxModel& m, const at::Tensor& x, size_t index = 0) {
  const auto& conv = m.nodes.at(index).proto;
  REQUIRE(conv.op_type() == "Conv");
  at::Tensor bias = conv.input_size() > 2 ? to_aten(initializer(m, conv.input(2))) : at::Tensor();
  return at::conv2d(x, to_aten(initializer(m, conv.input(1))), bias);
}

at::Tensor batch_norm_of(const at::Tensor& c, const Tensor& scale, const Tensor& shift, const Tensor& mean,
                         const Tensor& var, double epsilon) {
  return at::batch_norm(c, to_aten(scale), to_aten(shift), to_aten(mean), to_aten(var), /*training=*/false, 0.1,
                        epsilon, /*cudnn_enabled=*/false);
}

}  // namespace

TEST_CASE("Conv followed by inference BatchNormalization becomes one Conv with W*k and (b-mean)*k+shift") {
  ConvBnModel f;
  CHECK(fuse_conv_batchnorm(f.model) == 1);

  REQUIRE(f.model.nodes.size() == 1);
  const auto& conv = f.model.nodes[0].proto;
  CHECK(conv.op_type() == "Conv");
  CHECK(inputs_of(conv) == std::vector<std::string>{"x", "conv.weight", "conv.bias"});
  CHECK(outputs_of(conv) == std::vector<std::string>{"y"});
  CHECK(attr(conv, "kernel_shape").ints_size() == 2);

  // k = scale / sqrt(var + eps), per output channel.
  const std::vector<double> scale = values(f.scale), shift = values(f.shift), mean = values(f.mean),
                            var = values(f.var), w = values(f.weight), b = values(f.bias);
  std::vector<double> k;
  for (size_t c = 0; c < 2; ++c) k.push_back(scale[c] / std::sqrt(var[c] + f.epsilon));

  const Tensor& new_w = initializer(f.model, "conv.weight");
  const Tensor& new_b = initializer(f.model, "conv.bias");
  CHECK(new_w.dtype() == DType::Float);
  CHECK(new_w.shape() == std::vector<int64_t>{2, 3, 1, 1});
  CHECK(new_b.shape() == std::vector<int64_t>{2});
  const std::vector<double> got_w = values(new_w), got_b = values(new_b);
  for (size_t i = 0; i < 6; ++i) {
    CAPTURE(i);
    CHECK(got_w[i] == doctest::Approx(w[i] * k[i / 3]).epsilon(1e-5));
  }
  for (size_t c = 0; c < 2; ++c) {
    CAPTURE(c);
    CHECK(got_b[c] == doctest::Approx((b[c] - mean[c]) * k[c] + shift[c]).epsilon(1e-5));
  }
  // Each name appears once; the statistics are left for dead-code elimination.
  CHECK(initializer_names(f.model) == std::vector<std::string>{"bn.weight", "bn.bias", "bn.running_mean",
                                                               "bn.running_var", "conv.weight", "conv.bias"});
  eliminate_dead_code(f.model);
  CHECK(initializer_names(f.model) == std::vector<std::string>{"conv.weight", "conv.bias"});
}

TEST_CASE("the fused Conv computes what Conv then BatchNormalization computed") {
  ConvBnModel f;
  at::Tensor x = at::linspace(-2.0, 2.0, 48).reshape({1, 3, 4, 4});
  at::Tensor expected =
      at::batch_norm(at::conv2d(x, to_aten(f.weight), to_aten(f.bias)), to_aten(f.scale), to_aten(f.shift),
                     to_aten(f.mean), to_aten(f.var), /*training=*/false, 0.1, f.epsilon, /*cudnn_enabled=*/false);
  REQUIRE(fuse_conv_batchnorm(f.model) == 1);
  at::Tensor fused =
      at::conv2d(x, to_aten(initializer(f.model, "conv.weight")), to_aten(initializer(f.model, "conv.bias")));
  CHECK(at::allclose(fused, expected, 1e-5, 1e-5));
  CHECK_FALSE(at::allclose(at::conv2d(x, to_aten(f.weight), to_aten(f.bias)), expected, 1e-5, 1e-5));
}

TEST_CASE("three Conv+BN pairs with weights of 144 KiB fuse into Convs that compute what the pairs computed") {
  // Large enough to be carved from the pass's huge-page buffer, and computed on two threads.
  at::manual_seed(3);
  OnnxModel m;
  add_input(m, "x", float_type({1, 64, 6, 6}));
  std::vector<at::Tensor> weights, stats;
  std::string previous = "x";
  for (int i = 0; i < 3; ++i) {
    const std::string n = std::to_string(i);
    weights.push_back(at::randn({64, 64, 3, 3}) * 0.05);
    m.initializers.push_back({"conv" + n + ".weight", borrow_tensor(weights.back())});
    const char* stat_names[] = {".weight", ".bias", ".running_mean", ".running_var"};
    for (int s = 0; s < 4; ++s) {
      stats.push_back(s == 3 ? at::rand({64}) + 0.5 : at::randn({64}));  // a variance is positive
      m.initializers.push_back({"bn" + n + stat_names[s], borrow_tensor(stats.back())});
    }
    m.nodes.push_back(onnx_node("Conv", {previous, "conv" + n + ".weight"}, {"c" + n},
                                {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1})}));
    m.nodes.push_back(onnx_node("BatchNormalization",
                                {"c" + n, "bn" + n + ".weight", "bn" + n + ".bias", "bn" + n + ".running_mean",
                                 "bn" + n + ".running_var"},
                                {"y" + n}, {attr_f("epsilon", 1e-5f)}));
    previous = "y" + n;
  }
  add_output(m, previous);
  const at::Tensor x = at::randn({1, 64, 6, 6});
  at::Tensor expected = x;
  for (int i = 0; i < 3; ++i)
    expected = at::batch_norm(at::conv2d(expected, weights[i], {}, 1, 1), stats[4 * i], stats[4 * i + 1],
                              stats[4 * i + 2], stats[4 * i + 3], false, 0.1, 1e-5, false);

  REQUIRE(fuse_conv_batchnorm(m) == 3);
  REQUIRE(op_types(m.nodes) == std::vector<std::string>{"Conv", "Conv", "Conv"});
  at::Tensor fused = x;
  for (size_t i = 0; i < 3; ++i) {
    const auto& conv = m.nodes[i].proto;
    fused = at::conv2d(fused, to_aten(initializer(m, conv.input(1))), to_aten(initializer(m, conv.input(2))), 1, 1);
  }
  CHECK(at::allclose(fused, expected, 1e-4, 1e-4));
  // The sources are untouched: the fused weights are new tensors.
  CHECK_FALSE(at::allclose(to_aten(initializer(m, "conv0.weight")), weights[0]));
}

TEST_CASE("private weights: a Conv weight only its pair reads takes the fused values in its own bytes") {
  ConvBnModel copied;  // fused into a new tensor, as for a caller's module
  REQUIRE(fuse_conv_batchnorm(copied.model) == 1);
  const at::Tensor expected = to_aten(initializer(copied.model, "conv.weight"));
  const std::vector<double> before = values(ConvBnModel().weight);
  CHECK(values(copied.weight) == before);
  CHECK(values(initializer(copied.model, "conv.weight")) != before);

  SUBCASE("alone: written over") {
    ConvBnModel f;
    REQUIRE(fuse_conv_batchnorm(f.model, /*weights_private=*/true) == 1);
    CHECK(initializer(f.model, "conv.weight").data() == f.weight.data());
    CHECK(at::equal(to_aten(initializer(f.model, "conv.weight")), expected));
  }
  SUBCASE("read by another node too: a new tensor") {
    ConvBnModel f;
    f.model.nodes.push_back(onnx_node("Identity", {"conv.weight"}, {"w_copy"}));
    add_output(f.model, "w_copy");
    REQUIRE(fuse_conv_batchnorm(f.model, true) == 1);
    CHECK(values(f.weight) == before);
    CHECK(at::equal(to_aten(initializer(f.model, "y_fused_weight")), expected));
  }
  SUBCASE("two pairs' Convs reading it: new tensors") {
    ConvBnModel f;
    f.model.nodes.push_back(onnx_node("Conv", {"x", "conv.weight", "conv.bias"}, {"c2"},
                                      {attr_ints("kernel_shape", {1, 1})}));
    f.model.nodes.push_back(onnx_node("BatchNormalization",
                                      {"c2", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"}, {"y2"},
                                      {attr_f("epsilon", f.epsilon)}));
    add_output(f.model, "y2");
    REQUIRE(fuse_conv_batchnorm(f.model, true) == 2);
    CHECK(values(f.weight) == before);
    REQUIRE(op_types(f.model.nodes) == std::vector<std::string>{"Conv", "Conv"});
    for (const auto& conv : f.model.nodes) CHECK(at::equal(to_aten(initializer(f.model, conv.proto.input(1))), expected));
  }
  SUBCASE("bytes another initializer holds: a new tensor") {
    ConvBnModel f;
    f.model.initializers.push_back({"alias", f.weight});
    f.model.nodes.push_back(onnx_node("Identity", {"alias"}, {"a"}));
    add_output(f.model, "a");
    REQUIRE(fuse_conv_batchnorm(f.model, true) == 1);
    CHECK(values(f.weight) == before);
    CHECK(at::equal(to_aten(initializer(f.model, "conv.weight")), expected));
  }
}

TEST_CASE("a Conv without bias gets a bias named after its weight") {
  ConvBnModel f(/*with_bias=*/false);
  REQUIRE(fuse_conv_batchnorm(f.model) == 1);
  REQUIRE(f.model.nodes.size() == 1);
  CHECK(inputs_of(f.model.nodes[0].proto) == std::vector<std::string>{"x", "conv.weight", "conv.bias"});
  const std::vector<double> scale = values(f.scale), shift = values(f.shift), mean = values(f.mean),
                            var = values(f.var);
  const std::vector<double> got_b = values(initializer(f.model, "conv.bias"));
  REQUIRE(got_b.size() == 2);
  for (size_t c = 0; c < 2; ++c)
    CHECK(got_b[c] == doctest::Approx(-mean[c] * scale[c] / std::sqrt(var[c] + f.epsilon) + shift[c]).epsilon(1e-5));
}

TEST_CASE("Conv and BatchNormalization are not fused when the Conv output has a second reader") {
  SUBCASE("another node") {
    ConvBnModel f;
    f.model.nodes.push_back(onnx_node("Relu", {"c"}, {"side"}));
    add_output(f.model, "side");
    CHECK(fuse_conv_batchnorm(f.model) == 0);
    CHECK(op_types(f.model.nodes) == std::vector<std::string>{"Conv", "BatchNormalization", "Relu"});
    CHECK(values(initializer(f.model, "conv.weight")) == values(f.weight));
  }
  SUBCASE("a graph output") {
    ConvBnModel f;
    add_output(f.model, "c");
    CHECK(fuse_conv_batchnorm(f.model) == 0);
    CHECK(op_types(f.model.nodes) == std::vector<std::string>{"Conv", "BatchNormalization"});
  }
}

TEST_CASE("a Conv whose weight another node also reads fuses into a new weight; the other reader keeps the original") {
  ConvBnModel f;
  f.model.nodes.push_back(onnx_node("Identity", {"conv.weight"}, {"w_copy"}));
  add_output(f.model, "w_copy");
  at::Tensor x = at::linspace(-2.0, 2.0, 48).reshape({1, 3, 4, 4});
  at::Tensor expected =
      at::batch_norm(at::conv2d(x, to_aten(f.weight), to_aten(f.bias)), to_aten(f.scale), to_aten(f.shift),
                     to_aten(f.mean), to_aten(f.var), /*training=*/false, 0.1, f.epsilon, /*cudnn_enabled=*/false);
  REQUIRE(fuse_conv_batchnorm(f.model) == 1);
  eliminate_dead_code(f.model);
  CHECK(op_types(f.model.nodes) == std::vector<std::string>{"Conv", "Identity"});
  // conv.weight stays for the Identity; the fused weight is named after the BN's output.
  CHECK(values(initializer(f.model, "conv.weight")) == values(f.weight));
  CHECK(inputs_of(f.model.nodes[1].proto) == std::vector<std::string>{"conv.weight"});
  CHECK(inputs_of(f.model.nodes[0].proto) == std::vector<std::string>{"x", "y_fused_weight", "conv.bias"});
  CHECK(at::allclose(conv_of_model(f.model, x), expected, 1e-5, 1e-5));
}

TEST_CASE("Conv+BN fuse when the conv bias is a pooled tensor the BN and another Conv read too") {
  // TorchScript's constant pooling of an untrained model: one all-zero tensor, named after the
  // first parameter it equals, is conv a's bias, bn's shift and mean, and conv b's bias.
  OnnxModel m;
  add_input(m, "x", float_type({1, 3, 4, 4}));
  const Tensor wa = float_tensor({2, 3, 1, 1}, {0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f});
  const Tensor wb = float_tensor({2, 3, 1, 1}, {1.0f, 2.0f, -0.5f, 0.75f, -1.25f, 0.5f});
  const Tensor zeros = float_tensor({2}, {0.0f, 0.0f});
  const Tensor scale = float_tensor({2}, {2.0f, 0.5f});
  const Tensor var = float_tensor({2}, {4.0f, 0.25f});
  m.nodes.push_back(onnx_node("Conv", {"x", "a.weight", "a.bias"}, {"ca"}, {attr_ints("kernel_shape", {1, 1})}));
  m.nodes.push_back(onnx_node("BatchNormalization", {"ca", "bn.weight", "a.bias", "a.bias", "bn.running_var"}, {"ya"},
                              {attr_f("epsilon", 1e-3f)}));
  m.nodes.push_back(onnx_node("Conv", {"x", "b.weight", "a.bias"}, {"cb"}, {attr_ints("kernel_shape", {1, 1})}));
  m.nodes.push_back(onnx_node("Relu", {"cb"}, {"yb"}));
  add_output(m, "ya");
  add_output(m, "yb");
  m.initializers.push_back({"a.weight", wa});
  m.initializers.push_back({"a.bias", zeros});
  m.initializers.push_back({"bn.weight", scale});
  m.initializers.push_back({"bn.running_var", var});
  m.initializers.push_back({"b.weight", wb});

  at::Tensor x = at::linspace(-2.0, 2.0, 48).reshape({1, 3, 4, 4});
  const at::Tensor expected_a = batch_norm_of(at::conv2d(x, to_aten(wa), to_aten(zeros)), scale, zeros, zeros, var, 1e-3);
  const at::Tensor expected_b = at::conv2d(x, to_aten(wb), to_aten(zeros));
  REQUIRE(fuse_conv_batchnorm(m) == 1);
  eliminate_dead_code(m);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Conv", "Conv", "Relu"});
  // Conv b still reads the pooled tensor, unchanged; conv a reads new tensors: its weight under its
  // own name, its bias under a name of the fusion (a.bias is b's too).
  CHECK(inputs_of(m.nodes[1].proto) == std::vector<std::string>{"x", "b.weight", "a.bias"});
  CHECK(values(initializer(m, "a.bias")) == values(zeros));
  CHECK(inputs_of(m.nodes[0].proto) == std::vector<std::string>{"x", "a.weight", "ya_fused_bias"});
  CHECK(outputs_of(m.nodes[0].proto) == std::vector<std::string>{"ya"});
  CHECK(at::allclose(conv_of_model(m, x, 0), expected_a, 1e-5, 1e-5));
  CHECK(at::allclose(conv_of_model(m, x, 1), expected_b));
}

TEST_CASE("Conv+BN pairs sharing pooled biases and statistics all fuse, each conv's tensors named after it") {
  // Two Conv+BN pairs of an untrained model after constant pooling: one zeros tensor (named
  // a.bias) is both convs' bias and both BNs' shift and mean, one ones tensor (named bn_a.weight)
  // both BNs' scale and var. No fused tensor may carry the other module's name.
  OnnxModel m;
  add_input(m, "x", float_type({1, 2, 3, 3}));
  const Tensor wa = float_tensor({2, 2, 1, 1}, {0.5f, -1.0f, 2.0f, 1.5f});
  const Tensor wb = float_tensor({2, 2, 1, 1}, {1.0f, 2.0f, -0.5f, 0.75f});
  const Tensor zeros = float_tensor({2}, {0.0f, 0.0f});
  const Tensor ones = float_tensor({2}, {1.0f, 1.0f});
  m.nodes.push_back(onnx_node("Conv", {"x", "a.weight", "a.bias"}, {"ca"}, {attr_ints("kernel_shape", {1, 1})}));
  m.nodes.push_back(onnx_node("BatchNormalization", {"ca", "bn_a.weight", "a.bias", "a.bias", "bn_a.weight"}, {"ya"}));
  m.nodes.push_back(onnx_node("Conv", {"ya", "b.weight", "a.bias"}, {"cb"}, {attr_ints("kernel_shape", {1, 1})}));
  m.nodes.push_back(onnx_node("BatchNormalization", {"cb", "bn_a.weight", "a.bias", "a.bias", "bn_a.weight"}, {"yb"}));
  add_output(m, "yb");
  m.initializers.push_back({"a.weight", wa});
  m.initializers.push_back({"a.bias", zeros});
  m.initializers.push_back({"bn_a.weight", ones});
  m.initializers.push_back({"b.weight", wb});

  at::Tensor x = at::linspace(-2.0, 2.0, 18).reshape({1, 2, 3, 3});
  const at::Tensor ya = batch_norm_of(at::conv2d(x, to_aten(wa), to_aten(zeros)), ones, zeros, zeros, ones, 1e-5);
  const at::Tensor yb = batch_norm_of(at::conv2d(ya, to_aten(wb), to_aten(zeros)), ones, zeros, zeros, ones, 1e-5);
  REQUIRE(fuse_conv_batchnorm(m) == 2);
  eliminate_dead_code(m);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Conv", "Conv"});
  CHECK(inputs_of(m.nodes[0].proto) == std::vector<std::string>{"x", "a.weight", "a.bias"});
  CHECK(inputs_of(m.nodes[1].proto) == std::vector<std::string>{"ya", "b.weight", "b.bias"});
  CHECK(initializer_names(m) == std::vector<std::string>{"a.weight", "a.bias", "b.weight", "b.bias"});
  CHECK(at::allclose(conv_of_model(m, x, 0), ya, 1e-5, 1e-5));
  CHECK(at::allclose(conv_of_model(m, conv_of_model(m, x, 0), 1), yb, 1e-5, 1e-5));
}

TEST_CASE("a BatchNormalization in training mode or with non-constant statistics is not fused") {
  SUBCASE("training_mode=1") {
    ConvBnModel f(true, {attr_i("training_mode", 1)});
    CHECK(fuse_conv_batchnorm(f.model) == 0);
    CHECK(op_types(f.model.nodes) == std::vector<std::string>{"Conv", "BatchNormalization"});
    CHECK(values(initializer(f.model, "conv.weight")) == values(f.weight));
  }
  SUBCASE("training_mode=0 is inference") {
    ConvBnModel f(true, {attr_i("training_mode", 0)});
    CHECK(fuse_conv_batchnorm(f.model) == 1);
  }
  SUBCASE("running_var is a graph input") {
    ConvBnModel f;
    auto& inits = f.model.initializers;
    inits.erase(
        std::remove_if(inits.begin(), inits.end(), [](const Initializer& i) { return i.name == "bn.running_var"; }),
        inits.end());
    add_input(f.model, "bn.running_var", float_type({2}));
    CHECK(fuse_conv_batchnorm(f.model) == 0);
    CHECK(f.model.nodes.size() == 2);
  }
}

// ---- run_onnx_passes --------------------------------------------------------------------------

namespace {
// ConvBnModel plus a foldable chain on initializers feeding a second output.
OnnxModel passes_model() {
  ConvBnModel f;
  OnnxModel m = std::move(f.model);
  m.initializers.push_back({"a", Tensor::floats({1.0f})});
  m.initializers.push_back({"b", Tensor::floats({2.0f})});
  m.nodes.push_back(onnx_node("Add", {"a", "b"}, {"s"}));
  m.nodes.push_back(onnx_node("Add", {"x", "s"}, {"z"}));
  m.nodes.push_back(onnx_node("Neg", {"x"}, {"dead"}));
  add_output(m, "z");
  return m;
}
}  // namespace

TEST_CASE("run_onnx_passes in eval mode removes dead code, folds constants and fuses Conv+BN") {
  OnnxModel m = passes_model();
  const PassStats stats = run_onnx_passes(m, passes_options());
  CHECK(stats.folded_nodes == 1);
  CHECK(stats.fused_conv_bn == 1);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Conv", "Add"});
  CHECK(initializer_names(m) == std::vector<std::string>{"s", "conv.weight", "conv.bias"});
  CHECK(values(initializer(m, "s")) == std::vector<double>{3.0});
}

TEST_CASE("run_onnx_passes does not fold with do_constant_folding=false") {
  OnnxModel m = passes_model();
  ExportOptions o = passes_options();
  o.do_constant_folding = false;
  const PassStats stats = run_onnx_passes(m, o);
  CHECK(stats.folded_nodes == 0);
  CHECK(stats.fused_conv_bn == 1);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Conv", "Add", "Add"});
  CHECK(find_initializer(m, "a") != nullptr);
  CHECK(find_initializer(m, "s") == nullptr);
}

TEST_CASE("run_onnx_passes does not fuse in training mode or without exported parameters") {
  for (TrainingMode mode : {TrainingMode::Train, TrainingMode::Preserve}) {
    CAPTURE(training_mode_name(mode));
    OnnxModel m = passes_model();
    ExportOptions o = passes_options();
    o.training = mode;
    const PassStats stats = run_onnx_passes(m, o);
    CHECK(stats.fused_conv_bn == 0);
    CHECK(stats.folded_nodes == 1);
    CHECK(op_types(m.nodes) == std::vector<std::string>{"Conv", "BatchNormalization", "Add"});
  }
  OnnxModel m = passes_model();
  ExportOptions o = passes_options();
  o.export_params = false;  // parameters are graph inputs: neither folded nor fused
  const PassStats stats = run_onnx_passes(m, o);
  CHECK(stats.fused_conv_bn == 0);
  CHECK(stats.folded_nodes == 0);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Conv", "BatchNormalization", "Add", "Add"});
}

// ---- remove_noops -----------------------------------------------------------------------------

TEST_CASE("no-op removal drops nodes that give their input back and rewires their readers") {
  OnnxModel m;
  add_input(m, "x", float_type({2, 3}));
  m.nodes.push_back(onnx_node("Identity", {"x"}, {"i"}));
  m.nodes.push_back(onnx_node("Cast", {"i"}, {"c"}, {attr_i("to", 1)}));  // float -> float
  m.nodes.push_back(onnx_node("Transpose", {"c"}, {"t"}, {attr_ints("perm", {0, 1})}));
  m.nodes.push_back(onnx_node("Reshape", {"t", "shape"}, {"r"}));
  m.value_types["r"] = to_type_proto(float_type({2, 3}));
  m.initializers.push_back({"shape", Tensor::ints({2, 3})});
  m.nodes.push_back(onnx_node("Dropout", {"r"}, {"d"}));
  m.nodes.push_back(onnx_node("Relu", {"d"}, {"y"}));
  add_output(m, "y");

  const auto removed = remove_noops(m, 17, /*inference=*/true);
  CHECK(removed ==
        std::map<std::string, size_t>{{"Cast", 1}, {"Dropout", 1}, {"Identity", 1}, {"Reshape", 1}, {"Transpose", 1}});
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Relu"});
  CHECK(inputs_of(m.nodes[0].proto) == std::vector<std::string>{"x"});
}

TEST_CASE("no-op removal keeps nodes that change their input, read masks, training dropout and graph outputs") {
  OnnxModel m;
  add_input(m, "x", float_type({2, 3}));
  m.nodes.push_back(onnx_node("Cast", {"x"}, {"c"}, {attr_i("to", 7)}));                 // float -> int64
  m.nodes.push_back(onnx_node("Transpose", {"x"}, {"t"}, {attr_ints("perm", {1, 0})}));  // a real permutation
  m.nodes.push_back(onnx_node("Transpose", {"x"}, {"rev"}));                             // no perm: reversed
  m.nodes.push_back(onnx_node("Reshape", {"x", "shape"}, {"r"}));
  m.value_types["r"] = to_type_proto(float_type({3, 2}));
  m.initializers.push_back({"shape", Tensor::ints({3, 2})});
  m.nodes.push_back(onnx_node("Dropout", {"x"}, {"d", "mask"}));  // its mask is read below
  m.nodes.push_back(onnx_node("Not", {"mask"}, {"nm"}));
  m.nodes.push_back(onnx_node("Identity", {"x"}, {"out"}));  // makes a graph output
  for (const char* name : {"c", "t", "rev", "r", "d"})
    m.nodes.push_back(onnx_node("Neg", {name}, {name + std::string("_n")}));
  for (const char* out : {"c_n", "t_n", "rev_n", "r_n", "d_n", "nm", "out"}) add_output(m, out);

  CHECK(remove_noops(m, 17, true).empty());
  CHECK(m.nodes.size() == 12);
  SUBCASE("Dropout in training mode stays even with its mask unread") {
    OnnxModel t;
    add_input(t, "x", float_type({2}));
    t.nodes.push_back(onnx_node("Dropout", {"x"}, {"d"}));
    t.nodes.push_back(onnx_node("Relu", {"d"}, {"y"}));
    add_output(t, "y");
    CHECK(remove_noops(t, 17, /*inference=*/false).empty());
    CHECK(t.nodes.size() == 2);
  }
}

// ---- eliminate_common_subexpressions ----------------------------------------------------------

TEST_CASE("common-subexpression elimination merges repeated nodes and what repeats because of them") {
  OnnxModel m;
  add_input(m, "x", float_type({4}));
  m.nodes.push_back(constant_node("k1", Tensor::floats({2.0f})));
  m.nodes.push_back(constant_node("k2", Tensor::floats({2.0f})));  // the same constant
  m.nodes.push_back(onnx_node("Mul", {"x", "k1"}, {"m1"}));
  m.nodes.push_back(onnx_node("Mul", {"x", "k2"}, {"m2"}));  // repeats once k2 is k1
  m.nodes.push_back(onnx_node("LeakyRelu", {"m1"}, {"l1"}, {attr_f("alpha", 0.1f)}));
  m.nodes.push_back(onnx_node("LeakyRelu", {"m2"}, {"l2"}, {attr_f("alpha", 0.2f)}));  // other alpha
  m.nodes.push_back(onnx_node("RandomNormalLike", {"x"}, {"n1"}));
  m.nodes.push_back(onnx_node("RandomNormalLike", {"x"}, {"n2"}));  // random: never merged
  OnnxNode custom = onnx_node("Scale", {"x"}, {"s1"});
  custom.proto.set_domain("com.vendor");
  m.nodes.push_back(custom);
  custom.proto.set_output(0, "s2");
  m.nodes.push_back(custom);  // a custom-domain op: never merged
  m.nodes.push_back(onnx_node("Sum", {"m1", "m2", "l1", "l2", "n1", "n2", "s1", "s2"}, {"y"}));
  add_output(m, "y");

  CHECK(eliminate_common_subexpressions(m) == 2);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Constant", "Mul", "LeakyRelu", "LeakyRelu", "RandomNormalLike",
                                                      "RandomNormalLike", "Scale", "Scale", "Sum"});
  CHECK(inputs_of(m.nodes.back().proto) == std::vector<std::string>{"m1", "m1", "l1", "l2", "n1", "n2", "s1", "s2"});
}

TEST_CASE("a repeated node whose output is a graph output stays") {
  OnnxModel m;
  add_input(m, "x", float_type({4}));
  m.nodes.push_back(onnx_node("Relu", {"x"}, {"a"}));
  m.nodes.push_back(onnx_node("Relu", {"x"}, {"b"}));
  add_output(m, "a");
  add_output(m, "b");
  CHECK(eliminate_common_subexpressions(m) == 0);
  CHECK(m.nodes.size() == 2);
}

// ---- deduplicate_initializers -----------------------------------------------------------------

TEST_CASE("initializer deduplication keeps one of equal tensors (tied weights) and rewires readers") {
  OnnxModel m;
  add_input(m, "x", float_type({2}));
  const Tensor tied = Tensor::floats({1.0f, 2.0f});
  m.initializers.push_back({"embed.weight", tied});
  m.initializers.push_back({"head.weight", tied});                        // the same memory
  m.initializers.push_back({"copy", Tensor::floats({1.0f, 2.0f})});       // equal bytes, own memory
  m.initializers.push_back({"other", Tensor::floats({1.0f, 3.0f})});      // same shape, other bytes
  m.initializers.push_back({"as_int", Tensor::ints({1, 2})});             // other dtype
  m.initializers.push_back({"out_const", Tensor::floats({1.0f, 2.0f})});  // a graph output
  m.nodes.push_back(onnx_node("Sum", {"x", "embed.weight", "head.weight", "copy", "other"}, {"y"}));
  m.nodes.push_back(onnx_node("Cast", {"as_int"}, {"z"}, {attr_i("to", 1)}));
  add_output(m, "y");
  add_output(m, "z");
  add_output(m, "out_const");

  CHECK(deduplicate_initializers(m) == 2);
  CHECK(initializer_names(m) == std::vector<std::string>{"embed.weight", "other", "as_int", "out_const"});
  CHECK(inputs_of(m.nodes[0].proto) ==
        std::vector<std::string>{"x", "embed.weight", "embed.weight", "embed.weight", "other"});
}

TEST_CASE("run_onnx_passes at optimize 1 removes no-ops and repeats; at 0 it leaves them") {
  auto model = [] {
    OnnxModel m;
    add_input(m, "x", float_type({2}));
    m.initializers.push_back({"w1", Tensor::floats({1.0f, 2.0f})});
    m.initializers.push_back({"w2", Tensor::floats({1.0f, 2.0f})});
    m.nodes.push_back(onnx_node("Identity", {"x"}, {"i"}));
    m.nodes.push_back(onnx_node("Add", {"i", "w1"}, {"a1"}));
    m.nodes.push_back(onnx_node("Add", {"i", "w2"}, {"a2"}));
    m.nodes.push_back(onnx_node("Mul", {"a1", "a2"}, {"y"}));
    add_output(m, "y");
    return m;
  };
  ExportOptions o = passes_options();
  OnnxModel plain = model();
  o.optimize = 0;
  run_onnx_passes(plain, o);
  CHECK(op_types(plain.nodes) == std::vector<std::string>{"Identity", "Add", "Add", "Mul"});

  OnnxModel optimized = model();
  o.optimize = 1;
  const PassStats stats = run_onnx_passes(optimized, o);
  CHECK(op_types(optimized.nodes) == std::vector<std::string>{"Add", "Mul"});
  CHECK(initializer_names(optimized) == std::vector<std::string>{"w1"});
  // w2 became w1, so the second Add repeated the first.
  CHECK(inputs_of(optimized.nodes[1].proto) == std::vector<std::string>{"a1", "a1"});
  CHECK(stats.summary() ==
        std::vector<std::string>{"no-op removal: Identity x1",
                                 "common-subexpression elimination: 1 node merged into earlier ones",
                                 "initializer deduplication: 1 initializers equal to another removed"});
}

// ---- fuse_bias_adds (--optimize 2) ------------------------------------------------------------

namespace {

// x[1,3,4,4] -> Conv(conv.weight[2,3,1,1][, conv.bias]) -> c -> `op`(c, k) -> y (graph output).
OnnxModel conv_then(const std::string& op, const Tensor& k, bool with_bias) {
  OnnxModel m;
  add_input(m, "x", float_type({1, 3, 4, 4}));
  std::vector<std::string> conv_inputs{"x", "conv.weight"};
  if (with_bias) conv_inputs.push_back("conv.bias");
  m.nodes.push_back(onnx_node("Conv", conv_inputs, {"c"}, {attr_ints("kernel_shape", {1, 1})}));
  m.nodes.push_back(onnx_node(op, {"c", "k"}, {"y"}));
  add_output(m, "y");
  m.initializers.push_back({"conv.weight", float_tensor({2, 3, 1, 1}, {0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f})});
  if (with_bias) m.initializers.push_back({"conv.bias", float_tensor({2}, {0.1f, -0.2f})});
  m.initializers.push_back({"k", k});
  return m;
}

at::Tensor conv_of(const OnnxModel& m, const at::Tensor& x) {
  const auto& conv = m.nodes.at(0).proto;
  REQUIRE(conv.op_type() == "Conv");
  at::Tensor bias = conv.input_size() > 2 ? to_aten(initializer(m, conv.input(2))) : at::Tensor();
  return at::conv2d(x, to_aten(initializer(m, conv.input(1))), bias);
}

}  // namespace

TEST_CASE("a per-channel constant added after a bias-less Conv becomes its bias, named after its weight") {
  OnnxModel m = conv_then("Add", float_tensor({1, 2, 1, 1}, {3.0f, -4.0f}), /*with_bias=*/false);
  at::Tensor x = at::linspace(-2.0, 2.0, 48).reshape({1, 3, 4, 4});
  at::Tensor expected = conv_of(m, x) + to_aten(initializer(m, "k"));
  REQUIRE(fuse_bias_adds(m, 17) == 1);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Conv"});
  CHECK(inputs_of(m.nodes[0].proto) == std::vector<std::string>{"x", "conv.weight", "conv.bias"});
  CHECK(outputs_of(m.nodes[0].proto) == std::vector<std::string>{"y"});
  CHECK(values(initializer(m, "conv.bias")) == std::vector<double>{3.0, -4.0});
  CHECK(at::allclose(conv_of(m, x), expected));
  eliminate_dead_code(m);
  CHECK(initializer_names(m) == std::vector<std::string>{"conv.weight", "conv.bias"});
}

TEST_CASE("a constant subtracted after a Conv with bias updates that bias under its own name") {
  OnnxModel m = conv_then("Sub", float_tensor({2, 1, 1}, {1.0f, 0.5f}), /*with_bias=*/true);
  at::Tensor x = at::linspace(-2.0, 2.0, 48).reshape({1, 3, 4, 4});
  at::Tensor expected = conv_of(m, x) - to_aten(initializer(m, "k"));
  REQUIRE(fuse_bias_adds(m, 17) == 1);
  const auto bias = values(initializer(m, "conv.bias"));
  REQUIRE(bias.size() == 2);
  CHECK(bias[0] == doctest::Approx(0.1 - 1.0));
  CHECK(bias[1] == doctest::Approx(-0.2 - 0.5));
  CHECK(at::allclose(conv_of(m, x), expected));
  const auto* b = find_initializer(m, "conv.bias");
  CHECK(b->doc.find("minus k plus conv.bias") != std::string::npos);
}

TEST_CASE("a scalar added after a Conv, on either side of the Add, becomes a bias") {
  OnnxModel m = conv_then("Add", Tensor::floats({2.5f}), /*with_bias=*/false);
  m.nodes[1].proto.set_input(0, "k");
  m.nodes[1].proto.set_input(1, "c");
  REQUIRE(fuse_bias_adds(m, 17) == 1);
  CHECK(values(initializer(m, "conv.bias")) == std::vector<double>{2.5, 2.5});
}

TEST_CASE("bias fusion leaves constants that vary along other dims, a k - Conv, a read Conv output and other dtypes") {
  SUBCASE("varies along the width") {
    OnnxModel m = conv_then("Add", float_tensor({4}, {1, 2, 3, 4}), false);
    CHECK(fuse_bias_adds(m, 17) == 0);
  }
  SUBCASE("a [2] constant lines up with the width, not the channels") {
    OnnxModel m = conv_then("Add", float_tensor({2}, {1, 2}), false);
    CHECK(fuse_bias_adds(m, 17) == 0);
  }
  SUBCASE("broadcasts the output to a larger shape") {
    OnnxModel m = conv_then("Add", float_tensor({3, 1, 1, 1}, {1, 2, 3}), false);
    CHECK(fuse_bias_adds(m, 17) == 0);
  }
  SUBCASE("k - conv") {
    OnnxModel m = conv_then("Sub", Tensor::floats({1.0f}), false);
    m.nodes[1].proto.set_input(0, "k");
    m.nodes[1].proto.set_input(1, "c");
    CHECK(fuse_bias_adds(m, 17) == 0);
  }
  SUBCASE("the conv output has another reader") {
    OnnxModel m = conv_then("Add", Tensor::floats({1.0f}), false);
    m.nodes.push_back(onnx_node("Relu", {"c"}, {"r"}));
    add_output(m, "r");
    CHECK(fuse_bias_adds(m, 17) == 0);
  }
  SUBCASE("an integer constant") {
    OnnxModel m = conv_then("Add", int64_tensor({1}, {1}), false);
    CHECK(fuse_bias_adds(m, 17) == 0);
  }
  SUBCASE("the constant is a graph input, not an initializer") {
    OnnxModel m = conv_then("Add", Tensor::floats({1.0f}), false);
    m.initializers.pop_back();
    add_input(m, "k", float_type({1}));
    CHECK(fuse_bias_adds(m, 17) == 0);
  }
}

TEST_CASE("Conv, Add, Add: both constants end in the bias") {
  OnnxModel m = conv_then("Add", Tensor::floats({1.0f}), false);
  m.nodes[1].proto.set_output(0, "y0");
  m.nodes.push_back(onnx_node("Add", {"y0", "k2"}, {"y"}));
  m.initializers.push_back({"k2", float_tensor({2, 1, 1}, {10.0f, 20.0f})});
  CHECK(fuse_bias_adds(m, 17) == 2);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Conv"});
  CHECK(values(initializer(m, m.nodes[0].proto.input(2))) == std::vector<double>{11.0, 21.0});
}

TEST_CASE("a ConvTranspose's channels are its weight's dim 1 times the groups") {
  OnnxModel m;
  add_input(m, "x", float_type({1, 4, 3, 3}));
  m.nodes.push_back(onnx_node("ConvTranspose", {"x", "up.weight"}, {"c"}, {attr_i("group", 2)}));
  m.nodes.push_back(onnx_node("Add", {"c", "k"}, {"y"}));
  add_output(m, "y");
  m.initializers.push_back({"up.weight", float_tensor({4, 3, 1, 1}, std::vector<float>(12, 1.0f))});
  m.initializers.push_back({"k", float_tensor({6, 1, 1}, {1, 2, 3, 4, 5, 6})});
  REQUIRE(fuse_bias_adds(m, 17) == 1);
  CHECK(values(initializer(m, "up.bias")) == std::vector<double>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("MatMul of 2-d values + a constant becomes Gemm with that constant as C; a 3-d MatMul stays") {
  auto model = [](std::vector<int64_t> a_dims) {
    OnnxModel m;
    add_input(m, "a", float_type(a_dims));
    m.nodes.push_back(onnx_node("MatMul", {"a", "w"}, {"p"}));
    m.nodes.push_back(onnx_node("Add", {"p", "b"}, {"y"}));
    add_output(m, "y");
    m.initializers.push_back({"w", float_tensor({2, 3}, {1, 2, 3, 4, 5, 6})});
    m.initializers.push_back({"b", float_tensor({3}, {0.5f, -1.0f, 2.0f})});
    return m;
  };
  OnnxModel m = model({4, 2});
  REQUIRE(fuse_bias_adds(m, 13) == 1);
  CHECK(op_types(m.nodes) == std::vector<std::string>{"Gemm"});
  CHECK(inputs_of(m.nodes[0].proto) == std::vector<std::string>{"a", "w", "b"});
  CHECK(outputs_of(m.nodes[0].proto) == std::vector<std::string>{"y"});

  OnnxModel three_d = model({5, 4, 2});
  CHECK(fuse_bias_adds(three_d, 13) == 0);
  CHECK(op_types(three_d.nodes) == std::vector<std::string>{"MatMul", "Add"});
}

TEST_CASE("Gemm with C and beta, minus a constant: C becomes beta*C - k and beta 1") {
  OnnxModel m;
  add_input(m, "a", float_type({2, 2}));
  m.nodes.push_back(onnx_node("Gemm", {"a", "w", "c0"}, {"g"}, {attr_f("beta", 0.5f), attr_i("transB", 1)}));
  m.nodes.push_back(onnx_node("Sub", {"g", "k"}, {"y"}));
  add_output(m, "y");
  m.value_types["g"] = to_type_proto(float_type({2, 3}));
  m.initializers.push_back({"w", float_tensor({3, 2}, {1, 2, 3, 4, 5, 6})});
  m.initializers.push_back({"c0", float_tensor({3}, {2.0f, 4.0f, 6.0f})});
  m.initializers.push_back({"k", float_tensor({2, 1}, {1.0f, 10.0f})});
  at::Tensor a = at::tensor({1.0f, -1.0f, 0.5f, 2.0f}).reshape({2, 2});
  auto w = to_aten(initializer(m, "w")), c0 = to_aten(initializer(m, "c0")), k = to_aten(initializer(m, "k"));
  at::Tensor expected = at::matmul(a, w.t()) + 0.5 * c0 - k;

  REQUIRE(fuse_bias_adds(m, 17) == 1);
  const auto& gemm = m.nodes.at(0).proto;
  CHECK(attr(gemm, "beta").f() == 1.0f);
  at::Tensor c = to_aten(initializer(m, gemm.input(2)));
  CHECK(c.sizes() == at::IntArrayRef({2, 3}));
  CHECK(at::allclose(at::matmul(a, w.t()) + c, expected));
}

TEST_CASE("run_onnx_passes fuses bias adds at optimize 2 only, and not when initializers are graph inputs") {
  ExportOptions o = passes_options();
  OnnxModel level1 = conv_then("Add", Tensor::floats({1.0f}), false);
  run_onnx_passes(level1, o);
  CHECK(op_types(level1.nodes) == std::vector<std::string>{"Conv", "Add"});

  o.optimize = 2;
  OnnxModel level2 = conv_then("Add", Tensor::floats({1.0f}), false);
  const PassStats stats = run_onnx_passes(level2, o);
  CHECK(op_types(level2.nodes) == std::vector<std::string>{"Conv"});
  CHECK(initializer_names(level2) == std::vector<std::string>{"conv.weight", "conv.bias"});
  CHECK(stats.summary().at(0) == "bias fusion: 1 Add/Sub of a constant joined the Conv, Gemm or MatMul before it");

  o.keep_initializers_as_inputs = true;
  OnnxModel as_inputs = conv_then("Add", Tensor::floats({1.0f}), false);
  run_onnx_passes(as_inputs, o);
  CHECK(op_types(as_inputs.nodes) == std::vector<std::string>{"Conv", "Add"});
}
