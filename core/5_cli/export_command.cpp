// onnxport export: its flags come from the option table; the core merges them with --config.
#include <filesystem>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <iostream>
#include <memory>

#include "5_cli/commands.h"
#include "onnxport/errors.h"
#include "onnxport/export.h"
#include "onnxport/registry/loader.h"
#include "onnxport/report.h"

namespace onnxport::cli {

namespace {

const ExportOption kConfig{"",
                           "--config",
                           FlagForm::Value,
                           FlagMerge::Replace,
                           "FILE",
                           "",
                           "",
                           "JSON file whose keys are the options' config keys (torch.onnx.export's names); flags "
                           "given on the command line win"};
const ExportOption kLoadOpLibrary{"",
                                  "--load-op-library",
                                  FlagForm::Repeated,
                                  FlagMerge::Replace,
                                  "LIB.so",
                                  "",
                                  "",
                                  "shared library registering custom torch ops (TORCH_LIBRARY) the model uses"};
const ExportOption kTimings{"",
                            "--timings",
                            FlagForm::Switch,
                            FlagMerge::Replace,
                            "",
                            "",
                            "",
                            "print each pipeline stage's wall time and the peak RSS when it ended (stderr)"};
const ExportOption kReport{"",
                           "--report",
                           FlagForm::Value,
                           FlagMerge::Replace,
                           "FILE.json|FILE.md",
                           "",
                           "",
                           "write a report of the export, also when it fails: each stage's status, time and peak "
                           "memory, nodes by op pack and ONNX op, fallbacks, warnings, passes, the checker's verdict "
                           "and file sizes (JSON schema: docs/export-report.md)"};
const ExportOption kVerify{"",
                           "--verify",
                           FlagForm::Switch,
                           FlagMerge::Replace,
                           "",
                           "",
                           "",
                           "after writing, run the model in libtorch and the ONNX file in onnxport's evaluator on the "
                           "export's inputs and two more input sets, compare every output (rtol 1e-3, atol 1e-5) and "
                           "exit 1 on a mismatch, naming the first diverging node (the file stays, for inspection); "
                           "as `onnxport verify` (with --state-io: 10 calls in a row, each fed the state the one "
                           "before returned)"};
const ExportOption kPrintConfig{"",
                                "--print-config",
                                FlagForm::Switch,
                                FlagMerge::Replace,
                                "",
                                "",
                                "",
                                "print the options this export would use (config file and flags merged) as a "
                                "--config file, and exit without exporting"};

// A table option's CLI11 option and the values it received.
struct TableFlag {
  const ExportOption* option = nullptr;
  CLI::Option* parsed = nullptr;
  std::string value;                // FlagForm::Value
  std::vector<std::string> values;  // FlagForm::Repeated, FlagForm::OptionalValue (none or one)
};

struct ExportArgs {
  std::string model, output, config, report;
  std::vector<std::string> op_libraries;
  bool timings = false;
  bool verify = false;
  std::deque<TableFlag> table_flags;  // a deque: CLI11 writes through pointers into its elements
};

void add_table_flag(CLI::App& cmd, TableFlag& slot) {
  const ExportOption& option = *slot.option;
  const std::string default_note = option.default_text.empty() ? "" : ", default " + option.default_text;
  const std::string help = option_help(option) + " (config key: " + option.key + default_note + ")";
  switch (option.form) {
    case FlagForm::Switch: slot.parsed = cmd.add_flag(option.flag)->description(help); break;
    case FlagForm::Value: slot.parsed = cmd.add_option(option.flag, slot.value, help); break;
    case FlagForm::Repeated: slot.parsed = cmd.add_option(option.flag, slot.values, help); break;
    case FlagForm::OptionalValue: slot.parsed = cmd.add_option(option.flag, slot.values, help)->expected(0, 1); break;
  }
  if (!option.value_name.empty())
    slot.parsed->type_name(option.form == FlagForm::OptionalValue ? "[" + option.value_name + "]" : option.value_name);
}

std::vector<GivenFlag> given_flags(const ExportArgs& args) {
  std::vector<GivenFlag> given;
  for (const auto& slot : args.table_flags) {
    if (slot.parsed->count() == 0) continue;
    switch (slot.option->form) {
      case FlagForm::Switch: given.push_back({slot.option->flag, {}}); break;
      case FlagForm::Value: given.push_back({slot.option->flag, {slot.value}}); break;
      case FlagForm::Repeated:
      case FlagForm::OptionalValue: given.push_back({slot.option->flag, slot.values}); break;
    }
  }
  return given;
}

void print_fallbacks(const ExportReport& report, const ExportOptions& o) {
  if (report.fallback_ops.empty()) return;
  size_t total = 0;
  for (const auto& [op, n] : report.fallback_ops) total += n;
  std::cout << total << " node" << (total == 1 ? "" : "s") << " kept as "
            << operator_export_type_name(o.operator_export_type) << " fallback:";
  for (const auto& [op, n] : report.fallback_ops) std::cout << " " << op << " x" << n;
  std::cout << "\n";
}

void print_report(const ExportReport& report, const std::string& output, const ExportOptions& o) {
  for (const auto& w : report.warnings) std::cerr << "onnxport: warning: " << w << "\n";
  if (o.verbose) std::cout << "mode: " << report.mode_reason << "\n" << report.graph_text;
  std::cout << "wrote " << output << ": " << report.node_count << " nodes, " << report.initializer_count
            << " initializers (" << report.initializer_bytes / 1024 << " KiB), opset " << o.opset_version;
  if (o.check) std::cout << ", checker ok";
  std::cout << ", " << report.mode << " mode\n";
  for (const auto& run : report.dynamic_checks)
    std::cout << "dynamic axes verified: the graph keeps them symbolic at " << run << "\n";
  if (!report.external_data_path.empty()) std::cout << "initializers in " << report.external_data_path << "\n";
  for (const auto& note : report.notes) std::cout << "note: " << note << "\n";
  print_fallbacks(report, o);
  if (!o.verbose) return;
  for (const auto& line : report.pass_results) std::cout << "pass " << line << "\n";
  std::cout << "ops:";
  for (const auto& [op, n] : report.op_histogram) std::cout << " " << op << "x" << n;
  std::cout << "\n";
}

// "timings: load 0.65 s (peak 181 MiB), prepare 0.21 s (peak 240 MiB), ..., total 1.30 s"
void print_timings(const ExportReport& report, std::ostream& out) {
  out << "timings:";
  double total = 0;
  for (const auto& stage : report.stages) {
    char line[160];
    std::snprintf(line, sizeof line, " %s %.2f s (peak %zu MiB),", stage.name.c_str(), stage.seconds,
                  stage.peak_rss_bytes >> 20);
    out << line;
    total += stage.seconds;
  }
  char end[64];
  std::snprintf(end, sizeof end, " total %.2f s", total);
  out << end << "\n";
}

// One line on a terminal for exports that take a while: nothing during the first two seconds,
// then the current stage, and megabytes written while parameters stream.
class ProgressLine {
 public:
  void show(const ExportProgress& p) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed < 2.0) return;
    char line[120];
    if (p.bytes_total > 0)
      std::snprintf(line, sizeof line, "onnxport: %s %zu / %zu MiB", p.stage.c_str(), p.bytes_done >> 20,
                    p.bytes_total >> 20);
    else
      std::snprintf(line, sizeof line, "onnxport: %s ...", p.stage.c_str());
    if (line == last_) return;
    last_ = line;
    std::cerr << "\r\033[K" << line << std::flush;
    shown_ = true;
  }
  void clear() {
    if (shown_) std::cerr << "\r\033[K" << std::flush;
    shown_ = false;
  }
  ~ProgressLine() { clear(); }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::string last_;
  bool shown_ = false;
};

