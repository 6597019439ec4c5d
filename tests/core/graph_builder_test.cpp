// GraphBuilder (the host's Graph): what g.op puts into the OnnxModel — op types, node and value
// names, attributes from torch.onnx suffixes, custom domains and opset imports, strict schema
// checks, per-node type inference, eager folding of small constants, output naming and
// sub-graphs.
#include "doctest_torch.h"  // before any libtorch header

#include <set>

#include "3_export/3_convert/graph_builder.h"
#include "2_eval/fold_kernels.h"
#include "onnxport/errors.h"
#include "support.h"

using namespace onnxport;
using namespace onnxport::core;
using namespace onnxport::core_test;

namespace {

BuilderOptions options_at(int opset, bool with_evaluator = false) {
  BuilderOptions o;
  o.opset = opset;
  if (with_evaluator) o.evaluate = evaluate_constant_node;
  return o;
}

// what() of the onnxport::Error that f() throws ("" if it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<int64_t> static_dims(const Value* v) {
  auto s = v->type().static_shape();
  return s ? *s : std::vector<int64_t>{-99};
}

const OnnxNode& only_node_of_type(const OnnxModel& m, const std::string& op) {
  const OnnxNode* found = nullptr;
  for (const auto& n : m.nodes)
    if (n.proto.op_type() == op) {
      REQUIRE_MESSAGE(found == nullptr, "more than one " << op << " node");
      found = &n;
    }
  REQUIRE_MESSAGE(found != nullptr, "no " << op << " node");
  return *found;
}

std::vector<float> floats_of(const onnx::AttributeProto& a) { return {a.floats().begin(), a.floats().end()}; }
std::vector<int64_t> ints_of(const onnx::AttributeProto& a) { return {a.ints().begin(), a.ints().end()}; }

}  // namespace

// ---- nodes, names, attributes, domains ------------------------------------------------------

TEST_CASE("g.op appends a node with its op type, a unique name per op type and outputs named after the node") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17));
  Value* x = g.add_input("x", float_type({2, 3}));
  Value* a = g.op("Relu", {x});
  Value* b = g.op("Relu", {a});
  Value* c = g.op("Neg", {b});

  CHECK(op_types(model.nodes) == std::vector<std::string>{"Relu", "Relu", "Neg"});
  CHECK(model.nodes[0].proto.name() == "/Relu");
  CHECK(model.nodes[1].proto.name() == "/Relu_1");
  CHECK(model.nodes[2].proto.name() == "/Neg");
  CHECK(model.nodes[0].proto.domain().empty());
  CHECK(inputs_of(model.nodes[0].proto) == std::vector<std::string>{"x"});
  CHECK(inputs_of(model.nodes[1].proto) == std::vector<std::string>{"/Relu_output_0"});
  CHECK(outputs_of(model.nodes[2].proto) == std::vector<std::string>{"/Neg_output_0"});
  CHECK(a->name() == "/Relu_output_0");
  CHECK(b->name() == "/Relu_1_output_0");
  CHECK(c->name() == "/Neg_output_0");
  CHECK(model.opset_imports == std::map<std::string, int>{{"", 17}});
  REQUIRE(model.inputs.size() == 1);
  CHECK(model.inputs[0].name == "x");
  CHECK(model.inputs[0].type.str() == "float32[2,3]");
}

TEST_CASE("nodes are named under the module path of their origin and carry that origin") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17));
  Value* x = g.add_input("x", float_type({2, 3}));
  g.set_origin(NodeOrigin{"nn", "/packs/libnn.so", "aten::relu", "features.0", "model.py:12"});
  Value* y = g.op("Relu", {x});
  g.op("Relu", {y});

  REQUIRE(model.nodes.size() == 2);
  CHECK(model.nodes[0].proto.name() == "/features/features.0/Relu");
  CHECK(model.nodes[1].proto.name() == "/features/features.0/Relu_1");
  CHECK(y->name() == "/features/features.0/Relu_output_0");
  CHECK(model.nodes[1].origin.pack == "nn");
  CHECK(model.nodes[1].origin.torch_op == "aten::relu");
  CHECK(model.nodes[1].origin.module_path == "features.0");
  CHECK(model.nodes[1].origin.source == "model.py:12");
}

