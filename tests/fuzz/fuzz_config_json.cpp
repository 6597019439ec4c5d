// --config files: any bytes must load or throw onnxport::Error naming the file.
#include "fuzz_support.h"
#include "onnxport/errors.h"
#include "onnxport/options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onnxport::ExportOptions options;
  try {
    onnxport::load_config_file(onnxport::fuzz::file_with(data, size), options);
    options.validate();
  } catch (const onnxport::Error&) {
  }
  return 0;
}
