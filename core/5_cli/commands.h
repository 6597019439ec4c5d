#pragma once
// The sub-commands of `onnxport`, one file each. An add_*_command function adds its
// sub-command to the app and returns how to run it once the command line is parsed.
#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "onnxport/export.h"
#include "onnxport/option_table.h"
#include "onnxport/verify.h"

namespace onnxport::cli {

// The exit codes, listed in the man page (EXIT STATUS) and the README.
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;    // an onnxport error: the model, a file or an option; or verify found a mismatch
constexpr int kExitUsage = 2;     // the command line itself: an unknown flag, a missing argument
constexpr int kExitInternal = 3;  // anything unexpected: an onnxport bug

struct Command {
  CLI::App* app = nullptr;   // true when this sub-command was given
  std::function<int()> run;  // returns the exit code; onnxport errors are thrown
};

Command add_export_command(CLI::App& app);
Command add_ops_command(CLI::App& app);
Command add_plugins_command(CLI::App& app);
Command add_inspect_command(CLI::App& app);
Command add_check_command(CLI::App& app);
Command add_options_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_verify_command(CLI::App& app);
// Generated from the app's definition: the bash completion script and the man page.
Command add_completion_command(CLI::App& app);
Command add_man_command(CLI::App& app);

// Prints each input set's comparisons, the per-node table (`print_nodes`), what the per-node
// comparison found, and the verdict; returns the exit code (1 on a mismatch).
int print_verification(const VerifyResult& result, bool print_nodes);

// An Exporter with the built-in packs and those in `plugin_dirs` (already validated); a pack that
// fails to load from a named directory is a PackLoadError, others are skipped with a warning.
std::unique_ptr<Exporter> exporter_with_packs(const std::vector<std::string>& plugin_dirs);

// The flags `onnxport export` handles itself, without a config key (--config, ...).
const std::vector<ExportOption>& cli_only_export_options();

// An option's help as --help and README show it: its text and, when repeatable, how the
// flags merge with the config file.
std::string option_help(const ExportOption& option);

}  // namespace onnxport::cli
