#include "3_export/pipeline.h"

#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <future>
#include <memory>

#include "3_export/1_load/load.h"
#include "3_export/3_convert/convert.h"
#include "3_export/6_write/export_settings.h"
#include "3_export/6_write/model_writer.h"
#include "3_export/6_write/type_support.h"
#include "3_export/6_write/model_check.h"
#include "1_base/graph_printer.h"
#include "onnxport/errors.h"
#include "1_base/input_file.h"
#include "1_base/intra_op_threads.h"
#include "1_base/output_file.h"
#include "3_export/5_passes/passes.h"
#include "3_export/2_prepare/prepare.h"
#include "3_export/4_prove/prove_dynamic_axes.h"
#include "3_export/3_convert/resolve.h"
#include "3_export/3_convert/schema_table.h"

namespace onnxport::core {

namespace {

size_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<size_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

ModelMeta model_meta(const ExportOptions& o) {
  ModelMeta meta;
  meta.producer_version = ONNXPORT_VERSION;
  meta.export_params = o.export_params;
  meta.keep_initializers_as_inputs = o.keep_initializers_as_inputs;
  meta.provenance_doc_strings = o.provenance;
  meta.properties = recorded_export_settings(o);
  return meta;
}

void describe_model(const OnnxModel& model, ExportReport& report) {
  report.node_count = model.nodes.size();
  report.initializer_count = model.initializers.size();
  for (const auto& init : model.initializers) report.initializer_bytes += init.tensor.nbytes();
  for (const auto& n : model.nodes) {
    ++report.op_histogram[n.proto.op_type()];
    ++report.pack_ops[n.origin.pack][n.origin.torch_op];
  }
}

size_t file_size_or_zero(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<size_t>(size);
}

}  // namespace

Pipeline::Pipeline(const Registry& registry, const ExportOptions& options, std::string model_file,
                   std::string output_path, ExportReport& report, ProgressCallback progress)
    : registry_(registry),
      options_(options),
      model_file_(std::move(model_file)),
      output_path_(std::move(output_path)),
      report_(report),
      progress_(std::move(progress)) {}

template <class Stage>
auto Pipeline::timed(const char* name, Stage&& stage) -> decltype(stage()) {
  if (progress_) progress_(ExportProgress{name, 0, 0});
  const auto start = std::chrono::steady_clock::now();
  auto record = [&](bool failed) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    report_.stages.push_back(StageReport{name, seconds, peak_rss_bytes(), failed});
  };
  try {
    if constexpr (std::is_void_v<decltype(stage())>) {
      stage();
      record(false);
    } else {
      auto result = stage();
      record(false);
      return result;
    }
  } catch (...) {
    record(true);
    throw;
  }
}

