// onnxport check: the ONNX checker and shape inference on a file, as a one-line verdict.
#include <iostream>
#include <memory>

#include "5_cli/commands.h"
#include "onnxport/model_file.h"

namespace onnxport::cli {

Command add_check_command(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("check", "run the ONNX checker and shape inference on a file");
  cmd->add_option("file", *file, "ONNX file")->required();
  return {cmd, [file] {
            std::cout << *file << ": " << check_onnx_file(*file) << "\n";
            return 0;
          }};
}

}  // namespace onnxport::cli
