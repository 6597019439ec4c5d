// `--input` specs: NAME:SHAPE[:DTYPE] or NAME=FILE.npy. Any text must parse or throw onnxport::Error.
#include "fuzz_support.h"
#include "onnxport/errors.h"
#include "onnxport/options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    onnxport::InputSpec::parse(onnxport::fuzz::text(data, size));
  } catch (const onnxport::Error&) {
  }
  return 0;
}
