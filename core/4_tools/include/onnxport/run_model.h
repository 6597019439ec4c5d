#pragma once
// `onnxport run`: an ONNX file computed by onnxport's own evaluator (ATen), without ONNX Runtime.
#include <cstdint>
#include <string>
#include <vector>

#include "onnxport/options.h"

namespace onnxport {

struct RunOptions {
  // Values for graph inputs by name (NAME=FILE.npy or NAME:SHAPE[:DTYPE], drawn with `seed`).
  // An input not given is drawn from its declared type when that is fully static.
  std::vector<InputSpec> inputs;
  uint64_t seed = 0;
  std::string output_dir;  // where each output goes as <name>.npy; empty: nothing is written
};

struct RunOutput {
  std::string name;
  std::string type;                // "float32[1,1000]", or "sequence of 3: float32[2,4], ..."
  std::string summary;             // "min -3.1, max 4.2, mean 0.013" (empty for empty tensors)
  std::vector<std::string> files;  // the .npy files written (one per item of a sequence)
};

struct RunResult {
  std::vector<std::string> inputs;  // "x: float32[1,3,224,224] from x.npy" / "... drawn (seed 0)"
  std::vector<RunOutput> outputs;
  double seconds = 0;  // the evaluator's run alone
};

class Exporter;

// Throws ConfigError for inputs that don't fit the model, ExportError (naming the node and op)
// for what the evaluator cannot compute; nothing is written unless every output was computed.
// `packs`: whose op packs' evaluators compute custom-domain ops (the built-in packs when null).
RunResult run_onnx_file(const std::string& path, const RunOptions& options, Exporter* packs = nullptr);

}  // namespace onnxport
