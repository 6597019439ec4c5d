// `onnxport run`: any bytes, as an .onnx file, must compute or throw onnxport::Error; inputs are
// drawn from the declared types. The evaluator's memory limit is lowered to 64 MiB so that a
// file asking for a large tensor is refused quickly instead of filling the fuzzer's memory, and
// a Loop stops after 10,000 iterations (a Loop of 2^48 trips is a slow file, not a hang to find).
#include "2_eval/kernel.h"
#include "fuzz_support.h"
#include "onnxport/errors.h"
#include "onnxport/run_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool limited = (onnxport::core::eval::set_evaluator_memory_limit(int64_t{64} << 20),
                               onnxport::core::eval::set_evaluator_loop_limit(10000), true);
  (void)limited;
  try {
    onnxport::run_onnx_file(onnxport::fuzz::file_with(data, size), onnxport::RunOptions{});
  } catch (const onnxport::Error&) {
  }
  return 0;
}
