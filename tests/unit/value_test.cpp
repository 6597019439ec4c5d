// Value's maybe_*() accessors: the constant payload in the shape asked for, or nullopt.
#include <doctest/doctest.h>

#include "onnxport/tensor.h"
#include "onnxport/value.h"
#include "support.h"

using namespace onnxport;
using onnxport::test::ValuePool;

using Ints = std::vector<int64_t>;
using Floats = std::vector<double>;

TEST_CASE("an int constant reads as int, float and bool, not as string or tensor") {
  ValuePool p;
  Value* v = p.constant(int64_t{3});
  CHECK(v->is_constant());
  CHECK(v->maybe_int() == 3);
  CHECK(v->maybe_float() == 3.0);
  CHECK(v->maybe_bool() == true);
  CHECK_FALSE(v->maybe_string());
  CHECK(v->maybe_tensor() == nullptr);
}

TEST_CASE("a float constant reads as float but not as int") {
  ValuePool p;
  Value* v = p.constant(0.5);
  CHECK(v->maybe_float() == 0.5);
  CHECK_FALSE(v->maybe_int());
  CHECK_FALSE(v->maybe_ints());
}

TEST_CASE("bool and string constants") {
  ValuePool p;
  CHECK(p.constant(false)->maybe_bool() == false);
  CHECK(p.constant(std::string("nearest"))->maybe_string() == std::string("nearest"));
  CHECK_FALSE(p.constant(std::string("3"))->maybe_int());
}

TEST_CASE("int and float list constants") {
  ValuePool p;
  Value* ints = p.constant(Ints{1, 2, 3});
  CHECK(ints->maybe_ints() == Ints{1, 2, 3});
  CHECK_FALSE(ints->maybe_int());
  Value* floats = p.constant(Floats{0.5, 1.5});
  CHECK(floats->maybe_floats() == Floats{0.5, 1.5});
  CHECK_FALSE(floats->maybe_ints());
}

TEST_CASE("a one-element tensor constant reads as a scalar") {
  ValuePool p;
  CHECK(p.constant(Tensor::scalar_int64(7))->maybe_int() == 7);
  CHECK(p.constant(Tensor::ints({7}))->maybe_int() == 7);
  CHECK(p.constant(Tensor::scalar_float(2.5f))->maybe_float() == 2.5);
  CHECK(p.constant(Tensor::scalar_bool(true))->maybe_bool() == true);
}

TEST_CASE("a 1-d tensor constant reads as a list, not as a scalar") {
  ValuePool p;
  Value* v = p.constant(Tensor::ints({4, 5}));
  CHECK(v->maybe_ints() == Ints{4, 5});
  CHECK_FALSE(v->maybe_int());
  REQUIRE(v->maybe_tensor() != nullptr);
  CHECK(v->maybe_tensor()->shape() == Ints{2});
  CHECK(p.constant(Tensor::floats({0.5f, 0.25f}))->maybe_floats() == Floats{0.5, 0.25});
}

TEST_CASE("a list value of constants reads as a list") {
  ValuePool p;
  Value* list = p.list({p.constant(int64_t{2}), p.constant(Tensor::scalar_int64(3))});
  CHECK(list->is_list());
  CHECK_FALSE(list->is_constant());
  CHECK(list->maybe_ints() == Ints{2, 3});
  CHECK(list->maybe_floats() == Floats{2.0, 3.0});
  CHECK(list->elements().size() == 2);
}

TEST_CASE("a list with a non-constant element is not a constant list") {
  ValuePool p;
  Value* list = p.list({p.constant(int64_t{2}), p.tensor(DType::Int64, {})});
  CHECK_FALSE(list->maybe_ints());
  CHECK_FALSE(list->maybe_floats());
}

TEST_CASE("a non-constant tensor and None have no constant payload") {
  ValuePool p;
  for (Value* v : {static_cast<Value*>(p.tensor(DType::Float, {1, 3})), static_cast<Value*>(p.none())}) {
    CAPTURE(v->describe());
    CHECK_FALSE(v->is_constant());
    CHECK_FALSE(v->maybe_int());
    CHECK_FALSE(v->maybe_float());
    CHECK_FALSE(v->maybe_bool());
    CHECK_FALSE(v->maybe_string());
    CHECK_FALSE(v->maybe_ints());
    CHECK_FALSE(v->maybe_floats());
    CHECK(v->maybe_tensor() == nullptr);
  }
}

TEST_CASE("a tensor value exposes its type") {
  ValuePool p;
  Value* v = p.tensor(DType::Float, {1, 3});
  CHECK(v->is_tensor());
  CHECK(v->dtype() == DType::Float);
  CHECK(v->rank() == 2);
}
