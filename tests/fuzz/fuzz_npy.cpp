// .npy example inputs: any bytes must read as a tensor or throw onnxport::Error naming the file.
#include "fuzz_support.h"
#include "1_base/npy.h"
#include "onnxport/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    onnxport::core::read_npy(onnxport::fuzz::file_with(data, size));
  } catch (const onnxport::Error&) {
  }
  return 0;
}
