#include "1_base/libtorch_message.h"

namespace onnxport::core {

std::string libtorch_error_line(const std::string& text) {
  const bool interpreter_report = text.find("The following operation failed in the TorchScript interpreter") !=
                                  std::string::npos;
  if (interpreter_report) {
    const auto end = text.find_last_not_of("\n ");
    if (end != std::string::npos) {
      const auto newline = text.rfind('\n', end);
      const size_t start = newline == std::string::npos ? 0 : newline + 1;
      return text.substr(start, end + 1 - start);
    }
  }
  const auto start = text.find_first_not_of("\n ");
  const std::string trimmed = text.substr(start == std::string::npos ? 0 : start);
  return trimmed.substr(0, trimmed.find('\n'));
}

}  // namespace onnxport::core
