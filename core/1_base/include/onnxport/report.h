#pragma once
// The export report (`onnxport export --report FILE.json|FILE.md`): each stage with its status,
// time and peak memory; what the graph holds and which op pack made it; warnings, notes, passes,
// the checker's verdict and file sizes; and, for a failed export, the error and the stage it
// stopped in. The JSON form is documented in docs/export-report.md.
#include <optional>
#include <string>
#include <vector>

#include "onnxport/errors.h"
#include "onnxport/export_report.h"
#include "onnxport/options.h"

namespace onnxport {

// Why an export failed, for its report.
struct ReportFailure {
  std::string kind;     // "model error", "unsupported op", ... (Error::kind)
  std::string message;  // the one-line message the CLI prints
  std::string hint;     // what to do next, when known
  static ReportFailure from(const Error& e);
};

enum class ReportFormat { Json, Markdown };
// By extension: .json or .md (ConfigError otherwise, naming the path).
ReportFormat report_format_for(const std::string& path);

struct ReportInput {
  std::string model_path;
  std::string output_path;
  const ExportReport* report = nullptr;  // as far as the export got
  const ExportOptions* options = nullptr;
  std::optional<ReportFailure> failure;
};

std::string export_report_json(const ReportInput& in);
std::string export_report_markdown(const ReportInput& in);

// Checks before any work that `path` can be written and is none of `inputs` (the model, .npy
// inputs, the config) nor the output files (ConfigError).
void check_report_path(const std::string& path, const std::vector<std::string>& inputs,
                       const std::vector<std::string>& outputs);
// Writes the report in the format its extension asks for; the file appears whole or not at all.
void write_export_report(const std::string& path, const ReportInput& in);

}  // namespace onnxport
