// onnxport: the command-line front end of the C++ API.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "../src/convert.h"
#include "../src/onnx_io.h"
#include "onnxport/errors.h"
#include "onnxport/export.h"
#include "onnxport/registry/loader.h"

namespace {

using onnxport::ExportOptions;

// "NAME:0=batch,1=seq"
void parse_dynamic_axes(const std::string& text, ExportOptions& o) {
  auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0)
    throw onnxport::ConfigError("--dynamic-axes '" + text + "': expected NAME:AXIS=DIM_NAME[,AXIS=DIM_NAME]",
                                onnxport::ErrorContext::with_hint("e.g. --dynamic-axes input0:0=batch"));
  const std::string name = text.substr(0, colon);
  std::stringstream ss(text.substr(colon + 1));
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto eq = item.find('=');
    try {
      int64_t axis = std::stoll(item.substr(0, eq));
      o.dynamic_axes[name][axis] = eq == std::string::npos ? name + "_dynamic_axes_" + std::to_string(axis + 1)
                                                            : item.substr(eq + 1);
    } catch (const std::exception&) {
      throw onnxport::ConfigError("--dynamic-axes '" + text + "': bad axis '" + item + "'");
    }
  }
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

int run_export(const std::string& model, const std::string& output, ExportOptions o, const std::string& config,
               const std::vector<std::string>& inputs, const std::vector<std::string>& axes,
               const std::vector<std::string>& opsets, const std::string& input_names, const std::string& output_names,
               CLI::App& cmd) {
  // Config first; flags given on the command line override it.
  if (!config.empty()) {
    ExportOptions from_file;
    onnxport::load_config_file(config, from_file);
    auto given = [&cmd](const char* flag) { return cmd.count(flag) > 0; };
    if (!given("--opset")) o.opset_version = from_file.opset_version;
    if (!given("--no-constant-folding")) o.do_constant_folding = from_file.do_constant_folding;
    if (!given("--no-export-params")) o.export_params = from_file.export_params;
    if (!given("--keep-initializers-as-inputs")) o.keep_initializers_as_inputs = from_file.keep_initializers_as_inputs;
    if (!given("--training")) o.training = from_file.training;
    if (!given("--mode")) o.mode = from_file.mode;
    if (!given("--no-dynamic-check")) o.check_dynamic_axes = from_file.check_dynamic_axes;
    if (!given("--verbose")) o.verbose = from_file.verbose;
    if (!given("--operator-export-type")) o.operator_export_type = from_file.operator_export_type;
    if (!given("--no-check")) o.check = from_file.check;
    if (!given("--no-strict")) o.strict = from_file.strict;
    if (!given("--seed")) o.seed = from_file.seed;
    if (!given("--provenance")) o.provenance = from_file.provenance;
    if (inputs.empty()) o.inputs = from_file.inputs;
    if (input_names.empty()) o.input_names = from_file.input_names;
    if (output_names.empty()) o.output_names = from_file.output_names;
    if (axes.empty()) o.dynamic_axes = from_file.dynamic_axes;
    for (const auto& [k, v] : from_file.custom_opsets) o.custom_opsets.emplace(k, v);
    o.plugin_dirs.insert(o.plugin_dirs.begin(), from_file.plugin_dirs.begin(), from_file.plugin_dirs.end());
  }
  for (const auto& s : inputs) o.inputs.push_back(onnxport::InputSpec::parse(s));
  for (const auto& a : axes) parse_dynamic_axes(a, o);
  for (const auto& c : opsets) {
    auto eq = c.find('=');
    if (eq == std::string::npos) throw onnxport::ConfigError("--custom-opset '" + c + "': expected DOMAIN=VERSION");
    o.custom_opsets[c.substr(0, eq)] = std::stoi(c.substr(eq + 1));
  }
  if (!input_names.empty()) o.input_names = split_commas(input_names);
  if (!output_names.empty()) o.output_names = split_commas(output_names);
  o.validate();

  onnxport::Exporter exporter(o.plugin_dirs);
  for (const auto& p : exporter.loader().packs())
    if (p.state == onnxport::PackStatus::State::Failed) std::cerr << "onnxport: warning: op pack skipped: " << p.error << "\n";
  auto report = exporter.export_file(model, output, o);
  for (const auto& w : report.warnings) std::cerr << "onnxport: warning: " << w << "\n";
  if (o.verbose) std::cout << "mode: " << report.mode_reason << "\n" << report.graph_text;
  std::cout << "wrote " << output << ": " << report.node_count << " nodes, " << report.initializer_count
            << " initializers (" << report.initializer_bytes / 1024 << " KiB), opset " << o.opset_version;
  if (o.check) std::cout << ", checker ok";
  std::cout << ", " << report.mode << " mode\n";
  for (const auto& run : report.dynamic_checks) std::cout << "dynamic axes verified: the graph keeps them symbolic at " << run << "\n";
  if (!report.fallback_ops.empty()) {
    size_t total = 0;
    for (const auto& [op, n] : report.fallback_ops) total += n;
    std::cout << total << " node" << (total == 1 ? "" : "s") << " kept as " << onnxport::operator_export_type_name(o.operator_export_type) << " fallback:";
    for (const auto& [op, n] : report.fallback_ops) std::cout << " " << op << " x" << n;
    std::cout << "\n";
  }
  if (o.verbose) {
    std::cout << "ops:";
    for (const auto& [op, n] : report.op_histogram) std::cout << " " << op << "x" << n;
    std::cout << "\ntimes: prepare " << report.seconds_prepare << "s, convert " << report.seconds_convert << "s, write "
              << report.seconds_write << "s, check " << report.seconds_check << "s\n";
  }
  return 0;
}

