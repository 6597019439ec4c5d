#pragma once
// `onnxport verify MODEL.pt MODEL.onnx` and `export --verify`: libtorch's forward and onnxport's
// evaluator run on the same inputs; every output compared. On a mismatch (or always, with
// per_node) intermediate values are compared too, to name the first node that diverges.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onnxport/options.h"

namespace onnxport {

class Exporter;

struct VerifyOptions {
  std::vector<InputSpec> inputs;  // as export takes them; inputs not given are drawn from the ONNX types
  uint64_t seed = 0;
  // Input sets: the given (or drawn) one, then samples-1 more drawn like it with other seeds,
  // dims the ONNX graph declares dynamic grown by one per sample.
  int samples = 3;
  // Calls in a row per input set, for a file exported with --state-io: each step's state inputs
  // take what the previous step returned (the first the model file's state), as the module keeps
  // its attributes between calls; every step's outputs and states are compared.
  int steps = 1;
  double rtol = 1e-3;
  double atol = 1e-5;
  // Compare every node's value even when the outputs agree (on a mismatch it is always done).
  bool per_node = false;
  // How the ONNX file was exported (mode, opset, ...): the per-node comparison converts MODEL.pt
  // again this way, in memory, to learn which ONNX value stands for which TorchScript value.
  ExportOptions export_options;
};

// One ONNX value that stands for a TorchScript value, checked against libtorch's value of it.
struct NodeCheck {
  std::string node;      // the ONNX node's name
  std::string op_type;   // "Conv"
  std::string output;    // the ONNX value compared
  std::string type;      // its type as the evaluator computed it
  std::string torch_op;  // the TorchScript op it was converted from: "aten::_convolution"
  std::string pack;      // the op pack that converted it
  std::string module_path;
  std::string source;  // "model.py:12", when the model kept its source
  double max_abs_error = 0;
  double max_rel_error = 0;
  bool ok = false;
  std::string problem;  // a dtype/shape mismatch, when there is one
  // For a diverging value: the nodes it is computed from whose values could not be compared
  // (no TorchScript value stands for them), back to values that agree: "Add '/blocks/blocks.2/Add'
  // in module 'blocks.2'". The divergence may start in any of them.
  std::vector<std::string> uncompared_sources;
};

struct OutputCheck {
  std::string name;  // the ONNX output
  std::string type;  // "float32[1,1000]"
  double max_abs_error = 0;
  double max_rel_error = 0;  // |onnx - torch| / |torch| where |torch| > atol
  bool ok = false;
  std::string problem;  // a dtype/shape mismatch, when there is one
  // Set when PyTorch's float32 (or float16) output was off and a reference run decided (the model
  // in float64, else in float32 with oneDNN off): how far PyTorch's own output was from it, and
  // which run it was ("float64 run", "run without oneDNN"). The errors above are then the ONNX
  // output's against that run.
  std::optional<double> pytorch_off_by;
  std::string judged_by;
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
  // Per node (input set 1), in the order the graph ran; empty when not compared.
  std::vector<NodeCheck> nodes;
  int first_diverging = -1;   // index into `nodes`
  std::string per_node_note;  // why nodes were not compared, or what the comparison found
  // The export's settings verify took from the ONNX file, as their flags ("--input sr:int=16000").
  std::vector<std::string> recorded_settings;
};

// Throws ConfigError/ModelError/ExportError when the comparison cannot be made (a file, inputs
// that don't fit, an op the evaluator has no kernel for); a mismatch is a result, not an error.
// `exporter` supplies the op packs for the per-node comparison's conversion (built-in packs only
// when null).
VerifyResult verify_onnx_file(const std::string& model_path, const std::string& onnx_path, const VerifyOptions& options,
                              Exporter* exporter = nullptr);

// The result as JSON (`verify --report FILE.json`): inputs, per-output figures, the per-node table.
std::string verify_report_json(const std::string& model_path, const std::string& onnx_path, const VerifyResult& result);
// Written whole or not at all.
void write_verify_report(const std::string& path, const std::string& model_path, const std::string& onnx_path,
                         const VerifyResult& result);

}  // namespace onnxport
