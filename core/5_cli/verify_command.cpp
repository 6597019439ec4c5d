// onnxport verify MODEL.pt MODEL.onnx: libtorch and onnxport's evaluator on the same inputs.
#include <filesystem>
#include <iostream>
#include <memory>

#include "5_cli/commands.h"
#include "onnxport/errors.h"
#include "onnxport/export.h"
#include "onnxport/report.h"
#include "onnxport/verify.h"

namespace onnxport::cli {

namespace {

// 1-based: the input set the per-node comparison ran on (the first that mismatched).
size_t failing_set(const VerifyResult& result) {
  for (size_t k = 0; k < result.samples.size(); ++k)
    if (!result.samples[k].ok) return k + 1;
  return kExitFailed;
}

}  // namespace

int print_verification(const VerifyResult& result, bool print_nodes) {
  if (!result.recorded_settings.empty()) {
    std::cout << "as the ONNX file records its export:";
    for (const auto& setting : result.recorded_settings) std::cout << " " << setting;
    std::cout << "\n";
  }
  for (size_t k = 0; k < result.samples.size(); ++k) {
    const SampleCheck& s = result.samples[k];
    std::cout << "input set " << k + 1 << ":";
    for (const auto& in : s.inputs) std::cout << " " << in << ";";
    std::cout << "\n";
    for (const auto& out : s.outputs) {
      std::cout << "  " << (out.ok ? "ok      " : "MISMATCH") << " " << out.name << " " << out.type;
      if (out.problem.empty())
        std::cout << "  max abs error " << out.max_abs_error << ", max rel error " << out.max_rel_error;
      else
        std::cout << "  " << out.problem;
      if (out.pytorch_off_by)
        std::cout << "  (against PyTorch's " << out.judged_by << ": its float32 output is " << *out.pytorch_off_by
                  << " off it, the ONNX file's is not)";
      std::cout << "\n";
    }
    for (const auto& name : s.unchecked) std::cout << "  (not compared: " << name << ", past the model's outputs)\n";
  }
  if (print_nodes && !result.nodes.empty()) {
    std::cout << "per node (input set " << (result.ok ? 1 : failing_set(result)) << "):\n";
    for (const auto& n : result.nodes) {
      std::cout << "  " << (n.ok ? "ok      " : "DIVERGES") << " " << n.op_type << " " << n.node << " -> " << n.output
                << " " << n.type << "  " << n.torch_op;
      if (!n.module_path.empty()) std::cout << " [" << n.module_path << "]";
      if (n.problem.empty())
        std::cout << "  max abs error " << n.max_abs_error << ", max rel error " << n.max_rel_error;
      else
        std::cout << "  " << n.problem;
      std::cout << "\n";
    }
  }
  if (!result.per_node_note.empty()) std::cout << result.per_node_note << "\n";
  std::cout << "verify: " << result.verdict << "\n";
  if (result.ok) return 0;
  std::cerr << "onnxport: verification failed: " << result.verdict << "\n";
  return kExitFailed;
}

Command add_verify_command(CLI::App& app) {
  struct Args {
    std::string model, onnx, config, mode, default_dtype, report, method, submodule;
    bool dynamic_numbers = false;
    std::vector<std::string> inputs, plugin_dirs, op_libraries;
    VerifyOptions options;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "verify", "run MODEL.pt in libtorch and MODEL.onnx in onnxport's evaluator on the same inputs and compare");
  cmd->add_option("model", args->model, "TorchScript file the ONNX file was exported from")->required();
  cmd->add_option("onnx", args->onnx, "ONNX file")->required();
  cmd->add_option("--input", args->inputs,
                  "a graph input's value: NAME=FILE.npy, or NAME:SHAPE[:DTYPE] drawn at random; inputs not given "
                  "are drawn from their ONNX type when it is static. Or, as export takes them, one per argument "
                  "of the exported method: NAME:int=16000, NAME:none, NAME:(A,B), ... (the numbers, None and "
                  "strings the export folded into the file must be given again); repeatable")
      ->type_name("NAME=FILE.npy|NAME:SHAPE[:DTYPE]|NAME:TYPE=VALUE");
  cmd->add_option("--method", args->method, "the method the file was exported from (default forward)")
      ->type_name("NAME");
  cmd->add_option("--submodule", args->submodule, "the submodule the file was exported from")->type_name("PATH");
  cmd->add_flag("--dynamic-numbers", args->dynamic_numbers,
                "the export made number arguments graph inputs (for the per-node comparison)");
  cmd->add_option("--samples", args->options.samples,
                  "input sets to compare: the given one, then more drawn like it (dynamic dims grown by one "
                  "each; integers given in a file drawn between their smallest and largest); default 3");
  cmd->add_option("--steps", args->options.steps,
                  "for a file exported with its module state as inputs and outputs (export's state-io): calls "
                  "in a row per input set, each step's state inputs "
                  "fed what the step before returned (the first the model file's state, or zeros where the "
                  "export moved the start: --input NAME:SHAPE gives their shape where a dim is dynamic), every "
                  "step's outputs and states compared (default 1)");
  cmd->add_option("--rtol", args->options.rtol, "relative tolerance (default 1e-3)");
  cmd->add_option("--atol", args->options.atol, "absolute tolerance (default 1e-5)");
  cmd->add_option("--seed", args->options.seed, "seed for drawn inputs (default 0)");
  cmd->add_flag("--per-node", args->options.per_node,
                "compare every ONNX value that stands for a TorchScript value with libtorch's, even when the "
                "outputs agree (on a mismatch this is always done, to name the first diverging node)");
  cmd->add_option("--report", args->report, "write the comparison, per node too, as JSON")->type_name("FILE.json");
  cmd->add_option("--config", args->config,
                  "the export's config file: the per-node comparison converts MODEL.pt again with these options "
                  "(the opset is read from MODEL.onnx)")
      ->type_name("FILE");
  cmd->add_option("--mode", args->mode, "the export's mode, for the per-node comparison: trace, script or auto")
      ->type_name("trace|script|auto");
  cmd->add_option("--default-dtype", args->default_dtype,
                  "the export's default dtype: libtorch runs MODEL.pt under it (float32 unless given)")
      ->type_name("float32|float64");
  cmd->add_option("--plugin-dir", args->plugin_dirs,
                  "directory of op packs: those the export used (for the per-node comparison), whose evaluators "
                  "compute custom-domain ops; repeatable")
      ->type_name("DIR");
  cmd->add_option("--load-op-library", args->op_libraries,
                  "library registering custom torch ops the model calls (TORCH_LIBRARY), as for export; repeatable")
      ->type_name("FILE.so");
  return {cmd, [args] {
            for (const auto& text : args->inputs) args->options.inputs.push_back(InputSpec::parse(text));
            std::vector<GivenFlag> flags;
            if (!args->mode.empty()) flags.push_back({"--mode", {args->mode}});
            if (!args->method.empty()) flags.push_back({"--method", {args->method}});
            if (!args->submodule.empty()) flags.push_back({"--submodule", {args->submodule}});
            if (args->dynamic_numbers) flags.push_back({"--dynamic-numbers", {}});
            if (!args->default_dtype.empty()) flags.push_back({"--default-dtype", {args->default_dtype}});
            if (!args->plugin_dirs.empty()) flags.push_back({"--plugin-dir", args->plugin_dirs});
            args->options.export_options = resolve_export_options(args->config, flags);
            if (!args->report.empty()) {
              if (std::filesystem::path(args->report).extension() != ".json")
                throw ConfigError("--report '" + args->report + "': verify writes JSON reports",
                                  ErrorContext::with_hint("name the report FILE.json"));
              check_report_path(args->report, {args->model, args->onnx}, {});
            }
            for (const auto& library : args->op_libraries) load_op_library(library);
            auto exporter = exporter_with_packs(args->options.export_options.plugin_dirs);
            const VerifyResult result = verify_onnx_file(args->model, args->onnx, args->options, exporter.get());
            if (!args->report.empty()) write_verify_report(args->report, args->model, args->onnx, result);
            return print_verification(result, args->options.per_node);
          }};
}

}  // namespace onnxport::cli
