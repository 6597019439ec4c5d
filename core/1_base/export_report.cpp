// The export report, as JSON (schema in docs/export-report.md) or Markdown.
#include "onnxport/report.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "1_base/input_file.h"
#include "onnxport/option_table.h"
#include "1_base/output_file.h"

namespace onnxport {

namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kSchema = "onnxport-export-report/1";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string failed_stage(const ExportReport& r) {
  for (const auto& s : r.stages)
    if (s.failed) return s.name;
  return "";
}

std::string mib(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", s);
  return text;
}

// A Markdown table cell: pipes and newlines would end the cell or the row.
std::string cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += "<br>";
    else
      out += c;
  }
  return out;
}

}  // namespace

ReportFailure ReportFailure::from(const Error& e) { return ReportFailure{e.kind(), e.what(), e.context().hint}; }

ReportFormat report_format_for(const std::string& path) {
  if (ends_with(path, ".json")) return ReportFormat::Json;
  if (ends_with(path, ".md")) return ReportFormat::Markdown;
  throw ConfigError("--report '" + path + "': the report's format comes from its extension, .json or .md",
                    ErrorContext::with_hint("name the file REPORT.json (machine-readable) or REPORT.md"));
}

std::string export_report_json(const ReportInput& in) {
  const ExportReport& r = *in.report;
  Json j;
  j["schema"] = kSchema;
  j["status"] = in.failure ? "failed" : "ok";
  j["model"] = in.model_path;
  j["output"] = in.failure ? Json() : Json(in.output_path);
  if (in.failure) {
    j["error"] = {{"kind", in.failure->kind},
                  {"message", in.failure->message},
                  {"hint", in.failure->hint},
                  {"stage", failed_stage(r)}};
  } else {
    j["error"] = nullptr;
  }
  j["options"] = Json::parse(export_options_json(*in.options));
  j["mode"] = r.mode.empty() ? Json() : Json(r.mode);
  j["mode_reason"] = r.mode_reason;
  Json stages = Json::array();
  for (const auto& s : r.stages)
    stages.push_back({{"name", s.name},
                      {"status", s.failed ? "failed" : "ok"},
                      {"seconds", s.seconds},
                      {"peak_rss_bytes", s.peak_rss_bytes}});
  j["stages"] = stages;
  double total = 0;
  for (const auto& s : r.stages) total += s.seconds;
  j["total_seconds"] = total;
  j["graph"] = {{"opset", in.options->opset_version},
                {"nodes", r.node_count},
                {"initializers", r.initializer_count},
                {"initializer_bytes", r.initializer_bytes},
                {"op_histogram", r.op_histogram},
                {"ops_by_pack", r.pack_ops}};
  Json extra = Json::array();
  for (const auto& e : r.extra_outputs)
    extra.push_back({{"spec", e.spec}, {"kind", e.kind}, {"output", e.output}, {"type", e.type}});
  j["extra_outputs"] = extra;
  j["fallback_nodes"] = r.fallback_ops;
  j["core_nodes"] = r.core_ops;
  j["unchecked_nodes"] = r.unchecked_ops;
  j["passes"] = r.pass_results;
  j["dynamic_axes_checks"] = r.dynamic_checks;
  j["warnings"] = r.warnings;
  j["notes"] = r.notes;
  j["checker"] = r.checker;
  j["files"] = {{"model_bytes", r.file_bytes},
                {"external_data", r.external_data_path.empty() ? Json() : Json(r.external_data_path)},
                {"external_data_bytes", r.external_data_bytes}};
  return j.dump(2) + "\n";
}

