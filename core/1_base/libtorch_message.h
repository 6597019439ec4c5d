#pragma once
// What a libtorch exception says, in one line for onnxport's one-line errors.
#include <string>

namespace onnxport::core {

// The line of a libtorch exception's text that says what went wrong. The TorchScript interpreter's
// report ("The following operation failed in the TorchScript interpreter.", a traceback of the
// model's code, then the op's own error) ends with it; other messages start with it.
std::string libtorch_error_line(const std::string& text);

}  // namespace onnxport::core
