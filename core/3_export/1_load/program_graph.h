#pragma once
// A torch.export program (program_archive.h) as the TorchScript graph the rest of the export
// takes: each node's ATen operator, found in libtorch's operator table by name and overload, with
// its arguments in schema order (those the program leaves out take the schema's defaults); every
// value typed from the program's tensor_meta, so that prepare adopts the types without running
// the model; parameters, buffers and constants as the graph's constants, named by the program's
// input specs. The export then goes through the same stages and op packs as a TorchScript file's.
#include <string>
#include <vector>

#include "3_export/1_load/load.h"
#include "3_export/1_load/program_archive.h"
#include "onnxport/options.h"

namespace onnxport::core {

// `options` with what the program says where the user said nothing: its user inputs' and outputs'
// names, and a dynamic axis for each dim the program keeps symbolic, named after its symbol ("s0");
// script mode when it holds a torch.cond (kept as If whatever --mode says).
// Whether the reader converts the higher-order operator `target` ("torch.ops.higher_order.cond": as
// prim::If; wrap_with_set_grad_enabled: its region in place); the others are refused in one line.
bool reads_higher_order(const std::string& target);

ExportOptions options_for_program(const ProgramArchive& archive, const ExportOptions& options);

// The program as a graph, with example inputs: `inputs` when given, else --input specs when
// `options_as_given` has any, else the example inputs saved in the archive.
LoadedModel load_program(ProgramArchive& archive, const ExportOptions& options_as_given,
                         std::vector<torch::jit::IValue> inputs);

// The program as a module whose forward is its graph (the parameters its constants), for what
// runs a model by its forward: verify's libtorch side.
torch::jit::Module program_module(ProgramArchive& archive);

}  // namespace onnxport::core
