// freeze_straight_line_forward (straight_line_freeze.h) on TorchScript modules defined in the
// test: which forwards it freezes itself, that their module reads become the module's own
// tensors and values as constants, and that it leaves every other forward, untouched, to
// libtorch's freeze_module. Also TransposesAhead's pause, which prepare sets while the model runs.
#include "doctest_torch.h"  // before any libtorch header

#include <chrono>
#include <thread>

#include "2_eval/transposes_ahead.h"
#include "3_export/2_prepare/straight_line_freeze.h"
#include "3_export/2_prepare/torch_graph.h"
#include "transposes_support.h"

using namespace onnxport::core;
using onnxport::core_test::wait_made;

namespace {

std::shared_ptr<torch::jit::Graph> inlined_forward(torch::jit::Module& m) {
  auto graph = m.get_method("forward").graph();
  inline_calls(*graph);
  return graph;
}

size_t count_kind(const torch::jit::Block* block, c10::Symbol kind) {
  size_t n = 0;
  for (const auto* node : block->nodes()) {
    n += node->kind() == kind;
    for (const auto* sub : node->blocks()) n += count_kind(sub, kind);
  }
  return n;
}

std::vector<at::Tensor> tensor_constants(const torch::jit::Graph& graph) {
  std::vector<at::Tensor> tensors;
  for (const auto* n : graph.nodes())
    if (n->kind() == c10::prim::Constant && n->output()->type()->kind() == c10::TypeKind::TensorType)
      tensors.push_back(torch::jit::toIValue(n->output())->toTensor());
  return tensors;
}

// A module with a sub-module, so that forward reads through a chain of attributes.
torch::jit::Module module_with_child(const std::string& child_forward, const std::string& forward) {
  torch::jit::Module child("Child");
  child.register_parameter("weight", at::randn({4, 3}), false);
  child.register_buffer("steps", at::zeros({1}));
  child.register_attribute("scale", c10::IntType::get(), 3);
  child.define(child_forward);
  torch::jit::Module m("Parent");
  m.register_module("child", child);
  m.define(forward);
  return m;
}

}  // namespace

TEST_CASE("a straight-line forward's module reads become constants holding the module's own tensors") {
  auto m = module_with_child(R"(
def forward(self, x):
    return torch.linear(x, self.weight, None) * self.scale
)",
                             R"(
def forward(self, x):
    return self.child.forward(x) + torch.linear(x, self.child.weight, None)
)");
  const at::Tensor weight = m.attr("child").toModule().attr("weight").toTensor();
  auto graph = inlined_forward(m);
  REQUIRE(freeze_straight_line_forward(graph, m));
  CHECK(count_kind(graph->block(), c10::prim::GetAttr) == 0);
  CHECK_FALSE(graph->inputs()[0]->hasUses());
  // The weight, read by both Linears: the module's tensor itself, not a copy.
  const auto tensors = tensor_constants(*graph);
  REQUIRE_FALSE(tensors.empty());
  for (const at::Tensor& t : tensors) CHECK(t.data_ptr() == weight.data_ptr());
  // The frozen graph computes what the module does.
  const at::Tensor x = at::randn({2, 3});
  torch::jit::Stack stack{m._ivalue(), x};
  run_graph(graph, stack);
  CHECK(stack.back().toTensor().allclose(at::linear(x, weight) * 3 + at::linear(x, weight)));
}

TEST_CASE("freezing a straight-line forward removes aten::detach, as freeze_module does") {
  auto m = module_with_child(R"(
def forward(self, x):
    return torch.linear(x, self.weight, None)
)",
                             R"(
def forward(self, x):
    return self.child.forward(x).detach()
)");
  auto graph = inlined_forward(m);
  REQUIRE(count_kind(graph->block(), c10::aten::detach) == 1);
  REQUIRE(freeze_straight_line_forward(graph, m));
  CHECK(count_kind(graph->block(), c10::aten::detach) == 0);
}

TEST_CASE("a forward that writes a module tensor, or a view of one, is left to freeze_module") {
  const std::string child = R"(
def forward(self, x):
    return torch.linear(x, self.weight, None)
)";
  const char* writers[] = {R"(
def forward(self, x):
    self.child.steps.add_(1)
    return self.child.forward(x)
)",
                           R"(
