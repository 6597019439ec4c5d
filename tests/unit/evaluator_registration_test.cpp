// The SDK's evaluator hook (op_evaluator.h): what Registrar::add_evaluator accepts and the
// registry's rules for the evaluators packs register (their use is exercised by the vendor
// sample: onnxport run/verify computing com.vendor::FancyOp).
#include <doctest/doctest.h>

#include <string>

#include "onnxport/errors.h"
#include "onnxport/registry/registry.h"

using namespace onnxport;

namespace {

const PackRef kPackA{"pack_a", "/opt/packs/libpack_a.so"};
const PackRef kPackB{"pack_b", "/opt/packs/libpack_b.so"};

std::vector<Tensor> doubled(const EvalNode&, const std::vector<Tensor>& inputs) {
  const auto values = inputs.at(0).as_doubles();
  std::vector<float> out;
  for (double v : values) out.push_back(static_cast<float>(2 * v));
  return {Tensor::floats(out)};
}

class NoAttributes : public EvalNode {
 public:
  const std::string& domain() const override { return domain_; }
  const std::string& op_type() const override { return op_; }
  const std::string& name() const override { return op_; }
  int opset() const override { return 2; }
  size_t output_count() const override { return 1; }
  std::optional<int64_t> attr_int(const std::string&) const override { return std::nullopt; }
  std::optional<double> attr_float(const std::string&) const override { return std::nullopt; }
  std::optional<std::string> attr_string(const std::string&) const override { return std::nullopt; }
  std::optional<std::vector<int64_t>> attr_ints(const std::string&) const override { return std::nullopt; }
  std::optional<std::vector<double>> attr_floats(const std::string&) const override { return std::nullopt; }

 private:
  std::string domain_ = "com.vendor", op_ = "Double";
};

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

TEST_CASE("an evaluator of a declared domain is found by domain and op, with its pack") {
  Registry reg;
  Registrar r;
  r.declare_domain("com.vendor", 2);
  r.add_evaluator("com.vendor", "Double", doubled);
  reg.add_pack(kPackA, r);
  const auto* entry = reg.evaluator_for("com.vendor", "Double");
  REQUIRE(entry != nullptr);
  CHECK(entry->pack.id == "pack_a");
  const auto out = entry->fn(NoAttributes(), {Tensor::floats({1.5f, -2.0f})});
  REQUIRE(out.size() == 1);
  CHECK(out[0].as_doubles() == std::vector<double>{3.0, -4.0});
  CHECK(reg.evaluator_for("com.vendor", "Triple") == nullptr);
  CHECK(reg.evaluator_for("com.other", "Double") == nullptr);
}

TEST_CASE("an evaluator for the standard domain, without an op or function, is refused when registered") {
  Registrar r;
  CHECK(contains(registry_error([&] { r.add_evaluator("", "Relu", doubled); }), "standard ONNX domain"));
  CHECK(contains(registry_error([&] { r.add_evaluator("ai.onnx", "Relu", doubled); }), "standard ONNX domain"));
  CHECK(contains(registry_error([&] { r.add_evaluator("com.vendor", "", doubled); }), "needs an op type"));
  CHECK(contains(registry_error([&] { r.add_evaluator("com.vendor", "Double", OpEvaluator()); }), "needs an op type"));
  CHECK(r.evaluators().empty());
}

TEST_CASE("an evaluator whose domain the pack does not declare fails the pack, leaving nothing of it") {
  Registry reg;
  Registrar r;
  r.add("vendor::double", 9, [](Graph&, const TorchNode&, const Args& a) { return a.tensor(0); });
  r.add_evaluator("com.vendor", "Double", doubled);
  CHECK(contains(registry_error([&] { reg.add_pack(kPackA, r); }),
                 "registers an evaluator for com.vendor::Double, whose domain it does not declare"));
  CHECK(reg.evaluator_for("com.vendor", "Double") == nullptr);
  CHECK(!reg.has_op("vendor::double"));
}

TEST_CASE("two packs registering an evaluator for one op is an error naming both") {
  Registry reg;
  Registrar a, b;
  for (Registrar* r : {&a, &b}) {
    r->declare_domain("com.vendor", 2);
    r->add_evaluator("com.vendor", "Double", doubled);
  }
  reg.add_pack(kPackA, a);
  const std::string error = registry_error([&] { reg.add_pack(kPackB, b); });
  CHECK(contains(error, "the evaluator of com.vendor::Double is registered by pack_a"));
  CHECK(contains(error, "and by pack_b"));
  CHECK(reg.evaluator_for("com.vendor", "Double")->pack.id == "pack_a");
}
