// fold_export_time_facts (export_time_facts.h) on prim::isinstance: decided where the tested
// value's static type decides it, left alone where it does not.
#include "doctest_torch.h"  // before any libtorch header

#include <optional>
#include <vector>

#include <torch/csrc/jit/ir/ir.h>

#include "3_export/2_prepare/export_time_facts.h"

using namespace onnxport::core;

namespace {

struct IsinstanceCase {
  c10::TypePtr value_type;
  std::vector<c10::TypePtr> tested;
};

// A graph returning isinstance(input_i, tested_i) for each case, folded; per case the constant
// bool it became, or nullopt when the node stayed.
std::vector<std::optional<bool>> folded_isinstance(const std::vector<IsinstanceCase>& cases) {
  auto graph = std::make_shared<torch::jit::Graph>();
  for (const auto& c : cases) {
    torch::jit::Value* input = graph->addInput();
    input->setType(c.value_type);
    torch::jit::Node* test = graph->create(c10::prim::isinstance, {input});
    test->tys_(c10::attr::types, c.tested);
    test->output()->setType(c10::BoolType::get());
    graph->appendNode(test);
    graph->registerOutput(test->output());
  }
  fold_export_time_facts(graph->block());
  std::vector<std::optional<bool>> results;
  for (const auto* out : graph->outputs()) {
    if (out->node()->kind() == c10::prim::Constant)
      results.push_back(torch::jit::toIValue(out)->toBool());
    else
      results.push_back(std::nullopt);
  }
  return results;
}

}  // namespace

TEST_CASE("isinstance is decided by the value's static type") {
  const auto tensor = c10::TensorType::get();
  const auto f = c10::FloatType::get();
  const auto i = c10::IntType::get();
  const auto results = folded_isinstance({
      {tensor, {f}},                                   // gaussian_nll_loss's var, given a Tensor
      {f, {f}},                                        // a float is a float
      {i, {f, i}},                                     // one of several
      {c10::ListType::ofInts(), {c10::ListType::ofFloats()}},  // List[int] is no List[float]
      {c10::OptionalType::create(tensor), {c10::NoneType::get()}},  // may be None or not
      {c10::UnionType::create({tensor, f}), {f}},       // a Union with a float among others
      {c10::UnionType::create({tensor, f}), {tensor, f}},  // every member is one of them
      {c10::UnionType::create({tensor, i}), {f}},       // no member can be
      {c10::AnyType::get(), {f}},                      // anything
      {c10::NumberType::get(), {f}},                   // a Number may be a float
  });
  REQUIRE(results.size() == 10);
  CHECK(results[0] == std::optional<bool>(false));
  CHECK(results[1] == std::optional<bool>(true));
  CHECK(results[2] == std::optional<bool>(true));
  CHECK(results[3] == std::optional<bool>(false));
  CHECK(results[4] == std::nullopt);
  CHECK(results[5] == std::nullopt);
  CHECK(results[6] == std::optional<bool>(true));
  CHECK(results[7] == std::optional<bool>(false));
  CHECK(results[8] == std::nullopt);
  CHECK(results[9] == std::nullopt);
}
