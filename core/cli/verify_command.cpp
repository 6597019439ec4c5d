// onnxport verify MODEL.pt MODEL.onnx: libtorch and onnxport's evaluator on the same inputs.
#include <iostream>
#include <memory>

#include "commands.h"
#include "onnxport/verify.h"

namespace onnxport::cli {

int print_verification(const VerifyResult& result) {
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
      std::cout << "\n";
    }
    for (const auto& name : s.unchecked) std::cout << "  (not compared: " << name << ", past the model's outputs)\n";
  }
  std::cout << "verify: " << result.verdict << "\n";
  if (result.ok) return 0;
  std::cerr << "onnxport: verification failed: " << result.verdict << "\n";
  return 1;
}

Command add_verify_command(CLI::App& app) {
  struct Args {
    std::string model, onnx;
    std::vector<std::string> inputs;
    VerifyOptions options;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "verify", "run MODEL.pt in libtorch and MODEL.onnx in onnxport's evaluator on the same inputs and compare");
  cmd->add_option("model", args->model, "TorchScript file the ONNX file was exported from")->required();
  cmd->add_option("onnx", args->onnx, "ONNX file")->required();
  cmd->add_option("--input", args->inputs,
                  "a graph input's value: NAME=FILE.npy, or NAME:SHAPE[:DTYPE] drawn at random; inputs not given "
                  "are drawn from their ONNX type when it is static; repeatable")
      ->type_name("NAME=FILE.npy|NAME:SHAPE[:DTYPE]");
  cmd->add_option("--samples", args->options.samples,
                  "input sets to compare: the given one, then more drawn like it (dynamic dims grown by one each); "
                  "default 3");
  cmd->add_option("--rtol", args->options.rtol, "relative tolerance (default 1e-3)");
  cmd->add_option("--atol", args->options.atol, "absolute tolerance (default 1e-5)");
  cmd->add_option("--seed", args->options.seed, "seed for drawn inputs (default 0)");
  return {cmd, [args] {
            for (const auto& text : args->inputs) args->options.inputs.push_back(InputSpec::parse(text));
            return print_verification(verify_onnx_file(args->model, args->onnx, args->options));
          }};
}

}  // namespace onnxport::cli