std::string export_report_markdown(const ReportInput& in) {
  const ExportReport& r = *in.report;
  std::string md = "# onnxport export report\n\n";
  md += "- model: `" + in.model_path + "`\n";
  if (in.failure) {
    md += "- status: **failed** in stage `" + failed_stage(r) + "`\n";
    md += "- error (" + in.failure->kind + "): " + in.failure->message + "\n";
    if (!in.failure->hint.empty()) md += "- what to do: " + in.failure->hint + "\n";
  } else {
    md += "- output: `" + in.output_path + "` (" + mib(r.file_bytes) + ")";
    if (!r.external_data_path.empty())
      md += ", parameters in `" + r.external_data_path + "` (" + mib(r.external_data_bytes) + ")";
    md += "\n- status: **ok**; checker: " + r.checker + "\n";
    md += "- graph: opset " + std::to_string(in.options->opset_version) + ", " + std::to_string(r.node_count) +
          " nodes, " + std::to_string(r.initializer_count) + " initializers (" + mib(r.initializer_bytes) + ")\n";
  }
  if (!r.mode.empty()) md += "- mode: " + r.mode + (r.mode_reason.empty() ? "" : " (" + r.mode_reason + ")") + "\n";

  md += "\n## Stages\n\n| stage | status | time (s) | peak RSS |\n|---|---|---:|---:|\n";
  double total = 0;
  for (const auto& s : r.stages) {
    md += "| " + s.name + " | " + (s.failed ? "failed" : "ok") + " | " + seconds(s.seconds) + " | " +
          mib(s.peak_rss_bytes) + " |\n";
    total += s.seconds;
  }
  md += "| total | | " + seconds(total) + " | |\n";

  if (!r.pack_ops.empty()) {
    md += "\n## Nodes by op pack\n\n| op pack | torch op | ONNX nodes |\n|---|---|---:|\n";
    for (const auto& [pack, ops] : r.pack_ops)
      for (const auto& [op, n] : ops)
        md += "| " + cell(pack.empty() ? "(core)" : pack) + " | " + cell(op.empty() ? "(graph plumbing)" : op) +
              " | " + std::to_string(n) + " |\n";
  }
  if (!r.op_histogram.empty()) {
    md += "\n## ONNX ops\n\n| op | nodes |\n|---|---:|\n";
    for (const auto& [op, n] : r.op_histogram) md += "| " + cell(op) + " | " + std::to_string(n) + " |\n";
  }
  auto list = [&md](const char* title, const std::vector<std::string>& items) {
    if (items.empty()) return;
    md += std::string("\n## ") + title + "\n\n";
    for (const auto& item : items) md += "- " + item + "\n";
  };
  const auto counted = [](const std::map<std::string, size_t>& ops) {
    std::vector<std::string> items;
    for (const auto& [op, n] : ops) items.push_back("`" + op + "` x" + std::to_string(n));
    return items;
  };
  list("Fallback nodes", counted(r.fallback_ops));
  list("Nodes no ONNX schema checks", counted(r.unchecked_ops));
  std::vector<std::string> extra;
  for (const auto& e : r.extra_outputs)
    extra.push_back("`" + e.output + "` " + e.type + " from " + e.kind + " `" + e.spec + "`");
  list("Extra outputs", extra);
  list("Warnings", r.warnings);
  list("Notes", r.notes);
  list("Passes", r.pass_results);
  list("Dynamic axes checked at", r.dynamic_checks);
  return md;
}

void check_report_path(const std::string& path, const std::vector<std::string>& inputs,
                       const std::vector<std::string>& outputs) {
  for (const auto& out : outputs)
    if (!out.empty() && (out == path || core::same_file(out, path)))
      throw ConfigError("--report '" + path + "' is also an output of this export ('" + out + "')",
                        ErrorContext::with_hint("give the report its own file name, e.g. report.json"));
  report_format_for(path);
  core::check_output_path(path, inputs, "the report");
}

void write_export_report(const std::string& path, const ReportInput& in) {
  const std::string text =
      report_format_for(path) == ReportFormat::Json ? export_report_json(in) : export_report_markdown(in);
  core::OutputFile file(path);
  file.stream() << text;
  file.finish();
  core::OutputFile::commit_all({&file});
}

}  // namespace onnxport
