#pragma once
// The conversion driver's internals, shared by convert.cpp (nodes and symbolics),
// mutation.cpp (in-place ops and writes through views) and control_flow.cpp (If/Loop).
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "3_export/3_convert/convert.h"
#include "3_export/2_prepare/torch_graph.h"
#include "onnxport/errors.h"

namespace onnxport::core {

// How a node's schema says it aliases and writes its inputs.
struct AliasInfo {
  std::vector<size_t> written_inputs;          // "(a!)" arguments
  std::optional<size_t> output_aliases_input;  // output 0 shares an alias set with this input
};
AliasInfo alias_info_of(const torch::jit::Node* n);
// How many trailing arguments of an out= overload (aten::div.out(self, other, *, Tensor(a!) out))
// the op writes its results into, one per output; 0 for every other op.
size_t out_arguments(const torch::jit::Node* n);

class ConstantMapper;
// Each operator schema's printed form, made once per schema (libtorch keeps the schemas for the process).
using SchemaTexts = std::unordered_map<const c10::FunctionSchema*, std::string>;

class Converter {
 public:
  Converter(const PreparedGraph& prepared, const ConvertContext& ctx, GraphBuilder& builder, OnnxModel& model);
  ~Converter();
  ConvertStats run();

  // --- shared by the pieces ---
  Value* lookup(const torch::jit::Value* v);
  void bind(const torch::jit::Value* v, Value* value) { env_[v] = value; }
  void convert_block(const torch::jit::Block* block);
  GraphBuilder& builder() { return builder_; }
  const ConvertContext& ctx() const { return ctx_; }
  // Calls the registered symbolic for `kind` on values (for writes through views).
  Value* call_symbolic(const std::string& kind, const torch::jit::Node* origin, const std::vector<Value*>& args);
  Value* cast_to(Value* v, DType dtype);
  ErrorContext error_context(const torch::jit::Node* n) const;
  // The origin recorded on the ONNX nodes made for `n` (its source only when ctx.record_sources).
  NodeOrigin core_origin(const torch::jit::Node* n) const;
  std::string module_path(const torch::jit::Node* n) const;
  std::string origin_source(const torch::jit::Node* n) const;
  void count_core_op(const torch::jit::Node* n) { ++stats_.core_ops[n->kind().toQualString()]; }

  std::unordered_set<const Value*> uninitialized;  // prim::Uninitialized placeholders
  // During a dry run (DryRunScope), the dtype of what aten::append/insert adds to each list (by root value).
  std::unordered_map<const torch::jit::Value*, DType>* observed_appends = nullptr;

  struct Snapshot {
    std::unordered_map<const torch::jit::Value*, Value*> env;
    std::unordered_set<const torch::jit::Value*> stale;
    std::unordered_map<const torch::jit::Value*, Value*> presence;
  };
  Snapshot snapshot() const { return {env_, stale_, presence_}; }
  void restore(Snapshot s) {
    env_ = std::move(s.env);
    stale_ = std::move(s.stale);
    presence_ = std::move(s.presence);
  }

  // A conversion whose nodes are discarded, run to learn what a loop body appends to its lists:
  // while alive, appends are recorded in `observed` and the builder skips strict schema checks.
  // When it ends (also when the dry run throws) both, and the converter's bindings, are put back.
  class DryRunScope {
   public:
    DryRunScope(Converter& converter, std::unordered_map<const torch::jit::Value*, DType>& observed);
    ~DryRunScope();
    DryRunScope(const DryRunScope&) = delete;
    DryRunScope& operator=(const DryRunScope&) = delete;

   private:
    Converter& converter_;
    bool strict_;
    Snapshot bindings_;
  };

  // mutation.cpp
  void analyze_aliases(const torch::jit::Block* block);
  const torch::jit::Value* root_of(const torch::jit::Value* v) const;
  // Values defined outside `n` that its blocks write (lists appended to, tensors updated).
  std::vector<const torch::jit::Value*> written_outer_values(const torch::jit::Node* n) const;
  // `v` now holds `updated`: write it back through the views it came from, and mark other
  // views of the same storage for recomputation.
  void rebind(const torch::jit::Value* v, Value* updated);
  void apply_mutations(const torch::jit::Node* n, const std::vector<Value*>& outs, size_t num_outputs);

