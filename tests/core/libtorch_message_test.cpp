// libtorch_error_line: the one line of a libtorch exception that says what went wrong, read from
// the text this libtorch really writes.
#include <doctest/doctest.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/frontend/ir_emitter.h>
#include <torch/torch.h>

#include "1_base/libtorch_message.h"

using onnxport::core::libtorch_error_line;

namespace {

std::string error_of_running(const std::string& code, const at::Tensor& x) {
  auto unit = torch::jit::compile(code);
  try {
    unit->get_function("f")({x});
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("an error inside the TorchScript interpreter is the op's own error, not the report's first line") {
  const std::string text = error_of_running(R"(
def g(x):
    return x.view(-1, 7)

def f(x):
    return g(x) + 1
)",
                                            torch::ones({6}));
  REQUIRE(text.find("The following operation failed in the TorchScript interpreter") != std::string::npos);
  const std::string line = libtorch_error_line(text);
  CHECK(line.find("shape '[-1, 7]' is invalid for input of size 6") != std::string::npos);
  CHECK(line.find('\n') == std::string::npos);
}

TEST_CASE("any other message gives its first line") {
  CHECK(libtorch_error_line("\n  Unknown builtin op: aten::foo.\nHere are some suggestions:\n\taten::bar\n") ==
        "Unknown builtin op: aten::foo.");
  CHECK(libtorch_error_line("one line") == "one line");
  CHECK(libtorch_error_line("") == "");
}
