// The load stage's registration of operators a newer PyTorch writes (core/3_export/1_load/
// newer_operators.cpp): on libtorch 1.13 aten::scaled_dot_product_attention and aten::rms_norm are
// missing until they are registered, TorchScript then compiles calls of them in every form the newer
// releases write, and their kernels match the operation computed here with other ATen ops; where an operator is known already
// (libtorch 2.6, or a second call) nothing is registered.
#include "../core/doctest_torch.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/jit.h>
#include <torch/csrc/jit/frontend/function_schema_parser.h>
#include <torch/csrc/jit/runtime/operator.h>
#include <torch/script.h>
#include "1_base/torch_release.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "3_export/1_load/newer_operator_kernels.h"
#include "3_export/1_load/newer_operators.h"

namespace {

using onnxport::core::NewerOperator;
using onnxport::core::NewerOperatorStatus;
using Outcome = NewerOperatorStatus::Outcome;

const char* kSdpa = "aten::scaled_dot_product_attention";
const char* kRmsNorm = "aten::rms_norm";

bool dispatcher_has(const char* name, const char* overload = "") {
  return c10::Dispatcher::singleton().findSchema({name, overload}).has_value();
}

// onnxport's kernel, called directly: on a libtorch that has the operator, the dispatcher would
// call libtorch's own.
at::Tensor sdpa(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, c10::optional<at::Tensor> mask = {},
                double dropout_p = 0.0, bool is_causal = false, c10::optional<double> scale = {},
                bool enable_gqa = false) {
  return onnxport::core::scaled_dot_product_attention(q, k, v, mask, dropout_p, is_causal, scale, enable_gqa);
}

// Attention written another way: the mask as an additive bias, GQA by gathering each query head's
// key/value head, the causal mask from triu.
at::Tensor reference(const at::Tensor& q, at::Tensor k, at::Tensor v, const at::Tensor& bias, double scale,
                     int64_t group = 1) {
  if (group > 1) {
    const at::Tensor heads = at::arange(q.size(-3), at::kLong).div(group, "floor");
    k = k.index_select(-3, heads);
    v = v.index_select(-3, heads);
  }
  const at::Tensor scores = at::einsum("...le,...se->...ls", {q, k}) * scale + bias;
  const at::Tensor e = at::exp(scores - scores.amax(-1, true));
  return at::einsum("...ls,...se->...le", {e / e.sum(-1, true), v});
}

at::Tensor minus_inf_where_not(const at::Tensor& keep) {
  return at::zeros(keep.sizes(), at::kDouble).masked_fill(keep.logical_not(), -std::numeric_limits<double>::infinity());
}

void check_close(const at::Tensor& got, const at::Tensor& want) {
  REQUIRE(got.sizes() == want.sizes());
  const double diff = (got - want).abs().max().item<double>();
  INFO("max abs difference " << diff);
  CHECK(diff < 1e-12);
}

}  // namespace

// Each entry's schema as PyTorch 2.6 declares it (its native_functions.yaml).
const std::vector<std::pair<const char*, const char*>> kReleaseSchemas = {
    {kSdpa,
     "aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
     "float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor"},
    {kRmsNorm, "aten::rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor"},
};

TEST_CASE("a newer operator the dispatcher lacks is registered, once, with the newer release's schema") {
  const auto& table = onnxport::core::newer_operators();
  REQUIRE(table.size() == kReleaseSchemas.size());
  std::vector<bool> had;
  for (const auto& [name, schema] : kReleaseSchemas) {
    had.push_back(dispatcher_has(name));
    // On libtorch 1.13 the operators must be missing before: else this test would check nothing there.
    if (onnxport::core::torch_release::kMajor < 2) REQUIRE_FALSE(had.back());
  }

  const auto& statuses = onnxport::core::register_newer_operators_once();
  REQUIRE(statuses.size() == table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    const auto& [name, release_schema] = kReleaseSchemas[i];
    INFO(name);
    CHECK(statuses[i].op == name);
    CHECK(statuses[i].outcome == (had[i] ? Outcome::Known : Outcome::Registered));
    // The dispatcher's schema is the release's, to TorchScript too.
    auto handle = c10::Dispatcher::singleton().findSchema({name, ""});
    REQUIRE(handle.has_value());
    CHECK(c10::toString(handle->schema()) == c10::toString(torch::jit::parseSchema(release_schema)));
    CHECK(torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(name)).size() == 1);
  }

  // Later calls register nothing more.
  const auto again = onnxport::core::register_newer_operators(table);
  REQUIRE(again.size() == table.size());
  for (const auto& status : again) CHECK(status.outcome == Outcome::Known);
  for (const auto& [name, schema] : kReleaseSchemas)
    CHECK(torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(name)).size() == 1);
}

