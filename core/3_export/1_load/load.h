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

namespace onnxport::core {

struct LoadedModel {
  // A TorchScript module (from a file or the caller), or else the graph a callable was traced into.
  std::optional<torch::jit::Module> module;
  // Loaded here, or handed over by the caller: prepare freezes it in place instead of cloning it.
  bool module_owned = false;
  std::shared_ptr<torch::jit::Graph> traced_graph;
  std::unordered_map<const void*, std::string> traced_parameter_names;  // storage -> parameter name
  std::vector<torch::jit::IValue> inputs;                               // one per forward argument
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
// `inputs` empty: made from options.inputs (random with options.seed, or .npy files).
LoadedModel load_model_file(const std::string& path, const ExportOptions& options,
                            std::vector<torch::jit::IValue> inputs);
// `handed_over`: the caller will not use the module again (Exporter::export_module(Module&&)).
LoadedModel load_module(const torch::jit::Module& module, std::vector<torch::jit::IValue> inputs,
                        bool handed_over = false);
LoadedModel load_traced_function(const std::function<torch::jit::IValue(std::vector<torch::jit::IValue>)>& fn,
                                 std::vector<torch::jit::IValue> inputs,
                                 const std::map<std::string, at::Tensor>& named_parameters);

}  // namespace onnxport::core