TEST_CASE("attribute suffixes _i, _f and _t on standard ops become typed ONNX attributes without the suffix") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17));
  Value* x = g.add_input("x", float_type({2, 3}));

  Value* t = g.op("Transpose", {x}, {{"perm_i", {1, 0}}});
  g.op("Flatten", {x}, {{"axis_i", 1}});
  g.op("LeakyRelu", {x}, {{"alpha_f", 0.25}});
  g.op("Elu", {x}, {{"alpha_f", 2}});  // an int under _f widens to a float
  Value* k = g.op("Constant", {}, {{"value_t", Tensor::ints({4, 5})}});

  const auto& perm = attr(only_node_of_type(model, "Transpose").proto, "perm");
  CHECK(perm.type() == onnx::AttributeProto::INTS);
  CHECK(ints_of(perm) == std::vector<int64_t>{1, 0});
  CHECK(static_dims(t) == std::vector<int64_t>{3, 2});

  const auto& axis = attr(only_node_of_type(model, "Flatten").proto, "axis");
  CHECK(axis.type() == onnx::AttributeProto::INT);
  CHECK(axis.i() == 1);

  const auto& alpha = attr(only_node_of_type(model, "LeakyRelu").proto, "alpha");
  CHECK(alpha.type() == onnx::AttributeProto::FLOAT);
  CHECK(alpha.f() == doctest::Approx(0.25));
  const auto& elu_alpha = attr(only_node_of_type(model, "Elu").proto, "alpha");
  CHECK(elu_alpha.type() == onnx::AttributeProto::FLOAT);
  CHECK(elu_alpha.f() == doctest::Approx(2.0));

  const auto& value = attr(only_node_of_type(model, "Constant").proto, "value");
  CHECK(value.type() == onnx::AttributeProto::TENSOR);
  CHECK(from_tensor_proto(value.t()).as_int64s() == std::vector<int64_t>{4, 5});
  CHECK(k->type().str() == "int64[2]");
  CHECK(find_attr(only_node_of_type(model, "Transpose").proto, "perm_i") == nullptr);
}

TEST_CASE("a custom-domain op gets its domain, list attributes of every kind and the domain's opset import") {
  OnnxModel model;
  BuilderOptions o = options_at(17);
  o.custom_domains = {{"com.vendor", 3}};
  GraphBuilder g(model, o);
  Value* x = g.add_input("x", float_type({2, 3}));
  std::vector<Value*> outs = g.op("com.vendor::Fancy", {x},
                                  {{"count_i", 4},
                                   {"sizes_i", {1, 2, 3}},
                                   {"scale_f", 0.5},
                                   {"scales_f", {0.5, 1.5}},
                                   {"mode_s", "fast"},
                                   {"names_s", std::vector<std::string>{"a", "b"}},
                                   {"table_t", Tensor::floats({1.5f, 2.5f})},
                                   {"tables_t", std::vector<Tensor>{Tensor::ints({7}), Tensor::ints({8, 9})}}},
                                  2);

  REQUIRE(model.nodes.size() == 1);
  const auto& n = model.nodes[0].proto;
  CHECK(n.domain() == "com.vendor");
  CHECK(n.op_type() == "Fancy");
  CHECK(n.name() == "/Fancy");
  CHECK(outputs_of(n) == std::vector<std::string>{"/Fancy_output_0", "/Fancy_output_1"});
  REQUIRE(outs.size() == 2);
  CHECK(outs[1]->name() == "/Fancy_output_1");
  CHECK(model.opset_imports == std::map<std::string, int>{{"", 17}, {"com.vendor", 3}});

  CHECK(attr(n, "count").type() == onnx::AttributeProto::INT);
  CHECK(attr(n, "count").i() == 4);
  CHECK(attr(n, "sizes").type() == onnx::AttributeProto::INTS);
  CHECK(ints_of(attr(n, "sizes")) == std::vector<int64_t>{1, 2, 3});
  CHECK(attr(n, "scale").type() == onnx::AttributeProto::FLOAT);
  CHECK(attr(n, "scale").f() == doctest::Approx(0.5));
  CHECK(attr(n, "scales").type() == onnx::AttributeProto::FLOATS);
  CHECK(floats_of(attr(n, "scales")) == std::vector<float>{0.5f, 1.5f});
  CHECK(attr(n, "mode").type() == onnx::AttributeProto::STRING);
  CHECK(attr(n, "mode").s() == "fast");
  CHECK(attr(n, "names").type() == onnx::AttributeProto::STRINGS);
  CHECK(std::vector<std::string>(attr(n, "names").strings().begin(), attr(n, "names").strings().end()) ==
        std::vector<std::string>{"a", "b"});
  CHECK(attr(n, "table").type() == onnx::AttributeProto::TENSOR);
  CHECK(from_tensor_proto(attr(n, "table").t()).as_doubles() == std::vector<double>{1.5, 2.5});
  CHECK(attr(n, "tables").type() == onnx::AttributeProto::TENSORS);
  REQUIRE(attr(n, "tables").tensors_size() == 2);
  CHECK(from_tensor_proto(attr(n, "tables").tensors(1)).as_int64s() == std::vector<int64_t>{8, 9});
}