def forward(self, x):
    self.child.steps[0].fill_(2.0)
    return self.child.forward(x)
)",
                           R"(
def forward(self, x):
    w = self.child.weight.view(12)
    w.mul_(2.0)
    return self.child.forward(x)
)"};
  for (const char* forward : writers) {
    CAPTURE(forward);
    auto m = module_with_child(child, forward);
    auto graph = inlined_forward(m);
    const size_t reads = count_kind(graph->block(), c10::prim::GetAttr);
    CHECK_FALSE(freeze_straight_line_forward(graph, m));
    CHECK(count_kind(graph->block(), c10::prim::GetAttr) == reads);  // untouched
  }
}

TEST_CASE("a forward with control flow, or one that hands a module on, is left to freeze_module") {
  const std::string child = R"(
def forward(self, x):
    return torch.linear(x, self.weight, None)
)";
  const char* others[] = {R"(
def forward(self, x):
    if bool(x.sum() > 0):
        x = x * 2
    return self.child.forward(x)
)",
                          R"(
def forward(self, x):
    return self.child
)"};
  for (const char* forward : others) {
    CAPTURE(forward);
    auto m = module_with_child(child, forward);
    auto graph = inlined_forward(m);
    const std::string before = graph->toString();
    CHECK_FALSE(freeze_straight_line_forward(graph, m));
    CHECK(graph->toString() == before);
  }
}

TEST_CASE("a transpose taken while the worker is paused is not waited for forever, and none is given twice") {
  if (std::thread::hardware_concurrency() < 2) return;  // TransposesAhead starts nothing on one core
  std::vector<at::Tensor> weights;
  for (int i = 0; i < 8; ++i) weights.push_back(at::randn({64, 32}));
  TransposesAhead ahead(weights, size_t{1} << 30);
  ahead.pause(true);
  for (const at::Tensor& w : weights) {
    // The worker's copy, or nothing when it had not begun that one (the caller makes it).
    if (const auto copy = ahead.take(w)) CHECK(copy->equal(w.t().contiguous()));
    CHECK_FALSE(ahead.take(w).has_value());
  }
}

TEST_CASE("the copies made ahead and not yet taken stay within their byte limit") {
  if (std::thread::hardware_concurrency() < 2) return;
  std::vector<at::Tensor> weights;
  for (int i = 0; i < 6; ++i) weights.push_back(at::randn({256, 256}));  // 256 KiB each
  TransposesAhead ahead(weights, 2 * weights[0].nbytes());
  REQUIRE(wait_made(ahead, 2));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // time to make a third, were it allowed
  CHECK(ahead.made() == 2);
  // Taken in the worker's order: the first two are its copies (it begins the next as room frees).
  size_t given = 0;
  for (const at::Tensor& w : weights)
    if (const auto copy = ahead.take(w)) {
      ++given;
      CHECK(copy->equal(w.t().contiguous()));
    }
  CHECK(given >= 2);
  // Taken in reverse: those not begun are left to the caller, and nothing waits forever.
  TransposesAhead reverse(weights, 2 * weights[0].nbytes());
  REQUIRE(wait_made(reverse, 2));
  size_t made_ahead = 0;
  for (auto w = weights.rbegin(); w != weights.rend(); ++w) made_ahead += reverse.take(*w).has_value();
  CHECK(made_ahead == 2);
}

TEST_CASE("a source is let go once its transpose is asked for") {
  if (std::thread::hardware_concurrency() < 2) return;
  const at::Tensor made_ahead = at::randn({16, 8}), left = at::randn({8, 16});
  TransposesAhead ahead({made_ahead, left}, made_ahead.nbytes());  // room for the first only
  REQUIRE(wait_made(ahead, 1));
  CHECK(made_ahead.use_count() == 2);  // this test's and the worker's
  CHECK(left.use_count() == 2);
  // Asked for while the first copy fills the room: not begun, so the caller makes it.
  CHECK_FALSE(ahead.take(left).has_value());
  CHECK(left.use_count() == 1);
  CHECK(ahead.take(made_ahead).has_value());
  CHECK(made_ahead.use_count() == 1);
}