// The report of a failed export; a failure to write it is a warning, the export's error stays
// the one the user sees.
void write_failure_report(const ExportArgs& args, const ExportReport& report, const ExportOptions& options,
                          const Error& e) {
  try {
    write_export_report(args.report, ReportInput{args.model, args.output, &report, &options, ReportFailure::from(e)});
  } catch (const std::exception& report_error) {
    std::cerr << "onnxport: warning: the report was not written: " << report_error.what() << "\n";
  }
}

int run_export(const ExportArgs& args, bool print_config) {
  const ExportOptions options = resolve_export_options(args.config, given_flags(args));
  if (print_config) {
    std::cout << export_options_json(options) << "\n";
    return 0;
  }
  std::error_code ec;
  if (!args.config.empty() && std::filesystem::equivalent(args.config, args.output, ec))
    throw onnxport::ConfigError("the output '" + args.output + "' is the same file as the config file '" + args.config + "' (writing would destroy it)",
                      onnxport::ErrorContext::with_hint("give another output file name"));
  if (!args.report.empty()) {
    std::vector<std::string> inputs{args.model};
    if (!args.config.empty()) inputs.push_back(args.config);
    for (const auto& spec : options.inputs)
      if (!spec.npy_file.empty()) inputs.push_back(spec.npy_file);
    check_report_path(args.report, inputs, {args.output, options.external_data_file});
  }
  for (const auto& library : args.op_libraries) load_op_library(library);
  std::unique_ptr<Exporter> loaded = exporter_with_packs(options.plugin_dirs);
  Exporter& exporter = *loaded;
  ProgressLine progress;
  if (isatty(STDERR_FILENO)) exporter.set_progress_callback([&progress](const ExportProgress& p) { progress.show(p); });
  ExportReport report;
  try {
    report = exporter.export_file(args.model, args.output, options);
  } catch (const Error& e) {
    progress.clear();
    if (!args.report.empty()) write_failure_report(args, exporter.last_report(), options, e);
    throw;
  }
  progress.clear();
  if (!args.report.empty())
    write_export_report(args.report, ReportInput{args.model, args.output, &report, &options, std::nullopt});
  print_report(report, args.output, options);
  if (args.timings || options.verbose) print_timings(report, args.timings ? std::cerr : std::cout);
  if (!args.verify) return 0;
  VerifyOptions verify;
  verify.inputs = options.inputs;
  verify.seed = options.seed;
  verify.export_options = options;
  if (options.state_io) verify.steps = 10;
  return print_verification(verify_onnx_file(args.model, args.output, verify, &exporter), false);
}

}  // namespace