  // control_flow.cpp
  // The dtype, rank and number-ness an If output has, for a branch's placeholder to match.
  struct OutputForm {
    DType dtype = DType::Undefined;
    std::optional<int64_t> rank;
    bool scalar = false;
    // What is not known yet, taken from a branch's tensor.
    void complete_from(const Value& v) {
      if (dtype != DType::Undefined && rank) return;
      if (dtype == DType::Undefined) dtype = v.dtype();
      if (!rank) rank = v.rank();
      scalar = v.is_scalar();
    }
  };
  void convert_if(const torch::jit::Node* n);
  // A dry run of `block` (nodes discarded) for the forms of its tensor outputs `outputs`.
  void learn_output_forms(const torch::jit::Block* block, const std::vector<size_t>& outputs,
                          std::vector<OutputForm>& forms);
  void convert_loop(const torch::jit::Node* n);
  // A for loop with a constant trip count that reads a list known element by element (a list of
  // lists has no ONNX form; a sequence loses its elements' shapes) is unrolled: its count, or nullopt.
  std::optional<int64_t> unrollable_trip_count(const torch::jit::Node* n);
  void unroll_loop(const torch::jit::Node* n, int64_t trips);
  void loop_pass(const torch::jit::Node* n, const std::vector<const torch::jit::Value*>& written,
                 const std::vector<DType>& element_dtypes, Value* trip_count, Value* start_cond, bool dry_run);
  Value* as_sequence(Value* v, DType element_hint);

  // optional_values.cpp: values None on some paths, carried as a tensor and a presence flag.
  // Whether a branch output may be None at run time.
  bool may_be_none(const torch::jit::Value* branch_output) const;
  // The outputs of If node `n` that may be None on one path (but not on all).
  std::vector<size_t> outputs_maybe_none(const torch::jit::Node* n) const;
  // Inside a branch: whether its output is present (a bool value).
  Value* presence_in_branch(const torch::jit::Value* branch_output);
  void bind_maybe_none(const torch::jit::Value* v, Value* tensor, Value* present);
  // The outputs of If node `n` that become ONNX optionals (opset 16 and later): the maybe-None
  // ones it gives straight to the graph's outputs (instead of a tensor and a flag), and the
  // Optional ones a branch gives as an ONNX optional already.
  std::vector<bool> optional_outputs(const torch::jit::Node* n, const std::vector<size_t>& maybe_none) const;
  // Per value prim::Loop `n` carries: whether it may be None and the graph returns it.
  std::vector<bool> returned_optional_carries(const torch::jit::Node* n) const;
  // The element type of a carried optional: the initial value's, else the body's result's.
  TensorType carried_element_type(const Value* initial, const torch::jit::Value* body_result) const;
  // `value` (the conversion of `torch_value`: a tensor, None, a maybe-None tensor or an optional)
  // as an ONNX optional of `element`.
  Value* as_optional(const torch::jit::Value* torch_value, Value* value, const TensorType& element);
  // Converts `n` if it reads a value None on some paths (a test for None or a refinement) and
  // returns true; throws for any other reader; false if `n` reads none.
  bool convert_maybe_none_reader(const torch::jit::Node* n);
  bool read_maybe_none(const torch::jit::Node* n, const torch::jit::Value* optional,
                       const std::function<Value*()>& present, const std::function<Value*()>& element,
                       const std::string& what);
  DType appended_dtype(const torch::jit::Block* block, const torch::jit::Value* list) const;

 private:
  void convert_node(const torch::jit::Node* n);
  std::vector<Value*> run_symbolic(const torch::jit::Node* n, const std::vector<Value*>& args);
  // The entry converting a node that reads or makes complex values; throws when there is none.
  const RegistryEntry* complex_entry(const torch::jit::Node* n);
  // `v` made for `torch_value`, marked complex (or not) as its TorchScript type says.
  Value* with_complex_flag(const torch::jit::Value* torch_value, Value* v, const std::vector<Value*>& args);
  Value* refresh_view(const torch::jit::Value* v);
  Value* write_back(const torch::jit::Node* view, Value* base, Value* updated);
  void mark_views_stale(const torch::jit::Value* base);
  void refresh_containers(const torch::jit::Value* list);

  const PreparedGraph& prepared_;
  const ConvertContext& ctx_;
  GraphBuilder& builder_;
  OnnxModel& model_;
  ConvertStats stats_;
  bool static_dims_;
  std::unique_ptr<ConstantMapper> constants_;
  mutable SourceLocations sources_;
  SchemaTexts schema_texts_;
  std::unordered_map<const torch::jit::Value*, Value*> env_;
  // Values None on some paths (their env_ entry is the tensor) -> whether present (bool).
  std::unordered_map<const torch::jit::Value*, Value*> presence_;
  // Module attributes still read through `self`: attribute path and object.
  std::unordered_map<const torch::jit::Value*, std::pair<std::string, c10::IValue>> attributes_;
  std::unordered_map<const torch::jit::Value*, std::string> attribute_paths_;
  // v -> (the value it is a view or in-place alias of, the node that made it)
  std::unordered_map<const torch::jit::Value*, std::pair<const torch::jit::Value*, const torch::jit::Node*>>
      view_parent_;
  std::unordered_map<const torch::jit::Value*, std::vector<const torch::jit::Value*>> view_children_;
  std::unordered_set<const torch::jit::Value*> stale_;  // views whose base changed since they were made
  // list -> the lists and tuples built from it (prim::ListConstruct of lists), which hold it
  std::unordered_map<const torch::jit::Value*, std::vector<const torch::jit::Value*>> containers_;
};

}  // namespace onnxport::core
