// onnxport plugins: every op pack found, with its status (and why it was refused).
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

#include "commands.h"
#include "onnxport/export.h"
#include "onnxport/registry/loader.h"

namespace onnxport::cli {

namespace {

nlohmann::json pack_json(const PackStatus& p) {
  nlohmann::json domains = nlohmann::json::object();
  for (const auto& d : p.domains) domains[d.domain] = d.version;
  return {{"id", p.id},           {"version", p.version}, {"file", p.file},         {"api_version", p.api_version},
          {"abi_tag", p.abi_tag}, {"domains", domains},   {"op_count", p.op_count}, {"status", p.state_name()},
          {"error", p.error}};
}

void print_pack(const PackStatus& p) {
  std::cout << (p.id.empty() ? "?" : p.id) << " " << p.version << "  " << p.state_name() << "  " << p.op_count
            << " ops  " << p.file;
  if (!p.error.empty()) std::cout << "\n    " << p.error;
  std::cout << "\n";
}

int run_plugins(const std::vector<std::string>& plugin_dirs, bool json) {
  Exporter exporter(plugin_dirs);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : exporter.loader().packs()) {
    if (json)
      out.push_back(pack_json(p));
    else
      print_pack(p);
  }
  if (json) std::cout << out.dump(2) << "\n";
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
