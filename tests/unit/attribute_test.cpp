// resolve_attr: torch.onnx-style attribute suffixes become typed ONNX attributes.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "onnxport/attribute.h"
#include "onnxport/errors.h"

using namespace onnxport;
using Type = ResolvedAttr::Type;

namespace {

// The message of the AttributeError resolve_attr throws for a, or "" if it does not throw.
std::string attr_error(const Attr& a) {
  try {
    resolve_attr(a);
  } catch (const AttributeError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("each suffix resolves to its single and list ONNX type, with the suffix stripped") {
  struct Row {
    Attr attr;
    std::string name;
    Type type;
  };
  const std::vector<Row> rows = {
      {{"group_i", 2}, "group", Type::Int},
      {{"kernel_shape_i", {3, 3}}, "kernel_shape", Type::Ints},
      {{"alpha_f", 0.5}, "alpha", Type::Float},
      {{"scales_f", {1.0, 2.0}}, "scales", Type::Floats},
      {{"mode_s", "nearest"}, "mode", Type::String},
      {{"names_s", std::vector<std::string>{"a", "b"}}, "names", Type::Strings},
      {{"value_t", Tensor::scalar_float(1.f)}, "value", Type::Tensor},
      {{"values_t", std::vector<Tensor>{Tensor::ints({1, 2})}}, "values", Type::Tensors},
  };
  for (const Row& row : rows) {
    CAPTURE(row.attr.name);
    const ResolvedAttr r = resolve_attr(row.attr);
    CHECK(r.name == row.name);
    CHECK(r.type == row.type);
  }
}

TEST_CASE("values survive resolution unchanged") {
  CHECK(resolve_attr({"group_i", 2}).value.as_int() == 2);
  CHECK(resolve_attr({"kernel_shape_i", {3, 5}}).value.as_ints() == std::vector<int64_t>{3, 5});
  CHECK(resolve_attr({"alpha_f", 0.25}).value.as_float() == 0.25);
  CHECK(resolve_attr({"mode_s", "linear"}).value.as_string() == "linear");
  CHECK(resolve_attr({"value_t", Tensor::ints({4, 5, 6})}).value.as_tensor().numel() == 3);
}

TEST_CASE("a bool value is an int attribute") {
  const ResolvedAttr r = resolve_attr({"keepdims_i", true});
  CHECK(r.type == Type::Int);
  CHECK(r.value.as_int() == 1);
}

TEST_CASE("_f widens ints to floats, single and list") {
  const ResolvedAttr one = resolve_attr({"alpha_f", 2});
  CHECK(one.type == Type::Float);
  CHECK(one.value.kind() == AttrValue::Kind::Float);
  CHECK(one.value.as_float() == 2.0);

  const ResolvedAttr many = resolve_attr({"scales_f", {1, 2, 4}});
  CHECK(many.type == Type::Floats);
  CHECK(many.value.as_floats() == std::vector<double>{1.0, 2.0, 4.0});
}

TEST_CASE("a float with _i is an AttributeError naming the attribute") {
  const std::string msg = attr_error({"alpha_i", 0.5});
  CHECK(msg.find("alpha_i") != std::string::npos);
  CHECK(msg.find("float") != std::string::npos);
}

TEST_CASE("other suffix/value mismatches are AttributeErrors naming the attribute") {
  CHECK(attr_error({"mode_s", 3}).find("mode_s") != std::string::npos);
  CHECK(attr_error({"value_t", 1.5}).find("value_t") != std::string::npos);
  CHECK(attr_error({"alpha_f", "fast"}).find("alpha_f") != std::string::npos);
  CHECK(attr_error({"axes_i", std::vector<std::string>{"x"}}).find("axes_i") != std::string::npos);
}

TEST_CASE("unknown or missing suffixes are AttributeErrors naming the attribute") {
  CHECK(attr_error({"alpha_x", 1.0}).find("alpha_x") != std::string::npos);
  CHECK(attr_error({"alpha", 1.0}).find("alpha") != std::string::npos);
  CHECK(attr_error({"_i", 1}) != "");
}

TEST_CASE("_g attributes take a Subgraph and refuse anything else") {
  CHECK(attr_error({"then_branch_g", 1}).find("then_branch_g") != std::string::npos);
  const ResolvedAttr r = resolve_attr({"body_g", Subgraph{{}, nullptr}});
  CHECK(r.name == "body");
  CHECK(r.type == ResolvedAttr::Type::Graph);
}
