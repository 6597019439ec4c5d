// onnxport plugins: every op pack found, with its status (and why it was refused).
#include <iostream>
#include <memory>

#include "5_cli/commands.h"
#include "onnxport/export.h"
#include "onnxport/listings.h"
#include "onnxport/registry/loader.h"

namespace onnxport::cli {

namespace {

void print_pack(const PackStatus& p) {
  std::cout << (p.id.empty() ? "?" : p.id) << " " << p.version << "  " << p.state_name() << "  " << p.op_count
            << " ops  " << p.file;
  if (!p.evaluators.empty()) {
    std::cout << "\n    evaluators (onnxport run/verify):";
    for (const auto& e : p.evaluators) std::cout << " " << e;
  }
  if (!p.error.empty()) std::cout << "\n    " << p.error;
  std::cout << "\n";
}

int run_plugins(const std::vector<std::string>& plugin_dirs, bool json) {
  Exporter exporter(plugin_dirs);
  if (json) {
    std::cout << packs_json(exporter) << "\n";
    return 0;
  }
  for (const auto& p : exporter.loader().packs()) print_pack(p);
  return 0;
}

struct PluginsArgs {
  std::vector<std::string> plugin_dirs;
  bool json = false;
};

}  // namespace

Command add_plugins_command(CLI::App& app) {
  auto args = std::make_shared<PluginsArgs>();
  auto* cmd = app.add_subcommand("plugins", "list every op pack found, with its status");
  cmd->add_flag("--json", args->json, "JSON output");
  cmd->add_option("--plugin-dir", args->plugin_dirs, "extra directory of op packs");
  return {cmd, [args] { return run_plugins(args->plugin_dirs, args->json); }};
}

}  // namespace onnxport::cli