TEST_CASE("a custom domain no op pack declared is refused, naming the domain") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17));
  Value* x = g.add_input("x", float_type({2}));
  const std::string msg = error_of([&] { g.op("com.unknown::Op", {x}); });
  CHECK(contains(msg, "com.unknown"));
  CHECK(contains(msg, "no op pack declared"));
  CHECK(model.nodes.empty());
  CHECK(model.opset_imports.count("com.unknown") == 0);
}

TEST_CASE("an attribute whose suffix does not fit its value is an AttributeError naming the attribute") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17));
  Value* x = g.add_input("x", float_type({2}));
  g.set_origin(NodeOrigin{"nn", "", "aten::leaky_relu", "act", ""});
  std::string msg;
  try {
    g.op("LeakyRelu", {x}, {{"alpha_i", 0.5}});
  } catch (const AttributeError& e) {
    msg = e.what();
    CHECK(e.context().torch_op == "aten::leaky_relu");
  }
  CHECK(contains(msg, "alpha_i"));
  CHECK(model.nodes.empty());
}

// ---- strict mode ----------------------------------------------------------------------------

TEST_CASE("in strict mode an attribute the ONNX schema does not have is a SchemaError naming the op and attribute") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17));
  Value* x = g.add_input("x", float_type({2, 3}));
  g.set_origin(NodeOrigin{"elementwise", "", "aten::relu", "block.act", ""});
  std::string msg, torch_op;
  try {
    g.op("Relu", {x}, {{"alpha_f", 0.5}});
  } catch (const SchemaError& e) {
    msg = e.what();
    torch_op = e.context().torch_op;
  }
  CHECK(contains(msg, "g.op(\"Relu\") violates the ONNX schema at opset 17"));
  CHECK(contains(msg, "alpha"));
  CHECK(torch_op == "aten::relu");
  CHECK(model.nodes.empty());
}

TEST_CASE("without strict mode the same node is accepted as written") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17));
  g.set_strict(false);
  Value* x = g.add_input("x", float_type({2, 3}));
  g.op("Relu", {x}, {{"alpha_f", 0.5}});
  REQUIRE(model.nodes.size() == 1);
  CHECK(attr(model.nodes[0].proto, "alpha").f() == doctest::Approx(0.5));
}

TEST_CASE("an op ONNX has only from a later opset is refused, naming it; one no opset defines is written") {
  OnnxModel model;
  GraphBuilder g(model, options_at(13));
  g.set_strict(false);  // checked even then
  Value* x = g.add_input("x", float_type({1, 1, 2, 2}));
  Value* grid = g.add_input("grid", float_type({1, 2, 2, 2}));
  const std::string too_new = error_of([&] { g.op("GridSample", {x, grid}); });
  CHECK(contains(too_new, "ONNX has no operator 'GridSample' at opset 13"));
  CHECK(contains(too_new, "export with --opset 16 or later"));
  CHECK(model.nodes.empty());
  // As torch.onnx writes a quantization toolkit's FixedPerTensorAffine: convert warns of it, the
  // checker passes over it.
  g.op("FixedPerTensorAffine", {x});
  REQUIRE(model.nodes.size() == 1);
  CHECK(model.nodes[0].proto.op_type() == "FixedPerTensorAffine");
  CHECK(model.nodes[0].proto.domain().empty());
  CHECK_FALSE(onnx_defines("FixedPerTensorAffine"));
  CHECK(onnx_defines("GridSample"));
}

TEST_CASE("in strict mode inputs whose shapes do not fit are refused by ONNX shape inference") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17));
  Value* a = g.add_input("a", float_type({2, 3}));
  Value* b = g.add_input("b", float_type({4, 5}));
  const std::string msg = error_of([&] { g.op("MatMul", {a, b}); });
  CHECK(contains(msg, "ONNX shape inference rejects MatMul"));
}

