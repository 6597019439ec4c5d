// onnxport inspect: an ONNX file's graph, readable, or drawn (--dot, --html); a TorchScript
// file's methods, submodules and state (what export can be told to take).
#include <iostream>
#include <memory>

#include "5_cli/commands.h"
#include "onnxport/graph_picture.h"
#include "onnxport/errors.h"
#include "onnxport/model_file.h"
#include "onnxport/program_listing.h"
#include "onnxport/torchscript_listing.h"

namespace onnxport::cli {

Command add_inspect_command(CLI::App& app) {
  struct Args {
    std::string file, html;
    bool dot = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("inspect",
                                 "print an ONNX file's graph, or draw it (--dot, --html); list a TorchScript file's "
                                 "methods with their argument types, submodules and the state its methods write; describe a "
                                 "torch.export program (.pt2): inputs, symbolic dims, operators");
  cmd->add_option("file", args->file, "ONNX file, TorchScript file (.pt) or torch.export program (.pt2)")->required();
  auto* dot = cmd->add_flag("--dot", args->dot,
                            "print the graph as Graphviz DOT text: nodes in clusters by module path, edges labelled "
                            "with their value's type");
  auto* html = cmd->add_option("--html", args->html,
                               "write the graph drawn by Graphviz's dot (needs graphviz on PATH) as one self-contained "
                               "HTML page, with node tooltips: attributes, weights, provenance")
                   ->type_name("FILE.html")
                   ->excludes(dot);
  return {cmd, [args, html] {
            if (is_program_file(args->file)) {
              if (args->dot || html->count())
                throw ConfigError("inspect: '" + args->file + "' is a torch.export program; --dot and --html draw ONNX files",
                                  ErrorContext::with_hint("export it, then draw the .onnx file"));
              std::cout << inspect_program_file(args->file);
            } else if (is_torchscript_file(args->file)) {
              if (args->dot || html->count())
                throw ConfigError("inspect: '" + args->file + "' is a TorchScript file; --dot and --html draw ONNX files",
                                  ErrorContext::with_hint("export it, then draw the .onnx file"));
              std::cout << inspect_torchscript_file(args->file);
            } else if (args->dot) {
              std::cout << graph_dot(args->file);
            } else if (html->count()) {
              write_graph_html(args->file, args->html);
              std::cout << "wrote " << args->html << "\n";
            } else {
              std::cout << inspect_onnx_file(args->file);
            }
            return 0;
          }};
}

}  // namespace onnxport::cli
