// The SDK's optional schema hook: CustomOpSchema validation and the registry's rules for the
// schemas packs declare (their ONNX side is exercised by the vendor sample and the CLI tests).
#include <doctest/doctest.h>

#include <string>

#include "onnxport/errors.h"
#include "onnxport/registry/registry.h"

using namespace onnxport;

namespace {

const PackRef kPackA{"pack_a", "/opt/packs/libpack_a.so"};
const PackRef kPackB{"pack_b", "/opt/packs/libpack_b.so"};

CustomOpSchema fancy(int since = 2) {
  return CustomOpSchema("com.vendor", "FancyOp", since)
      .input("X", "T")
      .output("Y", "T")
      .type_constraint("T", {DType::Float})
      .attribute("alpha", AttrType::Float, 1.0)
      .output_like_input(0, 0);
}

template <class F>
std::string registry_error(F&& f) {
  try {
    f();
  } catch (const RegistryError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a well-formed schema is accepted with its parts in order") {
  Registrar r;
  r.declare_domain("com.vendor", 2);
  r.add_schema(fancy());
  REQUIRE(r.schemas().size() == 1);
  const CustomOpSchema& s = r.schemas()[0];
  CHECK(s.key() == "com.vendor::FancyOp (since version 2)");
  CHECK(s.inputs()[0].name == "X");
  CHECK(s.attributes()[0].required == false);
  CHECK(s.attributes()[0].default_value->as_float() == 1.0);
  CHECK(s.shape_rule().kind == CustomOpSchema::ShapeRule::Kind::OutputLikeInput);
}

TEST_CASE("an int default for a float attribute becomes a float; a string default does not fit") {
  CustomOpSchema s("com.vendor", "Op", 1);
  s.attribute("scale", AttrType::Float, 2);
  CHECK(s.attributes()[0].default_value->kind() == AttrValue::Kind::Float);
  CHECK(s.attributes()[0].default_value->as_float() == 2.0);
  CHECK(contains(registry_error([&] { s.attribute("mode", AttrType::Int, "fast"); }),
                 "the default of attribute 'mode' is a string, which does not fit"));
}

TEST_CASE("malformed schemas are refused at registration, naming the schema and the problem") {
  Registrar r;
  auto refused = [&](CustomOpSchema s) { return registry_error([&] { r.add_schema(std::move(s)); }); };
  CHECK(contains(refused(CustomOpSchema("com.vendor", "Op", 1).input("X", "T").output("Y", "T")),
                 "com.vendor::Op (since version 1): input 'X' has type 'T', which is neither a tensor(...) type "
                 "nor a constrained type parameter"));
  CHECK(contains(refused(CustomOpSchema("com.vendor", "Op", 1)
                             .input("X", "tensor(float)")
                             .output("Y", "tensor(float)")
                             .type_constraint("T", {DType::Float})),
                 "type parameter 'T' is constrained but no input or output uses it"));
  CHECK(contains(refused(CustomOpSchema("com.vendor", "Op", 1).input("X", "tensor(float)")), "at least one output"));
  CHECK(contains(refused(CustomOpSchema("com.vendor", "Op", 1)
                             .input("X", "tensor(float)", CustomOpSchema::Arity::Variadic)
                             .input("Y", "tensor(float)")
                             .output("Z", "tensor(float)")),
                 "input 'X' is variadic but not the last"));
  CHECK(contains(refused(CustomOpSchema("com.vendor", "Op", 1).output("Y", "tensor(float)").output_like_input(0, 0)),
                 "output_like_input: there is no input 0"));
  CHECK(contains(refused(CustomOpSchema("", "Relu", 14).output("Y", "tensor(float)")), "custom domains"));
  CHECK(contains(refused(fancy().required_attribute("alpha", AttrType::Int)), "attribute 'alpha' is declared twice"));
  CHECK(r.schemas().empty());
}

TEST_CASE("output_like_input and an inference callback are exclusive") {
  auto callback = [](const SchemaInferenceInput& in) { return in.inputs; };
  CHECK(contains(registry_error([&] { fancy().infer(callback); }), "cannot be combined"));
}

TEST_CASE("a schema's domain must be declared by the same pack") {
  Registry reg;
  Registrar r;
  r.add_schema(fancy());
  CHECK(contains(
      registry_error([&] { reg.add_pack(kPackA, r); }),
      "declares schema com.vendor::FancyOp (since version 2) for domain com.vendor, which it does not declare"));
  CHECK(reg.schemas().empty());
  CHECK(reg.domains().empty());  // nothing of the failed pack is kept
}

TEST_CASE("two packs declaring one schema key is an error naming both; other versions coexist") {
  Registry reg;
  Registrar a;
  a.declare_domain("com.vendor", 2);
  a.add_schema(fancy(2));
  reg.add_pack(kPackA, a);

  Registrar b;
  b.declare_domain("com.vendor", 2);
  b.add_schema(fancy(2));
  const std::string err = registry_error([&] { reg.add_pack(kPackB, b); });
  CHECK(contains(err, "schema com.vendor::FancyOp (since version 2) is declared by pack_a (/opt/packs/libpack_a.so)"));
  CHECK(contains(err, "and by pack_b (/opt/packs/libpack_b.so)"));

  Registrar c;
  c.declare_domain("com.vendor", 2);
  c.add_schema(fancy(3));
  reg.add_pack(kPackB, c);
  REQUIRE(reg.schemas().size() == 2);
  CHECK(reg.schemas().at("com.vendor::FancyOp (since version 3)").pack.id == "pack_b");
}

TEST_CASE("SchemaInferenceInput::attribute finds attributes by name") {
  SchemaInferenceInput in;
  in.attributes.push_back(ResolvedAttr{"alpha", AttrType::Float, AttrValue(0.5)});
  REQUIRE(in.attribute("alpha") != nullptr);
  CHECK(in.attribute("alpha")->value.as_float() == 0.5);
  CHECK(in.attribute("beta") == nullptr);
}