// Through the dispatcher, as a loaded file calls it: onnxport's kernel on libtorch 1.13.
TEST_CASE("TorchScript compiles the calls newer releases write") {
  onnxport::core::register_newer_operators_once();
  // 2.0 (no scale, no enable_gqa), 2.1 (scale), 2.5 (enable_gqa), positional and keyword forms.
  auto unit = torch::jit::compile(R"(
def v20(q, k, v, mask):
    return torch.scaled_dot_product_attention(q, k, v, mask, 0., False)
def v21(q, k, v):
    return torch.scaled_dot_product_attention(q, k, v, None, 0., True, scale=0.5)
def v25(q, k, v):
    return torch.scaled_dot_product_attention(q, k, v, is_causal=False, scale=None, enable_gqa=True)
)");
  at::manual_seed(1);
  const at::Tensor q = at::randn({2, 4, 5, 8}, at::kDouble), k = at::randn({2, 4, 5, 8}, at::kDouble),
                   v = at::randn({2, 4, 5, 8}, at::kDouble), mask = at::randn({5, 5}, at::kDouble);
  const double scale = 1.0 / std::sqrt(8.0);
  check_close(unit->run_method("v20", q, k, v, mask).toTensor(), reference(q, k, v, mask, scale));
  check_close(unit->run_method("v21", q, k, v).toTensor(),
              reference(q, k, v, minus_inf_where_not(at::ones({5, 5}, at::kBool).tril()), 0.5));
  const at::Tensor k2 = k.narrow(1, 0, 2), v2 = v.narrow(1, 0, 2);
  check_close(unit->run_method("v25", q, k2, v2).toTensor(),
              reference(q, k2, v2, at::zeros({}, at::kDouble), scale, 2));
}

TEST_CASE("the kernel matches attention computed with other ATen ops") {
  at::manual_seed(2);
  const at::Tensor q = at::randn({2, 6, 5, 8}, at::kDouble), k = at::randn({2, 6, 7, 8}, at::kDouble),
                   v = at::randn({2, 6, 7, 3}, at::kDouble);
  const at::Tensor none = at::zeros({}, at::kDouble);
  const double scale = 1.0 / std::sqrt(8.0);

  SUBCASE("no mask, default scale") { check_close(sdpa(q, k, v), reference(q, k, v, none, scale)); }
  SUBCASE("a given scale") { check_close(sdpa(q, k, v, {}, 0.0, false, 0.3), reference(q, k, v, none, 0.3)); }
  SUBCASE("a bool mask keeps where true") {
    at::Tensor keep = at::rand({2, 1, 5, 7}) > 0.5;
    keep.select(-1, 0).fill_(true);
    check_close(sdpa(q, k, v, keep), reference(q, k, v, minus_inf_where_not(keep), scale));
  }
  SUBCASE("a query whose keys are all masked out gives zeros, as PyTorch 2.5 on does") {
    at::Tensor keep = at::rand({2, 1, 5, 7}) > 0.5;
    keep.select(-1, 0).fill_(true);
    keep.select(-2, 3).fill_(false);
    at::Tensor want = reference(q, k, v, minus_inf_where_not(keep), scale);
    want.select(-2, 3).zero_();
    check_close(sdpa(q, k, v, keep), want);
    const at::Tensor bias = minus_inf_where_not(keep);
    check_close(sdpa(q, k, v, bias), want);
  }
  SUBCASE("a float mask is added") {
    const at::Tensor bias = at::randn({5, 7}, at::kDouble);
    check_close(sdpa(q, k, v, bias), reference(q, k, v, bias, scale));
  }
  SUBCASE("is_causal keeps key j for query i when j <= i, also with more keys than queries") {
    const at::Tensor above = at::ones({5, 7}, at::kBool).triu(1);
    check_close(sdpa(q, k, v, {}, 0.0, true), reference(q, k, v, minus_inf_where_not(above.logical_not()), scale));
  }
  SUBCASE("enable_gqa spreads each key/value head over its group of query heads") {
    const at::Tensor k3 = k.narrow(1, 0, 3), v3 = v.narrow(1, 0, 3);
    check_close(sdpa(q, k3, v3, {}, 0.0, false, {}, true), reference(q, k3, v3, none, scale, 2));
    CHECK_THROWS_WITH_AS(sdpa(q, k.narrow(1, 0, 4), v.narrow(1, 0, 4), {}, 0.0, false, {}, true),
                         doctest::Contains("heads"), c10::Error);
  }
  SUBCASE("dropout is refused, and a mask with is_causal") {
    CHECK_THROWS_WITH_AS(sdpa(q, k, v, {}, 0.1), doctest::Contains("dropout_p must be 0"), c10::Error);
    CHECK_THROWS_WITH_AS(sdpa(q, k, v, at::ones({5, 7}, at::kBool), 0.0, true), doctest::Contains("is_causal"),
                         c10::Error);
  }
}