// ---- type inference ---------------------------------------------------------------------------

TEST_CASE("per-node inference types MatMul [2,3] x [3,4] as float32 [2,4] on the value and in value_types") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17));
  Value* a = g.add_input("a", float_type({2, 3}));
  Value* b = g.add_input("b", float_type({3, 4}));
  Value* y = g.op("MatMul", {a, b});
  CHECK(y->dtype() == DType::Float);
  CHECK(static_dims(y) == std::vector<int64_t>{2, 4});
  REQUIRE(model.value_types.count(y->name()) == 1);
  CHECK(model.value_types.at(y->name()).tensor_type().elem_type() == onnx::TensorProto::FLOAT);
  CHECK(dims_of(model.value_types.at(y->name())) == std::vector<int64_t>{2, 4});
}

TEST_CASE("inference keeps symbolic dims and reads the data of constants (Reshape target, Cast dtype)") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17));
  Value* x = g.add_input("x", TensorType{DType::Float, std::vector<Dim>{Dim::named("batch"), Dim::fixed(3)}});
  Value* w = g.add_input("w", float_type({3, 4}));
  Value* y = g.op("MatMul", {x, w});
  REQUIRE(y->type().shape.has_value());
  CHECK(y->type().str() == "float32[batch,4]");

  Value* z = g.add_input("z", float_type({2, 3}));
  Value* r = g.op("Reshape", {z, g.constant_ints({3, 2})});
  CHECK(static_dims(r) == std::vector<int64_t>{3, 2});
  Value* c = g.op("Cast", {z}, {{"to_i", static_cast<int>(DType::Int64)}});
  CHECK(c->type().str() == "int64[2,3]");
}

// ---- constants and eager folding ---------------------------------------------------------------

TEST_CASE("a small constant becomes a Constant node, a large one or a parameter becomes an initializer") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17));
  Value* small = g.constant_ints({1, 2, 3});
  Value* large = g.constant(Tensor::floats(std::vector<float>(65, 1.0f)));
  Value* param = g.add_parameter("fc.weight", Tensor::floats({1.0f, 2.0f}));
  Value* x = g.add_input("x", float_type({2}));
  g.op("Add", {x, param});

  REQUIRE(model.nodes.size() == 2);
  CHECK(model.nodes[0].proto.op_type() == "Constant");
  CHECK(small->name() == "/Constant_output_0");
  CHECK(from_tensor_proto(attr(model.nodes[0].proto, "value").t()).as_int64s() == std::vector<int64_t>{1, 2, 3});
  CHECK(large->name() == "const_0");
  CHECK(initializer_names(model) == std::vector<std::string>{"const_0", "fc.weight"});
  CHECK(initializer(model, "fc.weight").as_doubles() == std::vector<double>{1.0, 2.0});
  CHECK(inputs_of(model.nodes[1].proto) == std::vector<std::string>{"x", "fc.weight"});
}

TEST_CASE("with BuilderOptions::evaluate an Add of two small constants is computed, not added to the graph") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17, /*with_evaluator=*/true));
  Value* two = g.add_torch_constant(int64_t{2}, {});
  Value* three = g.add_torch_constant(int64_t{3}, {});
  Value* sum = g.op("Add", {two, three});

  CHECK(model.nodes.empty());
  CHECK(model.initializers.empty());
  REQUIRE(sum->is_constant());
  CHECK(sum->maybe_int() == 5);
  CHECK(sum->dtype() == DType::Int64);

  // Used by a node that cannot fold, the computed value becomes one Constant holding 5.
  Value* n = g.add_input("n", scalar_type(DType::Int64));
  g.op("Add", {n, sum});
  CHECK(op_types(model.nodes) == std::vector<std::string>{"Constant", "Add"});
  CHECK(from_tensor_proto(attr(model.nodes[0].proto, "value").t()).as_int64s() == std::vector<int64_t>{5});
  CHECK(inputs_of(model.nodes[1].proto) == std::vector<std::string>{"n", sum->name()});
}

TEST_CASE("without BuilderOptions::evaluate an Add of two constants stays a node") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17, /*with_evaluator=*/false));
  Value* two = g.add_torch_constant(int64_t{2}, {});
  Value* three = g.add_torch_constant(int64_t{3}, {});
  Value* sum = g.op("Add", {two, three});
  CHECK(op_types(model.nodes) == std::vector<std::string>{"Constant", "Constant", "Add"});
  CHECK_FALSE(sum->is_constant());
  CHECK(sum->name() == "/Add_output_0");
  CHECK(sum->type().str() == "int64[]");
}

