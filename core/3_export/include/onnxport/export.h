#pragma once
// onnxport's C++ API: export a TorchScript file, a loaded torch::jit::Module, or a traced
// C++ callable to ONNX, in-process. The CLI is a thin layer over this.
#include <torch/script.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "onnxport/export_report.h"
#include "onnxport/options.h"

namespace onnxport {

class Registry;
class PackLoader;

// Holds the loaded op packs; reuse one Exporter for many exports.
class Exporter {
 public:
  explicit Exporter(const std::vector<std::string>& plugin_dirs = {}, bool load_builtin = true);
  ~Exporter();

  // Load a .pt file and export it. Inputs come from options.inputs (random or .npy) when
  // `example_inputs` is empty.
  ExportReport export_file(const std::string& model_path, const std::string& output_path, const ExportOptions& options,
                           std::vector<torch::jit::IValue> example_inputs = {});
  // Export an already loaded module (it is not modified: a frozen copy is converted).
  ExportReport export_module(const torch::jit::Module& module, std::vector<torch::jit::IValue> example_inputs,
                             const std::string& output_path, const ExportOptions& options);
  // Export a module the caller hands over and will not use again (one it traced for this
  // export, on `example_inputs`): it is frozen in place, without the copy of every parameter the
  // overload above makes, and a graph without control flow keeps the types its trace recorded
  // instead of running once more to record them. Its parameter and buffer tensors, which the
  // caller's own module may share, keep their values and requires_grad.
  ExportReport export_module(torch::jit::Module&& module, std::vector<torch::jit::IValue> example_inputs,
                             const std::string& output_path, const ExportOptions& options);
  // Trace a C++ callable (e.g. a torch::nn C++-frontend module's forward) and export the trace.
  ExportReport export_function(const std::function<torch::jit::IValue(std::vector<torch::jit::IValue>)>& fn,
                               std::vector<torch::jit::IValue> example_inputs, const std::string& output_path,
                               const ExportOptions& options,
                               const std::map<std::string, at::Tensor>& named_parameters = {});

  // Called as each export enters a stage and as it writes parameter bytes (from the exporting
  // thread); empty: no calls.
  void set_progress_callback(ProgressCallback callback) { progress_ = std::move(callback); }

  Registry& registry();
  const PackLoader& loader() const;
  // The last export's report; after a failed export, as far as it got (the failed stage last,
  // marked failed).
  const ExportReport& last_report() const { return last_report_; }

 private:
  std::unique_ptr<Registry> registry_;
  std::unique_ptr<PackLoader> loader_;
  ProgressCallback progress_;
  ExportReport last_report_;
};

// Loads a library that registers custom torch ops (TORCH_LIBRARY), e.g. a vendor's kernels or
// torchvision's, so that models using them can be loaded. Throws ModelError naming the file.
void load_op_library(const std::string& path);

// Builds example inputs from specs ("NAME:1x3x224x224:float32" or "NAME=file.npy").
std::vector<torch::jit::IValue> make_example_inputs(const std::vector<InputSpec>& specs, uint64_t seed = 0);

}  // namespace onnxport
