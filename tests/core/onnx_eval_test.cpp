// The ONNX evaluator (2_eval/fold_kernels.h): which ops it knows, the values it computes for them with
// ATen, opset-dependent inputs (Unsqueeze axes), and nullopt for what it cannot compute.
#include "doctest_torch.h"  // before any libtorch header

#include "2_eval/fold_kernels.h"
#include "3_export/2_prepare/torch_graph.h"
#include "support.h"

using namespace onnxport;
using namespace onnxport::core;
using namespace onnxport::core_test;

namespace {

at::Tensor longs(std::vector<int64_t> v) { return at::tensor(v, at::TensorOptions().dtype(at::kLong)); }
at::Tensor floats(std::vector<float> v) { return at::tensor(v, at::TensorOptions().dtype(at::kFloat)); }

std::vector<int64_t> values_of(const at::Tensor& t) {
  auto c = t.to(at::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}
std::vector<float> float_values_of(const at::Tensor& t) {
  auto c = t.to(at::kFloat).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}
std::vector<int64_t> sizes_of(const at::Tensor& t) { return t.sizes().vec(); }
std::string scalar_type_name(const at::Tensor& t) { return c10::toString(t.scalar_type()); }  // "Long", "Bool"

std::optional<at::Tensor> eval(const onnx::NodeProto& n, const std::vector<at::Tensor>& in, int opset = 17) {
  return evaluate_node(n, in, opset);
}

}  // namespace

TEST_CASE("has_evaluator knows standard-domain ops it can compute, not others or other domains") {
  for (const char* op : {"Add", "Cast", "Transpose", "Concat", "Gather", "Unsqueeze", "Shape", "Reshape", "Slice"}) {
    CAPTURE(op);
    CHECK(has_evaluator(node_proto(op, {"a"}, {"y"})));
  }
  for (const char* op : {"Conv", "Relu", "MatMul", "NoSuchOp"}) {
    CAPTURE(op);
    CHECK_FALSE(has_evaluator(node_proto(op, {"a"}, {"y"})));
  }
  onnx::NodeProto custom = node_proto("Add", {"a", "b"}, {"y"});
  custom.set_domain("com.vendor");
  CHECK_FALSE(has_evaluator(custom));
}

TEST_CASE("Cast converts to the dtype of its 'to' attribute, truncating floats toward zero") {
  auto r = eval(node_proto("Cast", {"x"}, {"y"}, {attr_i("to", static_cast<int64_t>(DType::Int64))}),
                {floats({1.7f, -2.2f, 3.0f})});
  REQUIRE(r);
  CHECK(scalar_type_name(*r) == "Long");
  CHECK(values_of(*r) == std::vector<int64_t>{1, -2, 3});

  auto b = eval(node_proto("Cast", {"x"}, {"y"}, {attr_i("to", static_cast<int64_t>(DType::Bool))}), {longs({0, 5})});
  REQUIRE(b);
  CHECK(scalar_type_name(*b) == "Bool");
  CHECK(values_of(*b) == std::vector<int64_t>{0, 1});

  CHECK_FALSE(eval(node_proto("Cast", {"x"}, {"y"}), {longs({1})}));  // no 'to'
}

TEST_CASE("Transpose reverses the axes without perm and follows perm when given") {
  at::Tensor x = at::arange(6, at::kLong).reshape({1, 2, 3});
  auto reversed = eval(node_proto("Transpose", {"x"}, {"y"}), {x});
  REQUIRE(reversed);
  CHECK(sizes_of(*reversed) == std::vector<int64_t>{3, 2, 1});
  CHECK(values_of(*reversed) == std::vector<int64_t>{0, 3, 1, 4, 2, 5});

  auto permuted = eval(node_proto("Transpose", {"x"}, {"y"}, {attr_ints("perm", {0, 2, 1})}), {x});
  REQUIRE(permuted);
  CHECK(sizes_of(*permuted) == std::vector<int64_t>{1, 3, 2});
  CHECK(values_of(*permuted) == std::vector<int64_t>{0, 3, 1, 4, 2, 5});
}

TEST_CASE("Concat joins its inputs along 'axis' and needs the attribute") {
  auto r = eval(node_proto("Concat", {"a", "b", "c"}, {"y"}, {attr_i("axis", 0)}),
                {longs({1, 2}), longs({3}), longs({4, 5})});
  REQUIRE(r);
  CHECK(values_of(*r) == std::vector<int64_t>{1, 2, 3, 4, 5});

  at::Tensor a = at::zeros({2, 1}, at::kLong), b = at::ones({2, 2}, at::kLong);
  auto cols = eval(node_proto("Concat", {"a", "b"}, {"y"}, {attr_i("axis", -1)}), {a, b});
  REQUIRE(cols);
  CHECK(sizes_of(*cols) == std::vector<int64_t>{2, 3});
  CHECK(values_of(*cols) == std::vector<int64_t>{0, 1, 1, 0, 1, 1});

  CHECK_FALSE(eval(node_proto("Concat", {"a", "b"}, {"y"}), {longs({1}), longs({2})}));
}

TEST_CASE("Gather picks along its axis, wraps negative indices and keeps the index tensor's shape") {
  at::Tensor data = at::arange(6, at::kLong).reshape({2, 3});  // [[0,1,2],[3,4,5]]
  auto rows = eval(node_proto("Gather", {"d", "i"}, {"y"}), {data, longs({1, -2})});
  REQUIRE(rows);
  CHECK(sizes_of(*rows) == std::vector<int64_t>{2, 3});
  CHECK(values_of(*rows) == std::vector<int64_t>{3, 4, 5, 0, 1, 2});

  auto col =
      eval(node_proto("Gather", {"d", "i"}, {"y"}, {attr_i("axis", 1)}), {data, at::scalar_tensor(-1, at::kLong)});
  REQUIRE(col);
  CHECK(sizes_of(*col) == std::vector<int64_t>{2});  // a 0-d index removes the axis
  CHECK(values_of(*col) == std::vector<int64_t>{2, 5});

  // Shape -> Gather(0): the usual size computation on a shape vector.
  auto dim0 = eval(node_proto("Gather", {"s", "i"}, {"y"}), {longs({8, 3, 224}), at::scalar_tensor(0, at::kLong)});
  REQUIRE(dim0);
  CHECK(dim0->dim() == 0);
  CHECK(values_of(*dim0) == std::vector<int64_t>{8});
}

TEST_CASE("Range gives ceil((limit - start) / delta) values in start's dtype, and none when that is negative") {
  auto ints = eval(node_proto("Range", {"s", "l", "d"}, {"y"}),
                   {at::scalar_tensor(2, at::kLong), at::scalar_tensor(9, at::kLong), at::scalar_tensor(3, at::kLong)});
  REQUIRE(ints.has_value());
  CHECK(scalar_type_name(*ints) == "Long");
  CHECK(std::vector<int64_t>(ints->data_ptr<int64_t>(), ints->data_ptr<int64_t>() + ints->numel()) ==
        std::vector<int64_t>{2, 5, 8});
  auto down = eval(node_proto("Range", {"s", "l", "d"}, {"y"}),
                   {at::scalar_tensor(1.0f), at::scalar_tensor(0.0f), at::scalar_tensor(-0.25f)});
  REQUIRE(down.has_value());
  CHECK(scalar_type_name(*down) == "Float");
  CHECK(at::allclose(*down, at::tensor({1.0f, 0.75f, 0.5f, 0.25f})));
  auto empty = eval(node_proto("Range", {"s", "l", "d"}, {"y"}),
                    {at::scalar_tensor(5, at::kLong), at::scalar_tensor(1, at::kLong), at::scalar_tensor(1, at::kLong)});
  REQUIRE(empty.has_value());
  CHECK(empty->numel() == 0);
  // delta 0 never ends, and a huge range is no constant worth writing: both left to the runtime.
  CHECK_FALSE(eval(node_proto("Range", {"s", "l", "d"}, {"y"}),
                   {at::scalar_tensor(0, at::kLong), at::scalar_tensor(4, at::kLong), at::scalar_tensor(0, at::kLong)})
                  .has_value());
  CHECK_FALSE(eval(node_proto("Range", {"s", "l", "d"}, {"y"}),
                   {at::scalar_tensor(0, at::kLong), at::scalar_tensor(int64_t(1) << 40, at::kLong),
                    at::scalar_tensor(1, at::kLong)})
                  .has_value());
}

TEST_CASE("Unsqueeze reads axes from the attribute before opset 13 and from input 1 from opset 13") {
  at::Tensor x = longs({7, 8});
  const auto with_attr = node_proto("Unsqueeze", {"x"}, {"y"}, {attr_ints("axes", {0, -1})});
  const auto with_input = node_proto("Unsqueeze", {"x", "axes"}, {"y"});

  auto v11 = eval(with_attr, {x}, 11);
  REQUIRE(v11);
  CHECK(sizes_of(*v11) == std::vector<int64_t>{1, 2, 1});
  CHECK(values_of(*v11) == std::vector<int64_t>{7, 8});

  auto v13 = eval(with_input, {x, longs({0, -1})}, 13);
  REQUIRE(v13);
  CHECK(sizes_of(*v13) == std::vector<int64_t>{1, 2, 1});

  auto v13_one = eval(with_input, {x, longs({1})}, 13);
  REQUIRE(v13_one);
  CHECK(sizes_of(*v13_one) == std::vector<int64_t>{2, 1});

  // The wrong form for the opset gives nothing: at 13 the attribute is ignored, at 11 the input.
  CHECK_FALSE(eval(with_attr, {x}, 13));
  CHECK_FALSE(eval(with_input, {x, longs({0})}, 11));
}

TEST_CASE("Shape gives the input's sizes as int64") {
  auto r = eval(node_proto("Shape", {"x"}, {"y"}), {at::zeros({2, 3, 5})});
  REQUIRE(r);
  CHECK(scalar_type_name(*r) == "Long");
  CHECK(values_of(*r) == std::vector<int64_t>{2, 3, 5});

  auto scalar = eval(node_proto("Shape", {"x"}, {"y"}), {at::scalar_tensor(1.0)});
  REQUIRE(scalar);
  CHECK(sizes_of(*scalar) == std::vector<int64_t>{0});
}

TEST_CASE("Shape with start and end (opset 15) gives that range of the sizes, clamped like Python slicing") {
  const std::vector<at::Tensor> x{at::zeros({2, 3, 5})};
  auto tail = eval(node_proto("Shape", {"x"}, {"y"}, {attr_i("start", 1)}), x);
  REQUIRE(tail);
  CHECK(values_of(*tail) == std::vector<int64_t>{3, 5});
  auto middle = eval(node_proto("Shape", {"x"}, {"y"}, {attr_i("start", -2), attr_i("end", -1)}), x);
  REQUIRE(middle);
  CHECK(values_of(*middle) == std::vector<int64_t>{3});
  auto empty = eval(node_proto("Shape", {"x"}, {"y"}, {attr_i("start", 5), attr_i("end", 1)}), x);
  REQUIRE(empty);
  CHECK(values_of(*empty).empty());
}

TEST_CASE("a node with fewer inputs than its schema requires is not evaluated") {
  CHECK_FALSE(eval(node_proto("Add", {"a"}, {"y"}), {longs({1})}));
  CHECK_FALSE(eval(node_proto("Slice", {"x", "s"}, {"y"}), {longs({1, 2, 3}), longs({0})}));
}

TEST_CASE("arithmetic keeps integer division truncating and comparisons give bool") {
  auto div = eval(node_proto("Div", {"a", "b"}, {"y"}), {longs({7, -7}), longs({2, 2})});
  REQUIRE(div);
  CHECK(values_of(*div) == std::vector<int64_t>{3, -3});
  auto fdiv = eval(node_proto("Div", {"a", "b"}, {"y"}), {floats({7.0f}), floats({2.0f})});
  REQUIRE(fdiv);
  CHECK(float_values_of(*fdiv) == std::vector<float>{3.5f});
  auto less = eval(node_proto("Less", {"a", "b"}, {"y"}), {longs({1, 5}), longs({3, 3})});
  REQUIRE(less);
  CHECK(scalar_type_name(*less) == "Bool");
  CHECK(values_of(*less) == std::vector<int64_t>{1, 0});
}

TEST_CASE("an op the evaluator does not know, or inputs ATen rejects, give nullopt instead of throwing") {
  CHECK_FALSE(eval(node_proto("Relu", {"x"}, {"y"}), {floats({-1.0f})}));
  CHECK_FALSE(eval(node_proto("Conv", {"x", "w"}, {"y"}), {at::zeros({1, 1, 2, 2}), at::zeros({1, 1, 1, 1})}));
  // Shapes that do not broadcast: ATen throws, the evaluator declines.
  CHECK_FALSE(eval(node_proto("Add", {"a", "b"}, {"y"}), {longs({1, 2}), longs({1, 2, 3})}));
  // Reshape to an element count that does not fit.
  CHECK_FALSE(eval(node_proto("Reshape", {"x", "s"}, {"y"}), {longs({1, 2, 3}), longs({4})}));
}

TEST_CASE("a Slice with a negative step is folded, its end clamped to before the first element") {
  auto reversed = eval(node_proto("Slice", {"x", "s", "e", "a", "st"}, {"y"}),
                       {longs({1, 2, 3}), longs({-1}), longs({-4}), longs({0}), longs({-1})});
  REQUIRE(reversed);
  CHECK(values_of(*reversed) == std::vector<int64_t>{3, 2, 1});
}

TEST_CASE("evaluate_constant_node computes on SDK tensors and declines nodes with several outputs") {
  Tensor a = Tensor::ints({1, 2, 3});
  Tensor b = Tensor::scalar_int64(10);
  auto sum = evaluate_constant_node(node_proto("Add", {"a", "b"}, {"y"}), {a, b}, 17);
  REQUIRE(sum);
  CHECK(sum->dtype() == DType::Int64);
  CHECK(sum->shape() == std::vector<int64_t>{3});
  CHECK(sum->as_int64s() == std::vector<int64_t>{11, 12, 13});

  auto cast = evaluate_constant_node(
      node_proto("Cast", {"a"}, {"y"}, {attr_i("to", static_cast<int64_t>(DType::Float))}), {a}, 17);
  REQUIRE(cast);
  CHECK(cast->dtype() == DType::Float);
  CHECK(cast->as_doubles() == std::vector<double>{1.0, 2.0, 3.0});

  CHECK_FALSE(evaluate_constant_node(node_proto("Identity", {"a"}, {"y", "z"}), {a}, 17));
  CHECK_FALSE(evaluate_constant_node(node_proto("Relu", {"a"}, {"y"}), {a}, 17));
}

TEST_CASE("to_aten views an SDK tensor, keeping it alive; borrow_tensor wraps a result without copying") {
  at::Tensor view;
  const void* bytes = nullptr;
  {
    Tensor t = float_tensor({2, 2}, {1.0f, 2.0f, 3.0f, 4.0f});
    bytes = t.data();
    view = to_aten(t);
    CHECK(view.data_ptr() == t.data());
  }  // the view still owns the bytes
  CHECK(sizes_of(view) == std::vector<int64_t>{2, 2});
  CHECK(view.data_ptr() == bytes);
  CHECK(view[1][0].item<float>() == 3.0f);

  Tensor back = borrow_tensor(view.t());  // non-contiguous: made contiguous in logical order
  CHECK(back.shape() == std::vector<int64_t>{2, 2});
  CHECK(back.as_doubles() == std::vector<double>{1.0, 3.0, 2.0, 4.0});
  CHECK(back.data() != bytes);

  at::Tensor sum = view + 1;
  Tensor wrapped = borrow_tensor(sum);  // contiguous: the same bytes, kept alive by the wrapper
  CHECK(wrapped.data() == sum.data_ptr());
  sum = at::Tensor();
  CHECK(wrapped.as_doubles() == std::vector<double>{2.0, 3.0, 4.0, 5.0});
}