ExportReport Pipeline::run(const std::function<LoadedModel()>& load) {
  options_.validate();
  if (!after_passes_) check_output_paths();
  const DefaultDtypeScope default_dtype(options_.default_dtype);
  const IntraOpThreads threads(options_.threads);
  report_ = ExportReport{};
  report_.output_path = output_path_;
  onnx::ModelProto structure;
  std::future<void> released;  // waited for when it goes out of scope
  try {
    {
      SchemaTableBuild schema_table;
      LoadedModel loaded = timed("load", load);
      auto prepared = std::make_unique<const PreparedGraph>(
          timed("prepare", [&] { return prepare_model(std::move(loaded), options_); }));
      if (!prepared->state_dynamic_axes.empty()) options_ = with_state_dynamic_axes(options_, *prepared);
      schema_table.wait();
      const Resolution resolution =
          timed("resolve", [&] { return resolve_ops(*prepared->graph, registry_, options_, model_file_); });
      const ConvertContext ctx{resolution, options_, model_file_,
                               graph_input_names(options_, prepared->input_names, prepared->graph->inputs().size()),
                               options_.provenance || options_.verbose || static_cast<bool>(after_passes_)};
      OnnxModel model;
      const ConvertStats converted = timed("convert", [&] { return convert_to_onnx(*prepared, ctx, model); });
      const DynamicAxesProof proof = timed("prove dynamic axes", [&] {
        return prove_dynamic_axes(*prepared, converted.value_names, model, options_, model_file_);
      });
      report_.dynamic_checks = proof.runs;
      if (after_passes_) {  // the passes too, so that nodes and names are the written file's
        timed("onnx passes", [&] { return run_onnx_passes(model, options_, ParameterBytes{prepared->transposes.get()}); });
        timed(after_passes_name_.c_str(), [&] { after_passes_(*prepared, converted.value_names, model); });
        return report_;
      }
      report_.extra_outputs = converted.extra_outputs;
      report_.mode = prepared->from_program ? "program" : prepared->scripted ? "script" : "trace";
      report_.mode_reason = prepared->mode_reason;
      report_.warnings = prepared->warnings;
      for (const auto* more : {&converted.warnings, &proof.warnings})
        report_.warnings.insert(report_.warnings.end(), more->begin(), more->end());
      // From here the ONNX model alone holds the parameters, so a folded copy (a transposed
      // weight) replaces its original instead of sitting beside it.
      std::shared_ptr<TransposesAhead> transposes = prepared->transposes;
      const bool parameters_private = prepared->parameters_private;
      prepared.reset();
      report_.pass_results =
          timed("onnx passes", [&] {
            return run_onnx_passes(model, options_, ParameterBytes{transposes.get(), parameters_private});
          }).summary();
      transposes.reset();  // the copies no fold took
      refuse_bfloat16_where_onnx_has_none(model, model_file_);
      const ModelMeta meta = model_meta_for(model);
      WriteProgress bytes_written;
      if (progress_)
        bytes_written = [this](size_t done, size_t total) { progress_(ExportProgress{"write", done, total}); };
      const WriteResult written = timed("write", [&] { return write_model(model, meta, output_path_, bytes_written); });
      report_.external_data_path = written.data_path;

      report_.fallback_ops = converted.fallback_ops;
      report_.core_ops = converted.core_ops;
      report_.unchecked_ops = converted.unchecked_ops;
      describe_model(model, report_);
      if (options_.verbose) report_.graph_text = print_graph(build_model_proto(model, meta, true), &model);
      // The checker sees the structure, with initializers pointing at where their bytes were
      // written: no parameter is read back or copied.
      if (options_.check) {
        structure = build_model_proto(model, meta, true);
        place_initializer_data(structure, written.payload, model);
      }
      // Freed on another thread while the check runs (swin_t's parameters: 0.013 s).
      released =
          std::async(std::launch::async, [gone = std::move(model)]() mutable { OnnxModel freed = std::move(gone); });
    }
    report_.file_bytes = file_size_or_zero(output_path_);
    if (!report_.external_data_path.empty())
      report_.external_data_bytes = file_size_or_zero(report_.external_data_path);
    if (options_.check) {
      timed("check", [&] { check_written_file(std::move(structure)); });
      report_.checker = "ok";
    }
  } catch (Error& e) {
    e.add_context(ErrorContext::for_file(model_file_));
    throw;
  }
  return report_;
}

void Pipeline::check_output_paths() const {
  std::vector<std::string> inputs{model_file_};
  for (const auto& spec : options_.inputs)
    if (!spec.npy_file.empty()) inputs.push_back(spec.npy_file);
  check_output_path(output_path_, inputs);
  if (!options_.external_data) return;
  const std::string data =
      external_data_path(output_path_, options_.external_data_file.empty() ? default_external_data_file(output_path_)
                                                                           : options_.external_data_file);
  if (data == external_data_path(output_path_, file_name_of(output_path_)) || same_file(data, output_path_))
    throw ConfigError(
        "--external-data '" + options_.external_data_file + "' is the output model itself",
        ErrorContext::with_hint("give the data file another name, e.g. " + default_external_data_file(output_path_)));
  check_output_path(data, inputs, "the external data file");
}

ModelMeta Pipeline::model_meta_for(const OnnxModel& model) {
  ModelMeta meta = model_meta(options_);
  if (options_.external_data)
    meta.external_data_file =
        options_.external_data_file.empty() ? default_external_data_file(output_path_) : options_.external_data_file;
  if (meta.external_data_file.empty() && needs_external_data(model, meta)) {
    meta.external_data_file = default_external_data_file(output_path_);
    report_.notes.push_back("the parameters take the model past protobuf's 2 GiB limit: they are written to " +
                            meta.external_data_file + " beside it (ONNX external data)");
  }
  return meta;
}

void Pipeline::check_written_file(onnx::ModelProto structure) {
  try {
    check_model_structure(std::move(structure), directory_of(output_path_), output_path_);
  } catch (Error& e) {
    std::remove(output_path_.c_str());
    if (!report_.external_data_path.empty()) std::remove(report_.external_data_path.c_str());
    e.add_context(ErrorContext::for_file(model_file_, "this is an onnxport bug; --no-check writes the file anyway"));
    throw;
  }
}

}  // namespace onnxport::core
