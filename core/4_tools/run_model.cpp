// onnxport run: inputs from .npy files or drawn, the evaluator, outputs to .npy files.
#include "onnxport/run_model.h"

#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>

#include "2_eval/evaluator.h"
#include "2_eval/pack_kernels.h"
#include "4_tools/model_inputs.h"
#include "1_base/npy.h"
#include "3_export/6_write/model_check.h"
#include "onnxport/errors.h"
#include "onnxport/export.h"
#include "1_base/output_file.h"
#include "3_export/2_prepare/torch_graph.h"

namespace onnxport {

namespace {

using core::eval::EvalValue;

std::string summary_of(const at::Tensor& t) {
  if (t.numel() == 0) return "";
  std::ostringstream s;
  if (t.scalar_type() == at::kBool) {
    s << t.sum().item<int64_t>() << " of " << t.numel() << " true";
  } else if (at::isComplexType(t.scalar_type())) {
    s << "max |z| " << t.abs().max().item<double>();
  } else {
    const auto d = t.to(at::kDouble);
    s << "min " << d.min().item<double>() << ", max " << d.max().item<double>() << ", mean " << d.mean().item<double>();
  }
  return s.str();
}

// A file name for an output: ONNX names may hold '/' or ':'.
std::string file_stem(const std::string& name) {
  std::string stem;
  for (char c : name) stem += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ? c : '_';
  while (!stem.empty() && stem.front() == '.') stem.erase(stem.begin());
  return stem.empty() ? "output" : stem;
}

}  // namespace

RunResult run_onnx_file(const std::string& path, const RunOptions& options, Exporter* packs) {
  if (!options.output_dir.empty() && !std::filesystem::is_directory(options.output_dir))
    throw ConfigError("-o '" + options.output_dir + "' is not a directory",
                      ErrorContext::with_hint("create it first, or give an existing directory"));
  const onnx::ModelProto model = core::read_model_file(path);
  RunResult result;
  try {
    std::unique_ptr<Exporter> builtin;
    if (!packs) packs = (builtin = std::make_unique<Exporter>()).get();
    core::eval::ModelEvaluator evaluator(model, core::directory_of(path), core::eval::pack_kernels(packs->registry()));
    evaluator.check_supported();
    const core::ModelInputs given =
        core::inputs_for_model(model.graph(), evaluator.input_names(), options.inputs, options.seed);
    result.inputs = given.described;
    const auto feeds = core::as_onnx_inputs(given.tensors);
    const std::vector<EvalValue> inputs(feeds.begin(), feeds.end());
    const auto start = std::chrono::steady_clock::now();
    const auto outputs = evaluator.run(inputs);
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::vector<std::unique_ptr<core::OutputFile>> files;
    std::map<std::string, int> stems;
    auto add_file = [&](RunOutput& out, const std::string& stem, const at::Tensor& t) {
      if (options.output_dir.empty()) return;
      std::string unique = stem;
      if (int n = stems[stem]++; n > 0) unique += "_" + std::to_string(n);
      const std::string file = (std::filesystem::path(options.output_dir) / (unique + ".npy")).string();
      files.push_back(std::make_unique<core::OutputFile>(file));
      core::write_npy(core::borrow_tensor(t.contiguous()), files.back()->stream());
      files.back()->finish();
      out.files.push_back(file);
    };
    for (size_t k = 0; k < outputs.size(); ++k) {
      RunOutput out;
      out.name = evaluator.output_names()[k];
      const std::string stem = file_stem(out.name);
      if (outputs[k].is_sequence()) {
        const auto& items = *outputs[k].sequence;
        out.type = "sequence of " + std::to_string(items.size());
        for (size_t i = 0; i < items.size(); ++i) {
          out.type += (i ? ", " : ": ") + core::tensor_type_text(items[i]);
          add_file(out, stem + "." + std::to_string(i), items[i]);
        }
      } else if (!outputs[k].present()) {
        out.type = "None (an optional holding nothing)";  // no file: .npy has no None
      } else {
        out.type = core::tensor_type_text(outputs[k].tensor);
        out.summary = summary_of(outputs[k].tensor);
        add_file(out, stem, outputs[k].tensor);
      }
      result.outputs.push_back(std::move(out));
    }
    std::vector<core::OutputFile*> all;
    for (auto& f : files) all.push_back(f.get());
    if (!all.empty()) core::OutputFile::commit_all(all);
  } catch (const core::eval::EvalError& e) {
    throw ExportError(std::string("running '") + path + "': " + e.what(),
                      ErrorContext::with_hint("onnxport cannot evaluate this; ONNX Runtime may run it"));
  }
  return result;
}

}  // namespace onnxport
