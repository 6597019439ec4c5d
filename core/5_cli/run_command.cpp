// onnxport run: an ONNX file computed by onnxport's own evaluator; outputs as .npy files.
#include <iomanip>
#include <iostream>
#include <memory>

#include "5_cli/commands.h"
#include "onnxport/export.h"
#include "onnxport/run_model.h"

namespace onnxport::cli {

Command add_run_command(CLI::App& app) {
  struct Args {
    std::string file;
    std::vector<std::string> inputs, plugin_dirs;
    RunOptions options;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("run", "run an ONNX file with onnxport's own evaluator (ATen), no ONNX Runtime");
  cmd->add_option("file", args->file, "ONNX file")->required();
  cmd->add_option("--input", args->inputs,
                  "a graph input's value: NAME=FILE.npy, or NAME:SHAPE[:DTYPE] drawn at random (fixed seed), or "
                  "NAME:int=VALUE (float=, bool=) for a 0-d input a number became (export's dynamic numbers); "
                  "inputs not given are drawn from their declared type when it is static; repeatable")
      ->type_name("NAME=FILE.npy|NAME:SHAPE[:DTYPE]|NAME:TYPE=VALUE");
  cmd->add_option("-o,--output-dir", args->options.output_dir,
                  "write each output to DIR/<output name>.npy (a sequence: one file per item)")
      ->type_name("DIR");
  cmd->add_option("--seed", args->options.seed, "seed for drawn inputs (default 0)");
  cmd->add_option("--plugin-dir", args->plugin_dirs,
                  "directory of op packs whose evaluators compute the model's custom-domain ops; repeatable")
      ->type_name("DIR");
  return {cmd, [args] {
            for (const auto& text : args->inputs) args->options.inputs.push_back(InputSpec::parse(text));
            std::vector<GivenFlag> flags;
            if (!args->plugin_dirs.empty()) flags.push_back({"--plugin-dir", args->plugin_dirs});
            auto packs = exporter_with_packs(resolve_export_options("", flags).plugin_dirs);
            const RunResult r = run_onnx_file(args->file, args->options, packs.get());
            for (const auto& in : r.inputs) std::cout << "input  " << in << "\n";
            for (const auto& out : r.outputs) {
              std::cout << "output " << out.name << ": " << out.type;
              if (!out.summary.empty()) std::cout << "  (" << out.summary << ")";
              for (const auto& f : out.files) std::cout << "\n         -> " << f;
              std::cout << "\n";
            }
            std::cout << "ran in " << std::fixed << std::setprecision(3) << r.seconds << " s\n";
            return 0;
          }};
}

}  // namespace onnxport::cli
