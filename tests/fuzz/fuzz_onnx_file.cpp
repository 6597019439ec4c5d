// The .onnx reader behind `inspect` and `check`: any bytes must print/check or throw onnxport::Error.
#include "fuzz_support.h"
#include "onnxport/errors.h"
#include "onnxport/model_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = onnxport::fuzz::file_with(data, size);
  try {
    onnxport::inspect_onnx_file(path);
  } catch (const onnxport::Error&) {
  }
  try {
    onnxport::check_onnx_file(path);
  } catch (const onnxport::Error&) {
  }
  return 0;
}
