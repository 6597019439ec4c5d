// Args: typed argument accessors, and errors that say op, argument, expected and found.
#include <doctest/doctest.h>

#include <string>

#include "onnxport/args.h"
#include "onnxport/errors.h"
#include "support.h"

using namespace onnxport;
using onnxport::test::ValuePool;

namespace {

TorchNode make_node() {
  TorchNode n;
  n.kind = "aten::unit_op";
  n.input_names = {"self", "dim", "alpha", "keepdim", "mode", "sizes", "weight", "items"};
  n.num_inputs = n.input_names.size();
  return n;
}

// self, dim=1, alpha=0.5, keepdim=true, mode="linear", sizes=[2,3], weight=None, items=[x, 4]
struct Fixture {
  ValuePool pool;
  TorchNode node = make_node();
  Value* self = pool.tensor(DType::Float, {2, 3});
  Args args{{self, pool.constant(int64_t{1}), pool.constant(0.5), pool.constant(true),
             pool.constant(std::string("linear")), pool.list({pool.constant(int64_t{2}), pool.constant(int64_t{3})}),
             pool.none(), pool.list({self, pool.constant(int64_t{4})})},
            node};
};

// The ArgumentError message of f(), or "" if it does not throw one.
template <class F>
std::string arg_error(F&& f) {
  try {
    f();
  } catch (const ArgumentError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("accessors return the argument in the shape asked for") {
  Fixture fx;
  const Args& a = fx.args;
  CHECK(a.size() == 8);
  CHECK(a.tensor(0) == fx.self);
  CHECK(a.i(1) == 1);
  CHECK(a.f(2) == 0.5);
  CHECK(a.f(1) == 1.0);  // an int constant is accepted as a float
  CHECK(a.b(3) == true);
  CHECK(a.s(4) == "linear");
  CHECK(a.is(5) == std::vector<int64_t>{2, 3});
  CHECK(a.is(1) == std::vector<int64_t>{1});  // a single int becomes a 1-list
  CHECK(a.fs(5) == std::vector<double>{2.0, 3.0});
  CHECK(a.list(7).size() == 2);
  CHECK(a.list(7)[0] == fx.self);
}

TEST_CASE("optional accessors map None and absent arguments to nothing") {
  Fixture fx;
  const Args& a = fx.args;
  CHECK(a.is_none(6));
  CHECK(a.is_none(42));
  CHECK_FALSE(a.is_none(0));
  CHECK(a.optional_tensor(6) == nullptr);
  CHECK(a.optional_tensor(42) == nullptr);
  CHECK(a.optional_tensor(0) == fx.self);
  CHECK_FALSE(a.opt_i(6));
  CHECK(a.opt_i(1) == 1);
  CHECK_FALSE(a.opt_f(6));
  CHECK(a.opt_f(2) == 0.5);
  CHECK_FALSE(a.opt_is(6));
  CHECK(a.opt_is(5) == std::vector<int64_t>{2, 3});
}

TEST_CASE("a constant tensor argument exposes its payload") {
  ValuePool pool;
  TorchNode node = make_node();
  Args a({pool.constant(Tensor::ints({1, 2, 3}))}, node);
  CHECK(a.t(0).numel() == 3);
}

TEST_CASE("a wrong argument kind names the op, the argument index and name, expected and found") {
  Fixture fx;
  const Args& a = fx.args;
  struct Row {
    const char* what;
    std::string message;
    const char* index_and_name;
    const char* expected;
    const char* found;
  };
  const Row rows[] = {
      {"i on a tensor", arg_error([&] { a.i(0); }), "argument 0 (self)", "int", "float32[2,3]"},
      {"i on a float", arg_error([&] { a.i(2); }), "argument 2 (alpha)", "int", "0.5"},
      {"s on an int", arg_error([&] { a.s(1); }), "argument 1 (dim)", "string", "int 1"},
      {"b on a string", arg_error([&] { a.b(4); }), "argument 4 (mode)", "bool", "linear"},
      {"tensor on None", arg_error([&] { a.tensor(6); }), "argument 6 (weight)", "tensor", "None"},
      {"is on a list with a tensor", arg_error([&] { a.is(7); }), "argument 7 (items)", "int list", "list of 2"},
      {"list on an int", arg_error([&] { a.list(1); }), "argument 1 (dim)", "list", "int 1"},
      {"t on a non-constant", arg_error([&] { a.t(0); }), "argument 0 (self)", "tensor", "float32"},
      {"opt_i on a string", arg_error([&] { a.opt_i(4); }), "argument 4 (mode)", "int", "linear"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.what);
    CAPTURE(row.message);
    CHECK(contains(row.message, "aten::unit_op"));
    CHECK(contains(row.message, row.index_and_name));
    CHECK(contains(row.message, row.expected));
    CHECK(contains(row.message, row.found));
  }
}

TEST_CASE("an absent argument says how many inputs the node has") {
  Fixture fx;
  const std::string msg = arg_error([&] { fx.args.i(9); });
  CHECK(contains(msg, "aten::unit_op"));
  CHECK(contains(msg, "argument 9"));
  CHECK(contains(msg, "8 inputs"));
  CHECK(arg_error([&] { fx.args.at(8); }) != "");
}