TEST_CASE("eager folding leaves parameters and constants over 64 elements to the graph") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17, /*with_evaluator=*/true));
  Value* w = g.add_parameter("w", Tensor::floats({1.0f, 2.0f}));
  Value* one = g.add_torch_constant(1.0, {});
  Value* y = g.op("Add", {w, one});
  CHECK_FALSE(y->is_constant());
  CHECK(op_types(model.nodes) == std::vector<std::string>{"Constant", "Add"});
  CHECK(initializer_names(model) == std::vector<std::string>{"w"});

  OnnxModel model2;
  GraphBuilder g2(model2, options_at(17, /*with_evaluator=*/true));
  Value* big = g2.add_torch_constant(Tensor::floats(std::vector<float>(65, 1.0f)), {});
  Value* neg = g2.op("Neg", {big});
  CHECK_FALSE(neg->is_constant());
  CHECK(op_types(model2.nodes) == std::vector<std::string>{"Neg"});
}

// ---- name_output -------------------------------------------------------------------------------

TEST_CASE("name_output renames the producing node's output and every reader of it") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17));
  Value* x = g.add_input("x", float_type({2}));
  Value* y = g.op("Relu", {x});
  Value* z = g.op("Neg", {y});
  g.name_output(y, "features");
  g.name_output(z, "logits");

  CHECK(y->name() == "features");
  CHECK(z->name() == "logits");
  REQUIRE(model.nodes.size() == 2);  // no Identity needed
  CHECK(outputs_of(model.nodes[0].proto) == std::vector<std::string>{"features"});
  CHECK(inputs_of(model.nodes[1].proto) == std::vector<std::string>{"features"});
  CHECK(outputs_of(model.nodes[1].proto) == std::vector<std::string>{"logits"});
  REQUIRE(model.value_types.count("logits") == 1);
  CHECK(dims_of(model.value_types.at("logits")) == std::vector<int64_t>{2});
}

TEST_CASE("name_output on a graph input adds an Identity, and a name already in use is a ConfigError") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17));
  Value* x = g.add_input("x", float_type({2}));
  g.name_output(x, "x_copy");
  REQUIRE(model.nodes.size() == 1);
  CHECK(model.nodes[0].proto.op_type() == "Identity");
  CHECK(inputs_of(model.nodes[0].proto) == std::vector<std::string>{"x"});
  CHECK(outputs_of(model.nodes[0].proto) == std::vector<std::string>{"x_copy"});
  CHECK(x->name() == "x");

  Value* y = g.op("Relu", {x});
  CHECK_THROWS_AS(g.name_output(y, "x"), ConfigError);
  CHECK(y->name() == "/Relu_output_0");
}

// ---- sub-graphs --------------------------------------------------------------------------------

TEST_CASE("an If with _g branches builds both sub-graphs from their own g.op calls and merges their types") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17));
  Value* cond = g.add_input("cond", scalar_type(DType::Bool));
  Value* x = g.add_input("x", float_type({2, 3}));

  Subgraph then_branch;
  then_branch.build = [x](Graph& sg, const std::vector<Value*>&) { return std::vector<Value*>{sg.op("Relu", {x})}; };
  Subgraph else_branch;  // returns the outer value itself: passed through an Identity
  else_branch.build = [x](Graph&, const std::vector<Value*>&) { return std::vector<Value*>{x}; };
  Value* y = g.op("If", {cond}, {{"then_branch_g", then_branch}, {"else_branch_g", else_branch}});

  REQUIRE(model.nodes.size() == 1);  // the branch nodes live in the sub-graphs only
  const auto& node = model.nodes[0].proto;
  CHECK(node.op_type() == "If");
  CHECK(inputs_of(node) == std::vector<std::string>{"cond"});
  const auto& then_g = attr(node, "then_branch");
  const auto& else_g = attr(node, "else_branch");
  CHECK(then_g.type() == onnx::AttributeProto::GRAPH);
  CHECK(then_g.g().name() == "/If/then_branch");
  CHECK(op_types(then_g.g()) == std::vector<std::string>{"Relu"});
  CHECK(inputs_of(then_g.g().node(0)) == std::vector<std::string>{"x"});
  CHECK(op_types(else_g.g()) == std::vector<std::string>{"Identity"});
  REQUIRE(then_g.g().output_size() == 1);
  CHECK(then_g.g().output(0).name() == then_g.g().node(0).output(0));
  CHECK(std::set<std::string>{"x"} == [&] {
    auto names = captured_names(node);
    return std::set<std::string>(names.begin(), names.end());
  }());
  CHECK(y->type().str() == "float32[2,3]");
}

