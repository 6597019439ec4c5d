#pragma once
// The TorchScript side: what the prepare stage produces (PreparedGraph), running graphs to record
// types, and reading dtypes, module paths and source lines off JIT values and nodes.
#include <torch/script.h>

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "2_eval/transposes_ahead.h"
#include "onnxport/options.h"
#include "1_base/torch_tensors.h"
#include "onnxport/types.h"

namespace onnxport::core {

// The prepared graph run once more with every dynamic input axis grown (resized_run.h).
struct ResizedRun {
  std::string inputs;   // what grew: "x 1x3 -> 2x3, y 4 -> 5"; empty when no input has a dynamic axis
  std::string failure;  // why no grown inputs ran the model (the last line of its error), or empty
  // Each top-level tensor value's sizes in that run.
  std::unordered_map<const torch::jit::Value*, std::vector<int64_t>> sizes;
  // When a trace replaced the graph: the graph outputs' sizes (flattened, in order) of the graph
  // as it was before, run on the same grown inputs (a traced graph keeps the sizes it was traced at);
  // nullopt for an output that was None.
  std::vector<std::optional<std::vector<int64_t>>> untraced_output_sizes;
  bool ran() const { return !inputs.empty() && failure.empty(); }
};

struct PreparedGraph {
  std::shared_ptr<torch::jit::Graph> graph;
  // The functions the graph's inlined nodes name (their call stacks point at them, and the
  // interpreter's error report reads them): those of the module it was frozen from, kept while
  // the graph lives, also where libtorch 2.6 frees the module itself.
  std::shared_ptr<torch::jit::CompilationUnit> functions;
  // Parameter/buffer storage -> its path in the module ("features.0.weight").
  std::unordered_map<const void*, std::string> tensor_names;
  std::vector<at::Tensor> example_tensors;  // one per graph input (after `self`)
  // One per graph input (after `self`): the name its --input spec gives ("hc.0" for a tuple's
  // first element), "" where none does.
  std::vector<std::string> input_names;
  // One per graph output, or none: the key of a returned dict's value (dict_values.h), "" for the
  // others.
  std::vector<std::string> output_names;
  // The module tensors the method assigns ("_state"), and their values in the model file. With
  // state_io (--state-io) they are the last graph inputs, their new values the last outputs.
  std::vector<std::string> state_paths;
  std::vector<at::Tensor> state_loaded;
  bool state_io = false;
  // The state inputs and outputs whose sizes calls change (state_start.h), axis -> dim name: the
  // export adds them to its dynamic axes.
  std::map<std::string, std::map<int64_t, std::string>> state_dynamic_axes;
  // When the graph still reads module attributes (training mode keeps mutated buffers such
  // as BatchNorm running stats), input 0 is `self` and prim::GetAttr chains resolve here.
  std::optional<torch::jit::Module> self;
  // The graph keeps TorchScript control flow (script mode): types inside it come from ONNX
  // inference, recorded types give dtypes and ranks only.
  bool scripted = false;
  std::string mode_reason;            // why trace or script (ExportMode::Auto), for --verbose
  bool from_program = false;          // a torch.export program: neither traced nor scripted
  std::unordered_map<std::string, std::vector<Dim>> program_dims;  // LoadedModel::program_dims
  std::vector<std::string> warnings;  // e.g. data-dependent branches a trace fixed
  ResizedRun resized;                 // with dynamic axes and their check on
  // Per example input (tuples flattened): torch.onnx keeps it in the graph where onnxport may
  // resolve at export time what reads it. It reaches a list the model manipulates at run time,
  // which torch.onnx keeps as an ONNX sequence, or a branch of an `is None` test of a tuple
  // input's element, which torch.onnx does not fold.
  std::vector<bool> inputs_torch_onnx_keeps;
  // Per example input, alongside: declared Optional by a scripted forward (torch.onnx gives such an
  // input an optional type, so that it may be left out where nothing reads it).
  std::vector<bool> inputs_declared_optional;
  // The Linear weights' transposes, made on a second thread from the time the graph is final;
  // none where the parameters are private (LoadedModel::parameters_private): the fold then writes
  // each over its own weight (ParameterBytes).
  std::shared_ptr<TransposesAhead> transposes;
  bool parameters_private = false;
  // Trace mode on control flow: the graph before the trace and its `self`, for the resized run.
  std::shared_ptr<torch::jit::Graph> untraced;
  std::optional<torch::jit::Module> untraced_self;
};

// dtypes and ranks from TorchScript's shape propagation (run on a copy) for tensor values whose
// type has none, including those inside blocks.
void propagate_dtypes(const std::shared_ptr<torch::jit::Graph>& graph, const std::vector<torch::jit::IValue>& inputs,
                      size_t self_inputs);

// Run a graph once on example inputs and set concrete types on its top-level values. A failure
// is a one-line ModelError naming the node that failed; with `full_traceback`, TorchScript's
// whole error text follows on the next lines (--verbose).
void record_types(torch::jit::Graph& graph, const std::vector<torch::jit::IValue>& inputs,
                  bool full_traceback = false);
// The types a graph's values already carry, when they are what record_types would record: the
// graph of a trace made in this process on these inputs has every tensor's dtype, device, sizes
// and strides from the run it was made by. True when every top-level tensor value has a complete
// type, the graph's tensor inputs have the types of `inputs`, and no node holds blocks; else
// nothing is changed.
bool adopt_traced_types(torch::jit::Graph& graph, const std::vector<torch::jit::IValue>& inputs);
// "float32[1,3,224,224]" for a tensor type with dtype and sizes, else the type's own text.
std::string type_text(const c10::TypePtr& type);
// Run a graph with TorchScript's plain interpreter (no profiling executor, no optimisation).
void run_graph(const std::shared_ptr<torch::jit::Graph>& graph, torch::jit::Stack& stack);
// Run a graph once and return every top-level tensor value it computed (graph inputs too).
// `copy_values`: each value is copied as soon as it is computed, so that what is returned is
// its value then, not what later in-place ops (relu_, add_) made of its storage.
std::vector<std::pair<const torch::jit::Value*, at::Tensor>> run_and_collect(
    const torch::jit::Graph& graph, const std::vector<torch::jit::IValue>& inputs, bool copy_values = false);

TensorType tensor_type_of(const torch::jit::Value* v, bool keep_static_dims);
// A TorchScript int, float or bool (a 0-d tensor in the ONNX graph).
bool is_number_type(const c10::TypePtr& type);
// Complex tensors are carried as real pairs (Value::is_complex): the pair's type of a complex type.
bool is_complex_dtype(DType t);
TensorType real_pair_type(TensorType complex);
// Whether the traced or scripted type of `v` is a complex tensor; nullopt when its dtype is unknown.
std::optional<bool> holds_complex_tensor(const torch::jit::Value* v);

// Every method and function call in `graph` replaced by the callee's graph, recursively, as
// torch::jit::Inline does, but from each callee's own graph: Inline first makes and caches each
// callee's optimized graph (alias analysis and peepholes per callee: most of freezing's time on a
// large traced model), which freezing, optimizing the inlined whole, does not need. Callees are
// only read.
void inline_calls(torch::jit::Graph& graph);

// The complete tensor types of a graph's top-level values, kept across a pass that drops them:
// freezing types every value plain Tensor, the types a trace made in this process had. Values are
// known by Value::unique(), which a graph never gives twice, so a value the pass made gets nothing.
// Restored only into a graph without control flow, the graph adopt_traced_types takes.
class CompleteTypes {
 public:
  explicit CompleteTypes(const torch::jit::Graph& graph);
  void restore(torch::jit::Graph& graph) const;

 private:
  std::unordered_map<size_t, c10::TypePtr> types_;
};

// "features.0" from the node's inlined call stack ("" if it has none).
std::string module_path_of(const torch::jit::Node* node);
std::string source_of(const torch::jit::Node* node);

// source_of for the nodes of a conversion, each distinct source range looked up once: in a
// loaded model the lookup goes through the archive's debug info, and the nodes inlined from one
// scripted function at several call sites share their ranges (a traced model's nodes mostly
// have ranges of their own).
class SourceLocations {
 public:
  const std::string& of(const torch::jit::Node* node);

 private:
  struct Entry {
    std::shared_ptr<torch::jit::Source> source;  // keeps the key's pointer valid
    std::string location;
  };
  std::map<std::tuple<const torch::jit::Source*, size_t, size_t>, Entry> known_;
};

}  // namespace onnxport::core
