// The prepare stage (prepare.h) on TorchScript modules defined in the test: which Linear
// weights it starts transposing on the second thread before freezing, and that the frozen
// graph's Linears read exactly those tensors, so the fold pass takes the copies.
#include "doctest_torch.h"  // before any libtorch header

#include <thread>

#include "2_eval/transposes_ahead.h"
#include "3_export/2_prepare/prepare.h"
#include "transposes_support.h"

using namespace onnxport;
using namespace onnxport::core;
using onnxport::core_test::wait_made;

namespace {

// The weights the prepared graph's aten::linear nodes read as constants, in graph order.
std::vector<at::Tensor> linear_weights_read(const torch::jit::Graph& graph) {
  std::vector<at::Tensor> weights;
  for (const auto* n : graph.nodes())
    if (n->kind() == c10::aten::linear) weights.push_back(torch::jit::toIValue(n->input(1))->toTensor());
  return weights;
}

PreparedGraph prepare(const torch::jit::Module& module, const ExportOptions& options = {}) {
  LoadedModel loaded;
  loaded.module = module;
  loaded.module_owned = true;
  loaded.inputs = {at::randn({2, 3})};
  return prepare_model(std::move(loaded), options);
}

}  // namespace

TEST_CASE("prepare transposes every Linear weight the frozen graph reads, also one reached through a method call") {
  if (std::thread::hardware_concurrency() < 2) return;  // TransposesAhead starts nothing on one core
  torch::jit::Module m("LinearsModule");
  m.register_parameter("direct", at::randn({4, 3}), false);
  m.register_parameter("passed", at::randn({5, 4}), false);
  m.define(R"(
def project(self, x, w):
    return torch.linear(x, w, None)

def forward(self, x):
    return self.project(torch.linear(x, self.direct, None), self.passed)
)");
  const at::Tensor direct = m.attr("direct").toTensor();
  const at::Tensor passed = m.attr("passed").toTensor();
  const PreparedGraph p = prepare(m);
  REQUIRE(p.transposes);
  CHECK(p.transposes->started() == 2);
  const auto read = linear_weights_read(*p.graph);
  REQUIRE(read.size() == 2);
  REQUIRE(wait_made(*p.transposes, 2));
  // Started before freezing, on the tensors freezing then made constants: the fold pass's take()
  // finds each by the constant it reads.
  for (const at::Tensor& weight : read) {
    const auto copy = p.transposes->take(weight);
    REQUIRE(copy.has_value());
    CHECK(copy->equal(weight.t().contiguous()));
  }
  CHECK(read[0].data_ptr() == direct.data_ptr());
  CHECK(read[1].data_ptr() == passed.data_ptr());
  // The module was handed over: its own slots let the tensors go (the graph's constants hold
  // them), and its functions, which the inlined nodes' call stacks name, live with the graph.
  CHECK_FALSE(m.attr("direct").toTensor().defined());
  CHECK_FALSE(m.attr("passed").toTensor().defined());
  REQUIRE(p.functions);
  CHECK(p.functions.get() == m._ivalue()->compilation_unit().get());
}

TEST_CASE("prepare transposes a weight two Linears share once, and none when folding is off or in training") {
  if (std::thread::hardware_concurrency() < 2) return;
  torch::jit::Module m("TiedModule");
  m.register_parameter("weight", at::randn({3, 3}), false);
  m.define(R"(
def forward(self, x):
    return torch.linear(torch.linear(x, self.weight, None), self.weight, None)
)");
  const PreparedGraph tied = prepare(m.clone());  // handed over: prepare lets its tensors go
  REQUIRE(tied.transposes);
  CHECK(tied.transposes->started() == 1);

  ExportOptions unfolded;
  unfolded.do_constant_folding = false;
  CHECK_FALSE(prepare(m.clone(), unfolded).transposes);
  ExportOptions training;
  training.training = TrainingMode::Train;
  CHECK_FALSE(prepare(m.clone(), training).transposes);
}