// RMSNorm written another way: the root of the mean square as a norm over the flattened trailing dims.
at::Tensor rms_reference(const at::Tensor& x, int64_t k, const at::Tensor& weight, double eps) {
  std::vector<int64_t> rows(x.sizes().begin(), x.sizes().end() - k);
  rows.push_back(-1);
  const at::Tensor flat = x.reshape(rows);
  const at::Tensor rms = (flat.norm(2, {-1}, true).pow(2) / flat.size(-1) + eps).sqrt();
  return (flat / rms).reshape(x.sizes()) * weight;
}

TEST_CASE("aten::rms_norm: TorchScript's calls and the kernel match RMSNorm computed another way") {
  onnxport::core::register_newer_operators_once();
  auto unit = torch::jit::compile(R"(
def given_eps(x, w):
    return torch.rms_norm(x, [3, 4], w, 0.25)
def default_eps(x):
    return torch.rms_norm(x, [4])
)");
  at::manual_seed(3);
  const at::Tensor x = at::randn({2, 5, 3, 4}, at::kDouble) * 1e-4, w = at::randn({3, 4}, at::kDouble);
  check_close(unit->run_method("given_eps", x, w).toTensor(), rms_reference(x, 2, w, 0.25));
  check_close(unit->run_method("default_eps", x).toTensor(),
              rms_reference(x, 1, at::ones({4}, at::kDouble), std::numeric_limits<double>::epsilon()));
  // The default eps is float's for float32 (PyTorch computes float32 in float32): at 1e-4 it shows.
  const at::Tensor small = at::full({1, 4}, 1e-4, at::kFloat);
  const at::Tensor got = onnxport::core::rms_norm(small, {4}, {}, {});
  const double want = 1e-4 / std::sqrt(1e-8 + std::numeric_limits<float>::epsilon());
  CHECK(std::abs(got[0][0].item<double>() - want) < 1e-5 * want);
  CHECK_THROWS_WITH_AS(onnxport::core::rms_norm(x, {5}, {}, {}), doctest::Contains("trailing dims"), c10::Error);
}

namespace {
torch::CppFunction zeros_kernel() {
  return torch::CppFunction([](const at::Tensor& self) { return at::zeros_like(self); });
}
torch::CppFunction unused_list_kernel() {
  return torch::CppFunction([](const at::Tensor& self) { return self; });
}
}  // namespace

TEST_CASE("an operator libtorch or TorchScript already knows is left alone") {
  const std::vector<NewerOperator> table = {
      {"aten::relu(Tensor self) -> Tensor", "0.0", zeros_kernel},
      {"aten::relu(Tensor self, Tensor other) -> Tensor", "0.0", zeros_kernel},
      // TorchScript's own operator, unknown to the dispatcher.
      {"aten::len.t(Tensor self) -> Tensor", "0.0", unused_list_kernel},
  };
  REQUIRE_FALSE(dispatcher_has("aten::len", "t"));
  const auto statuses = onnxport::core::register_newer_operators(table);
  REQUIRE(statuses.size() == 3);
  CHECK(statuses[0].outcome == Outcome::Known);
  CHECK(statuses[1].outcome == Outcome::KnownDifferently);
  CHECK(statuses[1].known_schema == "aten::relu(Tensor self) -> Tensor");
  CHECK(statuses[2].outcome == Outcome::Known);
  CHECK_FALSE(dispatcher_has("aten::len", "t"));
  const at::Tensor x = at::arange(-2.0, 3.0);
  CHECK(at::relu(x).equal(x.clamp_min(0)));  // still libtorch's kernel
}