std::unique_ptr<Exporter> exporter_with_packs(const std::vector<std::string>& plugin_dirs) {
  auto exporter = std::make_unique<Exporter>(plugin_dirs);
  std::error_code ec;
  for (const auto& pack : exporter->loader().packs()) {
    if (pack.state != PackStatus::State::Failed) continue;
    // A pack in a directory the user named is one they asked for: failing to load it fails the
    // command. Packs found through ONNXPORT_PLUGIN_PATH are skipped with a warning.
    const std::filesystem::path dir = std::filesystem::path(pack.file).parent_path();
    for (const auto& named : plugin_dirs)
      if (std::filesystem::equivalent(dir, named, ec))
        throw onnxport::PackLoadError(pack.error, onnxport::ErrorContext::with_hint("fix or remove the file, or drop --plugin-dir " + named));
    std::cerr << "onnxport: warning: op pack skipped: " << pack.error << "\n";
  }
  return exporter;
}

const std::vector<ExportOption>& cli_only_export_options() {
  static const std::vector<ExportOption> options{kConfig, kLoadOpLibrary, kTimings, kReport, kVerify,
                                                 kPrintConfig};
  return options;
}

std::string option_help(const ExportOption& option) {
  std::string text = option.help;
  if (option.form != FlagForm::Repeated) return text;
  text += "; repeatable";
  if (!option.key.empty())
    text += option.merge == FlagMerge::Replace ? ", replacing the config file's" : ", adding to the config file's";
  return text;
}

Command add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand("export", "export MODEL.pt to ONNX");
  cmd->add_option("model", args->model, "TorchScript file (torch.jit.trace/script + save)")->required();
  cmd->add_option("-o,--output", args->output, "output .onnx file")->required();
  for (const auto& option : export_option_table()) {
    args->table_flags.push_back({&option});
    add_table_flag(*cmd, args->table_flags.back());
  }
  cmd->add_option(kConfig.flag, args->config, option_help(kConfig))->type_name(kConfig.value_name);
  cmd->add_option(kLoadOpLibrary.flag, args->op_libraries, option_help(kLoadOpLibrary))
      ->type_name(kLoadOpLibrary.value_name);
  cmd->add_flag(kTimings.flag, args->timings, option_help(kTimings));
  cmd->add_option(kReport.flag, args->report, option_help(kReport))->type_name(kReport.value_name);
  cmd->add_flag(kVerify.flag, args->verify, option_help(kVerify));
  auto* print_config = cmd->add_flag(kPrintConfig.flag)->description(option_help(kPrintConfig));
  return {cmd, [args, print_config] { return run_export(*args, print_config->count() > 0); }};
}

}  // namespace onnxport::cli
