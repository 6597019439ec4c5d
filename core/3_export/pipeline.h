#pragma once
// One export, top to bottom: load → prepare → resolve → convert → prove dynamic axes →
// ONNX passes → write → check. Each stage lives in its own folder beside this file (1_load,
// 2_prepare, 3_convert, 4_prove, 5_passes, 6_write); the pipeline runs them in order, times each
// by name and fills the report. Exporter::export_file, export_module and export_function all
// enter here, and so does verification's in-memory conversion (stop_after_passes).
#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "3_export/1_load/load.h"
#include "3_export/6_write/model_writer.h"
#include "3_export/2_prepare/torch_graph.h"
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

  // The prepared TorchScript graph, which ONNX value each top-level TorchScript value became,
  // and the ONNX model after the passes (nodes and names as the written file has them).
  using AfterPasses = std::function<void(const PreparedGraph&,
                                         const std::vector<std::pair<const torch::jit::Value*, std::string>>& value_names,
                                         const OnnxModel&)>;
  // Makes run() stop after the ONNX passes, nothing written, and hand what it built to
  // `inspect`, timed as the stage `stage_name` (verification learns libtorch's values this way).
  void stop_after_passes(std::string stage_name, AfterPasses inspect) {
    after_passes_name_ = std::move(stage_name);
    after_passes_ = std::move(inspect);
  }

 private:
  // Runs one stage, recording its wall time and the process's peak RSS when it ends.
  template <class Stage>
  auto timed(const char* name, Stage&& stage) -> decltype(stage());
  // The output and external data paths against the file system and this export's inputs.
  void check_output_paths() const;
  ModelMeta model_meta_for(const OnnxModel& model);
  void check_written_file(onnx::ModelProto structure);

  const Registry& registry_;
  ExportOptions options_;  // a copy: a --state-io state's changing dims are added after prepare
  const std::string model_file_;
  const std::string output_path_;
  ExportReport& report_;
  ProgressCallback progress_;
  std::string after_passes_name_;
  AfterPasses after_passes_;
};

}  // namespace onnxport::core
