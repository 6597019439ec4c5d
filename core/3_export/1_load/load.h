#pragma once
// The load stage: where the model comes from. A .pt file (torch::jit::load), a module the caller
// already holds, or a C++ callable traced on the example inputs; plus those example inputs.
#include <torch/script.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnxport/options.h"
#include "onnxport/types.h"

namespace onnxport::core {

struct LoadedModel {
  // A TorchScript module (from a file or the caller), or else the graph a callable was traced into.
  std::optional<torch::jit::Module> module;
  // Loaded here, or handed over by the caller: prepare freezes it in place instead of cloning it.
  bool module_owned = false;
  // Loaded here from a file: no one outside the export holds the module's tensors.
  bool parameters_private = false;
  std::shared_ptr<torch::jit::Graph> traced_graph;
  std::unordered_map<const void*, std::string> traced_parameter_names;  // storage -> parameter name
  std::vector<torch::jit::IValue> inputs;  // one per forward argument, or per tensor (whole_arguments)
  // `inputs` holds one value per argument, made from --input specs (a tuple argument is one
  // tuple), rather than one per tensor (a tuple argument's tensors one by one, as callers of
  // the C++ and Python APIs give them).
  bool whole_arguments = false;
  std::vector<std::string> warnings;  // what loading noticed, for the report
  // A torch.export program (program_graph.h): "torch.export program, schema 8.2 (PyTorch 2.6.0)".
  std::string program;
  // A program's values by name: each dim as its tensor_meta gives it (a size, a symbol "s0", or
  // unknown for an expression), which ONNX inference does not always find (a Reshape to sizes
  // computed at run time).
  std::unordered_map<std::string, std::vector<Dim>> program_dims;
};

// torch.set_default_dtype(dtype) until destroyed, then the default before it again: a model is
// loaded, run and converted under the default it was written for (ExportOptions::default_dtype).
class DefaultDtypeScope {
 public:
  explicit DefaultDtypeScope(DefaultDtype dtype);
  ~DefaultDtypeScope();
  DefaultDtypeScope(const DefaultDtypeScope&) = delete;
  DefaultDtypeScope& operator=(const DefaultDtypeScope&) = delete;

 private:
  caffe2::TypeMeta before_;
};

// torch::jit::load with onnxport's errors (ModelError naming the file and what to do) and
// the op library of torchvision or torchaudio loaded when the model calls their ops.
torch::jit::Module load_torchscript_file(const std::string& path);
// A scripted nn.LSTM/GRU/RNN has no `forward` in torch 1.13, only its overloads (forward__0 for a
// Tensor, forward__1 for a PackedSequence): defines `forward` as the first that takes a tensor, as
// calling the module with one would pick. ModelError when there is neither.
void define_forward_from_overload(torch::jit::Module& module);
// Makes `graph` (with `schema`) the module's forward, in place of any forward it has.
void define_forward(torch::jit::Module& module, const std::shared_ptr<torch::jit::Graph>& graph,
                    const c10::FunctionSchema& schema);
// The module whose forward the export takes: the loaded one, or its submodule options.submodule
// ("encoder.layers.0"), with options.method (when not forward) made its forward. ConfigError
// naming what there is when either is missing.
torch::jit::Module select_export_target(const torch::jit::Module& loaded, const ExportOptions& options,
                                        const std::string& path);
// "forward", "_model.forward", "encode" (for messages).
std::string export_target_name(const ExportOptions& options);
// `inputs` empty: made from options.inputs (random with options.seed, or .npy files).
// Tensor specs only, for a method taking a tuple of tensors (an LSTM's hx): the tuple's tensors
// are given one by one, as the C++ API takes them and --input took them before it took tuples.
// Otherwise each spec is one whole argument.
bool tuple_elements_one_by_one(const std::vector<InputSpec>& specs, const c10::FunctionSchema& schema);
// `whole_arguments`: `inputs` holds one value per argument (LoadedModel::whole_arguments).
LoadedModel load_model_file(const std::string& path, const ExportOptions& options,
                            std::vector<torch::jit::IValue> inputs, bool whole_arguments = false);
// `handed_over`: the caller will not use the module again (Exporter::export_module(Module&&)).
LoadedModel load_module(const torch::jit::Module& module, std::vector<torch::jit::IValue> inputs,
                        bool handed_over = false);
LoadedModel load_traced_function(const std::function<torch::jit::IValue(std::vector<torch::jit::IValue>)>& fn,
                                 std::vector<torch::jit::IValue> inputs,
                                 const std::map<std::string, at::Tensor>& named_parameters);

}  // namespace onnxport::core
