// The export flags that take text (--dynamic-axes above all): the first byte picks the flag,
// the rest (split at newlines) are its values. Any text must be accepted or throw onnxport::Error.
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "onnxport/errors.h"
#include "onnxport/option_table.h"

namespace {
const char* const kFlags[] = {"--dynamic-axes", "--input",        "--input-names", "--output-names",
                              "--opset",        "--custom-opset", "--training",    "--operator-export-type",
                              "--seed",         "--mode",         "--external-data"};
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string flag = kFlags[data[0] % (sizeof kFlags / sizeof kFlags[0])];
  std::vector<std::string> values;
  std::string rest = onnxport::fuzz::text(data + 1, size - 1);
  for (size_t start = 0; start <= rest.size();) {
    const size_t end = std::min(rest.find('\n', start), rest.size());
    values.push_back(rest.substr(start, end - start));
    start = end + 1;
  }
  try {
    onnxport::resolve_export_options("", {onnxport::GivenFlag{flag, values}});
  } catch (const onnxport::Error&) {
  }
  return 0;
}
