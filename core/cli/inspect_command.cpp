// onnxport inspect: an ONNX file's graph, readable.
#include <iostream>
#include <memory>

#include "commands.h"
#include "onnxport/model_file.h"

namespace onnxport::cli {

Command add_inspect_command(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("inspect", "print an ONNX file's graph");
  cmd->add_option("file", *file, "ONNX file")->required();
  return {cmd, [file] {
            std::cout << inspect_onnx_file(*file);
            return 0;
          }};
}

}  // namespace onnxport::cli
