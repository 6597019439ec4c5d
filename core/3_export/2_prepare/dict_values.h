#pragma once
// Dicts whose keys are known at export time (torchtext's T5 returns
// {"encoder_output": ..., "encoder_hidden_states": [...], ...}). ONNX has no dict values: a dict
// the graph returns becomes its values, in the dict's order, as separate outputs named after
// their keys; a dict read by constant keys gives the values read. torch.onnx's trace flattens a
// returned dict the same way (its outputs numbered); its script path refuses prim::DictConstruct.
#include <string>
#include <vector>

#include <torch/csrc/jit/ir/ir.h>

namespace onnxport::core {

// Rewrites the top-level graph's dicts built with constant string or int keys:
// `d[k]`, `d.get(k)`, `len(d)`, `k in d` and `d.values()` with k constant are replaced by what they
// give, and a dict the graph returns becomes one output per value. `output_names` gets one name per
// graph output after the rewrite: the key for a value of a returned dict, "" for every other output
// (none at all when no returned dict was rewritten). A dict used otherwise is left as it is.
// Returns how many readers and returned dicts were rewritten.
size_t resolve_constant_key_dicts(torch::jit::Graph& graph, std::vector<std::string>& output_names);

}  // namespace onnxport::core
