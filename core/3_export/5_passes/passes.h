#pragma once
// ONNX passes over the core's ONNX IR, one per file (pass_*.cpp), and the stage that runs them
// after conversion (passes.cpp). Each works on a hand-built OnnxModel as well as an exported one.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "1_base/onnx_ir.h"
#include "onnxport/options.h"

namespace onnxport::core {

class TransposesAhead;  // 2_eval/transposes_ahead.h

// What the passes may do with the parameters' bytes besides reading them.
struct ParameterBytes {
  // The Linear weights' transposes, made on another thread: the fold takes these copies.
  TransposesAhead* transposed_ahead = nullptr;
  // Nothing outside the export holds the parameters any more (a file it loaded, its module and
  // TorchScript graph gone): a Transpose that is the last reader of a value whose bytes no other
  // value shares writes its result over those bytes, instead of into memory the process has not
  // touched yet (docs/benchmarks.md: on some guests fresh pages cost more than the transpose).
  bool private_to_export = false;
};

// pass_support.cpp, shared by the passes.
// Who reads each value (node inputs, sub-graph captures and graph outputs each count once) and
// which node makes it (an index into model.nodes).
struct ValueUses {
  std::unordered_map<std::string, int> readers;
  std::unordered_map<std::string, size_t> producer;
  explicit ValueUses(const OnnxModel& model);
  int count(const std::string& name) const;
};
const Initializer* find_initializer(const OnnxModel& model, const std::string& name);
// The value of an initializer or of a Constant node's output; nothing for any other value.
std::optional<Tensor> constant_value(const OnnxModel& model, const std::string& name, const ValueUses& uses);
// What the model knows of each value's type: graph inputs, initializers, per-node inference.
std::unordered_map<std::string, TensorType> known_types(const OnnxModel& model);
// The same for one value, looked up when asked (and as the model holds it then): for passes that
// look at a few values of a large graph.
class TypeLookup {
 public:
  explicit TypeLookup(const OnnxModel& model) : model_(model) {}
  std::optional<TensorType> operator()(const std::string& name) const;
  // Its dims, when its rank is known.
  std::optional<std::vector<Dim>> dims(const std::string& name) const;

 private:
  const OnnxModel& model_;
};
// A Transpose's perm. Without the attribute it reverses the dims, which takes the input's `rank`:
// nothing when that is not given.
std::optional<std::vector<int64_t>> transpose_perm(const onnx::NodeProto& transpose,
                                                   std::optional<size_t> rank = std::nullopt);
// "conv" of ("conv.weight", ".weight"): the module a parameter name belongs to; "" when the name
// does not end in `suffix` after a module path.
std::string module_of(const std::string& parameter, const std::string& suffix);
// The names of the graph's inputs, outputs and node outputs: what a new initializer must not take.
std::unordered_set<std::string> value_names(const OnnxModel& model);
// The name of a bias a fusion gives a node that had none: "conv.weight" -> "conv.bias" when that
// name is free, else `fallback`.
std::string bias_name_for(const std::string& weight_name, const std::string& fallback, const OnnxModel& model,
                          const ValueUses& uses);
// op, domain, inputs and attributes (by name, serialized): for a node whose outputs depend only on
// its inputs and attributes, equal keys compute equal values. With `versions`, an input's name is
// keyed with its version (a pass that binds one name to successive values counts them there).
std::string node_key(const onnx::NodeProto& node, const std::unordered_map<std::string, int>* versions = nullptr);
// Small constants a pass makes (Reshape targets), written as Constant nodes as the export writes
// them (an initializer would count as parameter bytes): collected while the pass holds node
// indices, then put first in the graph, which is always a valid place for a node reading nothing.
class NewConstants {
 public:
  explicit NewConstants(const OnnxModel&) {}
  // The name of a new Constant of `value`, "<base>_target" or the first free "<base>_target_N".
  std::string add(OnnxModel& model, const std::string& base, const Tensor& value);
  void place(OnnxModel& model);