// ---------------------------------------------------------------- onnxport ops

using onnxport::kMaxOpset;
using onnxport::kMinOpset;

// torch.onnx looks a node up by its kind minus one trailing '_' (so that relu_ finds relu), and
// its registry spells names that way: `aten::__and_` is TorchScript `aten::__and__`. A name of its
// list is therefore covered by the TorchScript op of the same name or with one '_' appended.
std::vector<std::string> torchscript_candidates(const std::string& reference_name) {
  return {reference_name, reference_name + "_"};
}

// The list entry torch.onnx would use for a TorchScript op, or nullptr.
const int* torch_onnx_opset(const std::map<std::string, int>& reference, const std::string& op) {
  for (const auto& key : {op, op.back() == '_' ? op.substr(0, op.size() - 1) : op}) {
    auto found = reference.find(key);
    if (found != reference.end()) return &found->second;
  }
  return nullptr;
}

// A reference list: "ns::name LOWEST_OPSET" per line ('#' starts a comment); name -> opset.
std::map<std::string, int> read_reference_list(const std::string& file) {
  std::ifstream in(file);
  if (!in)
    throw onnxport::ConfigError("cannot read the reference list '" + file + "'",
                                onnxport::ErrorContext::with_hint("give --reference tests/coverage/torch113_symbolics.txt"));
  std::map<std::string, int> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::istringstream fields(line);
    std::string op;
    int opset = 0;
    if (!(fields >> op)) continue;
    if (!(fields >> opset))
      throw onnxport::ConfigError(file + ":" + std::to_string(number) + ": expected 'ns::op LOWEST_OPSET', got '" +
                                  line + "'");
    out[op] = opset;
  }
  return out;
}

// Everything the table says about one torch op, gathered from its registry entries.
struct OpRow {
  std::set<int> since_opsets;
  std::set<std::string> packs;
};

std::string opset_range(const std::set<int>& since_opsets) {
  const int lowest = std::max(*since_opsets.begin(), kMinOpset);
  std::string text = std::to_string(lowest) + "–" + std::to_string(kMaxOpset);
  std::string variants;
  for (int s : since_opsets)
    if (s > lowest) variants += (variants.empty() ? "" : ", ") + std::to_string(s);
  if (!variants.empty()) text += " (variants from " + variants + ")";
  return text;
}

