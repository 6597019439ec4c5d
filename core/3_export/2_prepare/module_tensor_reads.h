#pragma once
// Freezing turns each module tensor a graph reads into a constant, then pools equal constants:
// two BatchNorms' fresh statistics (zeros, ones), or a zero bias and a zero mean, become one
// tensor, and the written graph names it after whichever module came first (layer 2's
// BatchNorm reading `bn1.running_var` as its weight). ModuleTensorReads records, before freezing,
// which module tensor each node input reads, and after freezing gives every input that now reads
// an equal tensor of another module its own tensor back.
#include <torch/script.h>

#include <cstddef>
#include <vector>

namespace onnxport::core {

class ModuleTensorReads {
 public:
  // `graph`: the module's forward, inlined; its input 0 is `module` itself.
  ModuleTensorReads(const torch::jit::Graph& graph, const torch::jit::Module& module);
  // Returns how many inputs were given their own tensor back.
  size_t restore(torch::jit::Graph& graph) const;
  // The tensors nodes of `kind` read as their input `input` (aten::linear's weights: input 1).
  std::vector<at::Tensor> read_as(c10::Symbol kind, size_t input) const;

 private:
  struct Read {
    size_t reader;  // Value::unique() of the reading node's first output: freezing keeps it
    c10::Symbol reader_kind;
    size_t input;
    at::Tensor tensor;
  };
  std::vector<Read> reads_;
};

}  // namespace onnxport::core