 private:
  std::unordered_set<std::string> taken_;  // the model's names, gathered at the first add
  bool gathered_ = false;
  std::vector<OnnxNode> nodes_;
};

// Ends a fusion: drops the nodes marked in `drop` and the initializers named in `replaced`, then
// appends `added` (the rewritten and new initializers).
void apply_rewrite(OnnxModel& model, const std::vector<bool>& drop, const std::unordered_set<std::string>& replaced,
                   std::vector<Initializer> added);

// pass_dead_code.cpp: removes nodes whose outputs nobody reads (sub-graphs' captured names
// count as reads) and initializers nobody uses (and duplicate initializer names).
void eliminate_dead_code(OnnxModel& model);

// pass_fold_constants.cpp: evaluates nodes whose inputs are all constants (initializers,
// Constant nodes, or Shape of a value whose shape is fully static) with the ONNX evaluator and
// replaces them with initializers named after the output they replace. Graph outputs are kept.
// A value that is one parameter's values through the folded ops (a Linear weight's Transpose)
// is named after the parameter: under its name when the parameter itself is no longer read, else
// "<parameter>_transposed" ("_<Op>" for other ops); its doc_string says what was done. A node
// that repeats an earlier fold (a pooled weight transposed by two layers) reads that fold's value.
// parameters_are_constant: false with export_params=false (parameters are then graph inputs).
struct FoldStats {
  size_t folded_nodes = 0;
  size_t transposes_over_weights = 0;  // of those, Transposes written over their input's bytes
};
// A Transpose of a parameter transposed ahead takes that copy; see ParameterBytes.
FoldStats fold_constants(OnnxModel& model, int opset, bool parameters_are_constant, ParameterBytes bytes = {});

// pass_fuse_conv_bn.cpp, eval mode only (as torch.onnx does): a Conv whose only consumer is an
// inference BatchNormalization with constant statistics becomes one Conv with folded weight and
// bias, which keep the conv's parameter names. A weight or bias other nodes also read (TorchScript's
// constant pooling makes one all-zero tensor several biases and BatchNorm means) stays for them
// as it is; the fused tensor is a new one, named after the conv's unshared parameter ("conv.bias"
// for a conv whose weight is "conv.weight"), else "<BN output>_fused_weight|bias". With
// `weights_private` (ParameterBytes::private_to_export) a weight that only its pair's Conv reads,
// whose bytes no other initializer shares, takes its fused values in place. Returns the number of
// fused pairs.
size_t fuse_conv_batchnorm(OnnxModel& model, bool weights_private = false);

// pass_remove_noops.cpp: removes nodes that give their input back unchanged (Identity; Cast to
// the input's own type; Transpose by the identity permutation; Reshape, Expand, Flatten or
// Squeeze whose static output shape is the input's; Dropout in inference, its mask unread).
// Readers of the output read the input instead; a node making a graph output stays. Returns
// the removed nodes by op type.
std::map<std::string, size_t> remove_noops(OnnxModel& model, int opset, bool inference);

// pass_concats.cpp: a Concat reading a Concat along the same axis that only it reads takes that
// one's inputs in its place (torch.cat of a list holding a torch.cat: inception's blocks). The
// inner Concats are left unread, for dead-code elimination. Returns the number joined.
size_t merge_concats(OnnxModel& model);

// pass_transposes.cpp: a Transpose of a Transpose only it reads becomes one Transpose by the
// composed permutation (no-op removal then drops an identity). Returns the number merged.
size_t merge_transposes(OnnxModel& model);

// pass_transposes.cpp: a Transpose that keeps the last axis in place moves across the ops that
// treat every leading position alike (elementwise with a constant of rank <= 1, MatMul by a 2-d
// constant, unary ops, a Split or a Reshape of the last axis) to the Transposes those paths end
// in, down to them or up to the one its input comes from, and joins them: a batch-first
// attention's transposes around its projections. Types and Reshape targets on the way follow.
// Returns the number of Transposes removed.
size_t move_transposes_to_transposes(OnnxModel& model);

// pass_reshapes.cpp: a Gemm between two Reshapes that flatten the leading dims and restore them
// (nn.Linear on a 3-d value as multi-head attention's output projection calls it) becomes a
// MatMul (and Add of its bias) on the value with only its trailing dims flattened; a transposed
// weight is the initializer "<weight>_transposed". So the leading dims stay apart for the
// Transposes around it to move across. Returns the number rewritten.
size_t linear_between_reshapes(OnnxModel& model);

// pass_reshapes.cpp: a Reshape, Transpose, Reshape chain whose last Reshape only splits dims (as
// multi-head attention's q.view(L, B*H, d).transpose(0, 1).view(B, H, L, d)) becomes one Reshape
// that splits them first and one Transpose: Reshape(x, [L, B, H, d]), Transpose(1, 2, 0, 3).
// Needs the dims from the types (sizes, or symbols that pair up; one dim of the middle shape may
// be unknown, as its split is then what the element count leaves). Returns the chains merged.
size_t merge_reshape_transpose_reshape(OnnxModel& model);

// pass_reshapes.cpp: a Reshape whose target is computed at run time (a view's sizes taken
// from symbolic dims: Shape, Gather, Mul, Concat) gets a constant target where its output's type
// says enough (a torch.export program's tensor_meta gives it): each dim's size, 0 where it is the
// input's dim at that place (the same symbol), -1 for one other. The nodes that computed the
// target then go as dead code. Returns the number of targets made constant.
size_t constant_reshape_targets(OnnxModel& model);

// pass_cse.cpp: common-subexpression elimination. A standard-domain node without sub-graphs
// that repeats an earlier node's op, inputs and attributes is dropped and its outputs read from
// the earlier one (random ops and custom domains excepted). Returns the number dropped.
size_t eliminate_common_subexpressions(OnnxModel& model);

// pass_dedup_initializers.cpp: initializers with equal dtype, shape and bytes (tied weights,
// repeated constants) become the first of them. Returns the number removed.
size_t deduplicate_initializers(OnnxModel& model);

// pass_fuse_bias.cpp: a constant added to (or subtracted from) a value that only the Add reads
// joins the node that made the value: Conv/ConvTranspose + per-output-channel constant -> the
// bias; Gemm + constant -> its C (beta*C + c, beta 1); MatMul of two 2-d values + constant -> Gemm.
// Float tensors only. Returns the number of Adds removed.
size_t fuse_bias_adds(OnnxModel& model, int opset);

// pass_drop_unused_inputs.cpp: removes graph inputs that no node reads (sub-graph captures count)
// and that are no graph output, as torch.onnx does (options.drop_unused_inputs). An input that
// before folding reached a Shape node (other than aten::size's, which torch.onnx folds first)
// stays where torch.onnx keeps it: the folded shape is read by a node that also reads a variable
// (Expand(y, Shape(x)), view_as), or it is the shape of a 0-d value. An input marked `keep` stays;
// if nothing reads it and forward declares it Optional, it becomes optional-typed (opset 15+).
// Returns the names dropped.
struct ShapeReads {
  struct Read {
    std::string output, input;
    bool of_scalar;
  };
  std::unordered_map<std::string, std::vector<std::string>> made_from;  // node output -> the node's inputs
  std::vector<Read> shapes;                                             // every Shape node
};
ShapeReads record_shape_reads(const OnnxModel& model);
std::vector<std::string> drop_unused_inputs(OnnxModel& model, const ShapeReads& before_folding);

// The ONNX-passes stage, by options.optimize:
//   0: what torch.onnx does: dead code, constant folding (do_constant_folding), Conv+BN fusion
//      (eval mode with parameters), each followed by dead-code elimination when it changed something;
//   1 (default): then Reshape-Transpose-Reshape and Transpose-Transpose merging, no-op removal,
//      constant Reshape targets from the types, initializer deduplication (parameters written as
//      initializers only) and common-subexpression elimination: rewrites that compute exactly
//      what the graph computed before;
//   2: then bias fusion, which adds the constants in another order (results may differ in the
//      last bits, as with Conv+BN fusion).
// With options.drop_unused_inputs, graph inputs nothing reads after folding and Conv+BN fusion
// are dropped (as torch.onnx drops them after its folding).
struct PassStats {
  size_t folded_nodes = 0;
  size_t transposes_over_weights = 0;
  size_t fused_conv_bn = 0;
  size_t fused_bias_adds = 0;
  std::map<std::string, size_t> removed_noops;
  size_t constant_reshape_targets = 0;
  size_t merged_reshape_chains = 0;
  size_t merged_transposes = 0;
  size_t merged_concats = 0;
  size_t linears_between_reshapes = 0;
  size_t moved_transposes = 0;
  size_t merged_nodes = 0;
  size_t deduplicated_initializers = 0;
  size_t removed_dead_nodes = 0;
  std::vector<std::string> dropped_inputs;
  // One line per pass that changed something, for --verbose: "constant folding: 12 nodes folded".
  std::vector<std::string> summary() const;
};
PassStats run_onnx_passes(OnnxModel& model, const ExportOptions& options, ParameterBytes bytes = {});

}  // namespace onnxport::core