std::string joined(const std::set<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

void print_markdown(const std::map<std::string, OpRow>& ops, const std::map<std::string, int>& reference) {
  std::map<std::string, int> beyond_per_namespace;  // not counting in-place forms of counted ops
  for (const auto& [op, row] : ops) {
    const bool inplace_of_beyond = op.back() == '_' && ops.count(op.substr(0, op.size() - 1)) &&
                                   !torch_onnx_opset(reference, op.substr(0, op.size() - 1));
    if (!torch_onnx_opset(reference, op) && !inplace_of_beyond) ++beyond_per_namespace[op.substr(0, op.find("::"))];
  }
  std::vector<std::string> missing;
  for (const auto& [name, opset] : reference) {
    bool covered = false;
    for (const auto& op : torchscript_candidates(name)) {
      auto found = ops.find(op);
      covered = covered || (found != ops.end() &&
                            std::max(*found->second.since_opsets.begin(), kMinOpset) <= opset);
    }
    if (!covered) missing.push_back(name);
  }
  std::set<std::string> packs;
  for (const auto& [op, row] : ops) packs.insert(row.packs.begin(), row.packs.end());

  std::cout << "# Operator table\n\n"
            << "<!-- Generated by `onnxport ops --markdown --reference tests/coverage/torch113_symbolics.txt`\n"
            << "     with the built-in op packs; do not edit. Regenerate with\n"
            << "     /usr/bin/python3 tests/coverage/operators_doc.py build/bin/onnxport --write\n"
            << "     (the ctest test docs.operators_fresh fails when this file is stale). -->\n\n"
            << ops.size() << " TorchScript ops mapped by " << packs.size() << " op packs (" << joined(packs)
            << "). *Opsets* is the range an export can target (onnxport exports opsets " << kMinOpset << "–"
            << kMaxOpset << "); *variants* are the opsets from which a different ONNX form is emitted.\n";
  if (!reference.empty()) {
    std::cout << "\n*torch.onnx 1.13* gives the lowest opset at which PyTorch 1.13's exporter maps the op, or "
                 "**no** when it has no mapping for it. " << reference.size() - missing.size() << " of its "
              << reference.size() << " ops are mapped here; ops beyond it:";
    for (const auto& [ns, n] : beyond_per_namespace) std::cout << " " << n << " `" << ns << "::`";
    std::cout << " (in-place `op_` forms not counted). torch.onnx looks ops up without one trailing `_`: "
                 "`aten::relu_` uses its `aten::relu`, and its list spells `aten::__and__` as `aten::__and_`.\n";
  }
  std::cout << "\n| torch op | pack | opsets |" << (reference.empty() ? "" : " torch.onnx 1.13 |") << "\n"
            << "|---|---|---|" << (reference.empty() ? "" : "---|") << "\n";
  for (const auto& [op, row] : ops) {
    std::cout << "| `" << op << "` | " << joined(row.packs) << " | " << opset_range(row.since_opsets) << " |";
    if (!reference.empty()) {
      const int* since = torch_onnx_opset(reference, op);
      std::cout << " " << (since ? std::to_string(*since) + "–" + std::to_string(kMaxOpset) : "**no**")
                << " |";
    }
    std::cout << "\n";
  }
  if (!missing.empty()) {
    std::cout << "\n## torch.onnx 1.13 ops not mapped at all of their opsets yet\n\n";
    for (const auto& name : missing)
      std::cout << "- `" << name << "` (torch.onnx from opset " << reference.at(name) << ")\n";
  }
}

int run_ops(const std::vector<std::string>& dirs, int opset, bool json, bool markdown, const std::string& pack,
            const std::string& reference_file) {
  onnxport::Exporter exporter(dirs);
  const auto reference = reference_file.empty() ? std::map<std::string, int>{} : read_reference_list(reference_file);
  nlohmann::json out = nlohmann::json::array();
  std::map<std::string, OpRow> rows;
  for (const auto* e : exporter.registry().entries()) {
    if (opset > 0 && e->since_opset > opset) continue;
    if (!pack.empty() && e->pack.id != pack) continue;
    if (markdown) {
      rows[e->torch_op].since_opsets.insert(e->since_opset);
      rows[e->torch_op].packs.insert(e->pack.id);
    } else if (json) {
      nlohmann::json row = {{"op", e->torch_op}, {"since_opset", e->since_opset}, {"pack", e->pack.id},
                            {"file", e->pack.file}, {"override", e->is_override}};
      if (!e->overridden.empty()) {
        row["overrides"] = nlohmann::json::array();
        for (const auto& p : e->overridden) row["overrides"].push_back(p.id);
      }
      if (!reference_file.empty()) row["in_torch_onnx"] = torch_onnx_opset(reference, e->torch_op) != nullptr;
      out.push_back(row);
    } else {
      std::cout << e->torch_op << "  since opset " << e->since_opset << "  [" << e->pack.id << "]";
      if (e->is_override && !e->overridden.empty()) {
        std::cout << "  overrides";
        for (const auto& p : e->overridden) std::cout << " " << p.describe();
      }
      if (!reference_file.empty() && !torch_onnx_opset(reference, e->torch_op)) std::cout << "  (not in torch.onnx)";
      std::cout << "\n";
    }
  }
  // Control flow, constants and attribute reads are converted by the core itself.
  for (const auto& [op, since] : onnxport::core::core_builtin_ops()) {
    if ((opset > 0 && since > opset) || (!pack.empty() && pack != "core")) continue;
    if (markdown) {
      rows[op].since_opsets.insert(since);
      rows[op].packs.insert("core");
    } else if (json) {
      nlohmann::json row = {{"op", op}, {"since_opset", since}, {"pack", "core"}, {"file", ""}, {"override", false}};
      if (!reference_file.empty()) row["in_torch_onnx"] = torch_onnx_opset(reference, op) != nullptr;
      out.push_back(row);
    } else {
      std::cout << op << "  since opset " << since << "  [core]\n";
    }
  }
  if (markdown) print_markdown(rows, reference);
  if (json) std::cout << out.dump(2) << "\n";
  return 0;
}

int run_plugins(const std::vector<std::string>& dirs, bool json) {
  onnxport::Exporter exporter(dirs);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : exporter.loader().packs()) {
    if (json) {
      nlohmann::json domains = nlohmann::json::object();
      for (const auto& d : p.domains) domains[d.domain] = d.version;
      out.push_back({{"id", p.id}, {"version", p.version}, {"file", p.file}, {"api_version", p.api_version},
                     {"abi_tag", p.abi_tag}, {"domains", domains}, {"op_count", p.op_count},
                     {"status", p.state_name()}, {"error", p.error}});
    } else {
      std::cout << (p.id.empty() ? "?" : p.id) << " " << p.version << "  " << p.state_name() << "  " << p.op_count
                << " ops  " << p.file;
      if (!p.error.empty()) std::cout << "\n    " << p.error;
      std::cout << "\n";
    }
  }
  if (json) std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"onnxport " ONNXPORT_VERSION ": export TorchScript models to ONNX, no Python needed"};
  app.require_subcommand(1);
  bool verbose_errors = false;
  app.add_flag("--verbose-errors", verbose_errors, "print error details");

  ExportOptions opts;
  std::string model, output, config, input_names, output_names, training = "eval", mode = "trace";
  std::vector<std::string> inputs, axes, opsets;
  auto* exp = app.add_subcommand("export", "export MODEL.pt to ONNX");
  exp->add_option("model", model, "TorchScript file (torch.jit.trace/script + save)")->required();
  exp->add_option("-o,--output", output, "output .onnx file")->required();
  exp->add_option("--input", inputs,
                  "example input, in forward() order: NAME:1x3x224x224:float32 (random, fixed seed) or NAME=FILE.npy");
  exp->add_option("--opset", opts.opset_version, "target opset (7-17)")->capture_default_str();
  exp->add_option("--input-names", input_names, "graph input names, comma-separated");
  exp->add_option("--output-names", output_names, "graph output names, comma-separated");
  exp->add_option("--dynamic-axes", axes,
                  "NAME:AXIS=DIM[,AXIS=DIM] marks axes of an input/output dynamic: they become dim_param DIM, every "
                  "size computed from them stays a Shape/Gather computation, and the export is re-run at other sizes "
                  "to prove it (e.g. --dynamic-axes x:0=batch,1=seq)");
  exp->add_option("--plugin-dir", opts.plugin_dirs, "extra directory of op packs (repeatable)");
  exp->add_option("--custom-opset", opsets, "DOMAIN=VERSION for a custom domain (overrides the pack's)");
  exp->add_flag("--no-constant-folding", [&](int64_t) { opts.do_constant_folding = false; }, "do not fold constants");
  exp->add_flag("--no-export-params", [&](int64_t) { opts.export_params = false; },
                "parameters become graph inputs without values");
  exp->add_flag("--keep-initializers-as-inputs", opts.keep_initializers_as_inputs, "list initializers as graph inputs too");
  exp->add_option("--training", training, "eval | preserve | train")->capture_default_str();
  exp->add_option("--mode", mode,
                  "trace: record the ops one run on the example inputs executes (loops unrolled, branches fixed; "
                  "a torch.jit.trace .pt is used as saved). script: keep TorchScript control flow as ONNX If/Loop. "
                  "auto: script when a branch or loop depends on tensor values (or on sizes of --dynamic-axes), "
                  "trace otherwise; --verbose says which and why")
      ->capture_default_str();
  exp->add_flag("--no-dynamic-check", [&](int64_t) { opts.check_dynamic_axes = false; },
                "with --dynamic-axes, skip re-running the model at other sizes to prove no size was baked in");
  std::string export_type = "onnx";
  exp->add_option("--operator-export-type", export_type, "onnx (fail on unmapped ops) | onnx_aten_fallback (unmapped -> ATen node) | onnx_aten (every aten op -> ATen) | onnx_fallthrough (unmapped kept in its namespace's domain)");
  exp->add_flag("--verbose", opts.verbose, "print the exported graph with types and provenance");
  exp->add_flag("--provenance", opts.provenance, "write each node's op pack, torch op and module path in its doc_string");
  exp->add_flag("--no-check", [&](int64_t) { opts.check = false; }, "skip the ONNX checker on the written file");
  exp->add_flag("--no-strict", [&](int64_t) { opts.strict = false; }, "don't validate each node against ONNX schemas");
  exp->add_option("--seed", opts.seed, "seed for random example inputs")->capture_default_str();
  exp->add_option("--config", config, "JSON file with torch.onnx.export option names as keys");
  std::vector<std::string> op_libraries;
  exp->add_option("--load-op-library", op_libraries,
                  "shared library registering custom torch ops (TORCH_LIBRARY) the model uses (repeatable)");

  std::vector<std::string> dirs;
  int ops_opset = 0;
  bool json = false;
  auto* ops = app.add_subcommand("ops", "list every registered mapping: torch op, since-opset, pack");
  ops->add_option("--opset", ops_opset, "only mappings usable at this opset");
  ops->add_flag("--json", json, "JSON array of {op, since_opset, pack, file}");
  bool markdown = false;
  ops->add_flag("--markdown", markdown, "the operator table of docs/operators.md: one row per op, its packs and opsets")
      ->excludes("--json");
  std::string reference_file;
  ops->add_option("--reference", reference_file,
                  "list of another exporter's ops ('ns::op LOWEST_OPSET' lines, e.g. "
                  "tests/coverage/torch113_symbolics.txt): marks the ops it does not have");
  ops->add_option("--plugin-dir", dirs, "extra directory of op packs");
  std::string ops_pack;
  ops->add_option("--pack", ops_pack, "only the mappings of this op pack (its id)");
  auto* plugins = app.add_subcommand("plugins", "list every op pack found, with its status");
  plugins->add_flag("--json", json, "JSON output");
  plugins->add_option("--plugin-dir", dirs, "extra directory of op packs");
  std::string file;
  auto* inspect = app.add_subcommand("inspect", "print an ONNX file's graph");
  inspect->add_option("file", file, "ONNX file")->required();
  auto* check = app.add_subcommand("check", "run the ONNX checker and shape inference on a file");
  check->add_option("file", file, "ONNX file")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (*exp) {
      for (const auto& lib : op_libraries) onnxport::load_op_library(lib);
      opts.training = onnxport::parse_training_mode(training);
      opts.mode = onnxport::parse_export_mode(mode);
      opts.operator_export_type = onnxport::parse_operator_export_type(export_type);
      return run_export(model, output, opts, config, inputs, axes, opsets, input_names, output_names, *exp);
    }
    if (*ops) return run_ops(dirs, ops_opset, json, markdown, ops_pack, reference_file);
    if (*plugins) return run_plugins(dirs, json);
    if (*inspect) {
      std::cout << onnxport::core::print_graph(onnxport::core::read_model_file(file));
      return 0;
    }
    if (*check) {
      std::cout << file << ": " << onnxport::core::check_model_file(file).summary << "\n";
      return 0;
    }
  } catch (const onnxport::Error& e) {
    std::cerr << "onnxport: " << e.kind() << ": " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "onnxport: internal error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
