#pragma once
// One export, top to bottom: load → prepare → resolve → convert → prove dynamic axes →
// ONNX passes → write → check. Each stage is a function in its own file (load.cpp, prepare.cpp,
// resolve.cpp, convert.cpp, prove_dynamic_axes.cpp, passes.cpp, model_writer.cpp,
// model_check.cpp); the pipeline runs them in order, times each by name and fills the report.
// Exporter::export_file, export_module and export_function all enter here.
#include <chrono>
#include <functional>
#include <string>

#include "load.h"
#include "onnx_io.h"
#include "per_node.h"
#include "onnxport/export.h"
#include "onnxport/registry/registry.h"

namespace onnxport::core {

class Pipeline {
 public:
  // `report` is filled as the stages run, so that it tells how far a failed export got.
  Pipeline(const Registry& registry, const ExportOptions& options, std::string model_file, std::string output_path,
           ExportReport& report, ProgressCallback progress = {});

  // `load` is the load stage for this kind of source (a file, a module, a traced function).
  ExportReport run(const std::function<LoadedModel()>& load);

  // Makes run() stop after the ONNX passes, nothing written: it records libtorch's value of
  // every TorchScript value the conversion turned into an ONNX value into `reference`.
  void record_reference_only(TorchReference& reference) { reference_ = &reference; }

 private:
  // Runs one stage, recording its wall time and the process's peak RSS when it ends.
  template <class Stage>
  auto timed(const char* name, Stage&& stage) -> decltype(stage());
  // The output and external data paths against the file system and this export's inputs.
  void check_output_paths() const;
  ModelMeta model_meta_for(const OnnxModel& model);
  void check_written_file(onnx::ModelProto structure);

  const Registry& registry_;
  const ExportOptions& options_;
  const std::string model_file_;
  const std::string output_path_;
  ExportReport& report_;
  ProgressCallback progress_;
  TorchReference* reference_ = nullptr;
};

}  // namespace onnxport::core
