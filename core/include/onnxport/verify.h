#pragma once
// `onnxport verify MODEL.pt MODEL.onnx` and `export --verify`: libtorch's forward and onnxport's
// evaluator run on the same inputs; every output compared.
#include <cstdint>
#include <string>
#include <vector>

#include "onnxport/options.h"

namespace onnxport {

struct VerifyOptions {
  std::vector<InputSpec> inputs;  // as export takes them; inputs not given are drawn from the ONNX types
  uint64_t seed = 0;
  // Input sets: the given (or drawn) one, then samples-1 more drawn like it with other seeds,
  // dims the ONNX graph declares dynamic grown by one per sample.
  int samples = 3;
  double rtol = 1e-3;
  double atol = 1e-5;
};

struct OutputCheck {
  std::string name;  // the ONNX output
  std::string type;  // "float32[1,1000]"
  double max_abs_error = 0;
  double max_rel_error = 0;  // |onnx - torch| / |torch| where |torch| > atol
  bool ok = false;
  std::string problem;  // a dtype/shape mismatch, when there is one
};

struct SampleCheck {
  std::vector<std::string> inputs;  // "x: float32[1,3,224,224] drawn (seed 1)"
  std::vector<OutputCheck> outputs;
  std::vector<std::string> unchecked;  // ONNX outputs past the model's own (--extra-outputs)
  bool ok = false;
};

struct VerifyResult {
  std::vector<SampleCheck> samples;
  bool ok = false;
  std::string verdict;  // one line
};

// Throws ConfigError/ModelError/ExportError when the comparison cannot be made (a file, inputs
// that don't fit, an op the evaluator has no kernel for); a mismatch is a result, not an error.
VerifyResult verify_onnx_file(const std::string& model_path, const std::string& onnx_path,
                              const VerifyOptions& options);

}  // namespace onnxport
