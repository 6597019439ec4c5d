// onnxport: the command-line front end of the C++ API. Each sub-command lives in its own
// *_command.cpp; main only parses and turns errors into exit codes (kExit*, listed in the man page).
#include <csignal>
#include <iostream>
#include <string>

#include "5_cli/commands.h"
#include "5_cli/huge_pages.h"
#include "5_cli/process_exit.h"
#include "onnxport/errors.h"

namespace {

using onnxport::cli::kExitFailed;
using onnxport::cli::kExitInternal;
using onnxport::cli::kExitUsage;

int run_reporting_errors(const onnxport::cli::Command& command) {
  try {
    return command.run();
  } catch (const onnxport::Error& e) {
    std::cerr << "onnxport: " << e.kind() << ": " << e.what() << "\n";
    return kExitFailed;
  } catch (const std::exception& e) {
    // libtorch's messages run over many lines (backtraces); the first says what happened.
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    std::cerr << "onnxport: internal error: " << what << " — this is an onnxport bug; please report it\n";
    return kExitInternal;
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace onnxport::cli;
  // Past a file size limit (ulimit -f) a write then fails with EFBIG, reported like a full
  // disk, instead of the signal killing the process mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
  use_huge_pages_for_large_buffers();
  CLI::App app{"onnxport " ONNXPORT_VERSION ": export TorchScript models to ONNX, no Python needed"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "onnxport " ONNXPORT_VERSION, "print the version and exit");
  const std::vector<Command> commands = {add_export_command(app),  add_ops_command(app),   add_plugins_command(app),
                                         add_inspect_command(app), add_check_command(app), add_options_command(app),
                                         add_run_command(app), add_verify_command(app), add_completion_command(app), add_man_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version come here too, with CLI11's success code; every other code is CLI11's own.
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  for (const auto& command : commands)
    if (*command.app) exit_without_teardown(run_reporting_errors(command));
  return 0;
}