TEST_CASE("If branches of different shapes give an output of their common rank with unknown dims") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17));
  Value* cond = g.add_input("cond", scalar_type(DType::Bool));
  Value* x = g.add_input("x", float_type({2, 3}));
  Subgraph same;
  same.build = [x](Graph& sg, const std::vector<Value*>&) { return std::vector<Value*>{sg.op("Relu", {x})}; };
  Subgraph transposed;
  transposed.build = [x](Graph& sg, const std::vector<Value*>&) {
    return std::vector<Value*>{sg.op("Transpose", {x}, {{"perm_i", {1, 0}}})};
  };
  Value* y = g.op("If", {cond}, {{"then_branch_g", same}, {"else_branch_g", transposed}});
  CHECK(y->type().str() == "float32[?,?]");
}

TEST_CASE("a Loop body gets one input per Subgraph input and returns the condition and carried values") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17));
  Value* trip = g.add_input("n", scalar_type(DType::Int64));
  Value* cond = g.add_input("c", scalar_type(DType::Bool));
  Value* v0 = g.add_input("v", float_type({2}));

  Subgraph body;
  body.inputs = {{scalar_type(DType::Int64)}, {scalar_type(DType::Bool)}, {float_type({2})}};
  body.build = [](Graph& sg, const std::vector<Value*>& in) {
    return std::vector<Value*>{in[1], sg.op("Add", {in[2], in[2]})};
  };
  Value* out = g.op("Loop", {trip, cond, v0}, {{"body_g", body}});

  REQUIRE(model.nodes.size() == 1);
  const auto& loop = model.nodes[0].proto;
  CHECK(inputs_of(loop) == std::vector<std::string>{"n", "c", "v"});
  const auto& b = attr(loop, "body").g();
  REQUIRE(b.input_size() == 3);
  CHECK(b.input(0).name() == "/Loop/body_input_0");
  CHECK(b.input(2).type().tensor_type().elem_type() == onnx::TensorProto::FLOAT);
  // The condition is a body input, so it is passed through an Identity.
  CHECK(op_types(b) == std::vector<std::string>{"Add", "Identity"});
  CHECK(inputs_of(b.node(0)) == std::vector<std::string>{"/Loop/body_input_2", "/Loop/body_input_2"});
  REQUIRE(b.output_size() == 2);
  CHECK(b.output(0).name() == b.node(1).output(0));
  CHECK(b.output(1).name() == b.node(0).output(0));
  // A loop-carried value may change size: dtype and rank stay, dims become unknown.
  CHECK(out->type().str() == "float32[?]");
}

TEST_CASE("a constant first made inside a branch is created in the outermost graph") {
  OnnxModel model;
  GraphBuilder g(model, options_at(17));
  Value* cond = g.add_input("cond", scalar_type(DType::Bool));
  Value* x = g.add_input("x", float_type({2}));
  Subgraph then_branch;
  then_branch.build = [x](Graph& sg, const std::vector<Value*>&) {
    return std::vector<Value*>{sg.op("Add", {x, sg.constant_float(1.0f)})};
  };
  Subgraph else_branch;
  else_branch.build = [x](Graph& sg, const std::vector<Value*>&) { return std::vector<Value*>{sg.op("Neg", {x})}; };
  g.op("If", {cond}, {{"then_branch_g", then_branch}, {"else_branch_g", else_branch}});

  CHECK(op_types(model.nodes) == std::vector<std::string>{"Constant", "If"});
  const auto& then_g = attr(model.nodes[1].proto, "then_branch").g();
  CHECK(op_types(then_g) == std::vector<std::string>{"Add"});
  CHECK(inputs_of(then_g.node(0))[1] == model.nodes[0].proto.output(0));
  auto captured = captured_names(model.nodes[1].proto);
  CHECK(std::set<std::string>(captured.begin(), captured.end()) ==
        std::set<std::string>{"x", model.nodes[0].proto.output(0)});
}
