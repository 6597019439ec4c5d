#include "3_export/2_prepare/prepare.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/inline_fork_wait.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/lower_tuples.h>

#include <algorithm>
#include <set>

#include "3_export/2_prepare/argument_inputs.h"
#include "3_export/2_prepare/attribute_writes.h"
#include "3_export/2_prepare/copy_sources.h"
#include "3_export/2_prepare/dict_values.h"
#include "3_export/2_prepare/export_mode.h"
#include "3_export/2_prepare/export_time_facts.h"
#include "3_export/2_prepare/unroll_list_loops.h"
#include "onnxport/errors.h"
#include "3_export/2_prepare/quantized_inputs.h"
#include "3_export/2_prepare/quantized_weights.h"
#include "3_export/2_prepare/module_tensor_reads.h"
#include "3_export/2_prepare/resized_run.h"
#include "3_export/2_prepare/packed_projection.h"
#include "3_export/2_prepare/state_start.h"
#include "3_export/2_prepare/straight_line_freeze.h"

namespace onnxport::core {

namespace {

bool has_fork(const torch::jit::Block* block) {
  for (const auto* n : block->nodes()) {
    if (n->kind() == c10::prim::fork) return true;
    for (const auto* b : n->blocks())
      if (has_fork(b)) return true;
  }
  return false;
}

// torch.jit.fork(f, x) ... torch.jit.wait(future): an ONNX graph runs the forked call in place, as
// torch.onnx does; the call it brings in is then inlined like the others.
void inline_fork_wait(const std::shared_ptr<torch::jit::Graph>& graph) {
  if (!has_fork(graph->block())) return;
  torch::jit::InlineForkWait(graph);
  torch::jit::Inline(*graph);
}

// How many example inputs an argument of this type takes: tuples are flattened (an LSTM's
// (h0, c0) is two inputs), and an Optional that is given takes what its element takes.
size_t example_inputs_taken(const c10::TypePtr& type) {
  if (auto tuple = type->cast<c10::TupleType>()) {
    size_t n = 0;
    for (const auto& e : tuple->elements()) n += example_inputs_taken(e);
    return n;
  }
  if (auto optional = type->cast<c10::OptionalType>()) return example_inputs_taken(optional->getElementType());
  return 1;
}

// forward() arguments after the given example inputs take their default values (as calling the
// module with fewer arguments does): they become constants and leave the graph's inputs. The
// Optional arguments that are given are refined to their element type, so that `hx is None`
// tests fold and the tuples inside can be flattened.
// `whole`: one example value per argument (made from --input specs), else one per tensor.
// `state_inputs`: inputs after the arguments (WrittenState::as_io), left as they are.
void bind_arguments(torch::jit::Graph& graph, const c10::FunctionSchema& schema, size_t given, bool whole,
                    size_t self_inputs, size_t state_inputs) {
  const auto& params = schema.arguments();  // params[0] is self
  const size_t arguments_end = graph.inputs().size() - state_inputs;
  size_t first_unbound = self_inputs;
  for (size_t taken = 0; first_unbound < arguments_end && taken < given; ++first_unbound)
    taken += whole ? 1 : example_inputs_taken(graph.inputs()[first_unbound]->type());
  for (size_t i = arguments_end; i-- > first_unbound;) {
    const size_t param = i - self_inputs + 1;
    if (param >= params.size() || !params[param].default_value()) break;  // check_input_count reports it
    torch::jit::WithInsertPoint at_start(graph.block()->nodes().front());
    torch::jit::Value* value = graph.insertConstant(*params[param].default_value());
    graph.inputs()[i]->replaceAllUsesWith(value);
    graph.eraseInput(i);
  }
  for (size_t i = self_inputs; i < graph.inputs().size() && i < first_unbound; ++i)
    if (auto optional = graph.inputs()[i]->type()->cast<c10::OptionalType>())
      graph.inputs()[i]->setType(optional->getElementType());
}

// The module's forward, frozen and inlined. clone() and freeze_module() both deep-copy
// parameters: a module the export owns is frozen in place instead.
void empty_graph(torch::jit::Graph& graph) {
  while (!graph.outputs().empty()) graph.eraseOutput(0);
  for (auto it = graph.nodes().rbegin(); it != graph.nodes().rend(); ++it) it.destroyCurrent();
}

// Empties every tensor slot (parameters, buffers, tensor attributes) of the module and its
// submodules: the frozen graph holds the tensors it reads as constants.
void release_tensor_slots(torch::jit::Module& module) {
  for (auto submodule : module.modules()) {
    const auto& object = submodule._ivalue();
    for (size_t i = 0; i < object->slots().size(); ++i)
      if (object->getSlot(i).isTensor()) object->setSlot(i, c10::IValue(at::Tensor()));
  }
}

// Whether graph input `v` is appended or inserted into a list, or is an element of a list
// (prim::ListConstruct) or split into one (unbind, split, chunk) that list ops or a loop then use:
// torch.onnx makes such a list an ONNX sequence, which it never folds, so its graph reads the input
// even where onnxport resolves the list at export time (test_list, test_prim_min of PyTorch's
// exporter tests).
bool reaches_run_time_list(const torch::jit::Value* v) {
  static const std::set<std::string> makes_list = {"prim::ListConstruct",    "aten::unbind", "aten::split",
                                                   "aten::split_with_sizes", "aten::chunk",  "aten::tensor_split"};
  static const std::set<std::string> list_ops = {
      "aten::__getitem__", "aten::len",     "aten::append",    "aten::insert", "aten::pop",          "aten::add",
      "aten::add_",        "aten::extend",  "aten::_set_item", "aten::list",   "aten::__contains__", "aten::remove",
      "aten::clear",       "aten::reverse", "aten::slice",     "prim::Loop"};
  static const std::set<std::string> adds_item = {"aten::append", "aten::insert", "aten::_set_item"};
  for (const auto& use : v->uses()) {
    const auto* maker = use.user;
    if (adds_item.count(maker->kind().toQualString())) return true;  // v goes into a list
    if (!makes_list.count(maker->kind().toQualString()) || maker->outputs().size() != 1) continue;
    if (!maker->output()->type()->cast<c10::ListType>()) continue;
    for (const auto& list_use : maker->output()->uses())
      if (list_ops.count(list_use.user->kind().toQualString())) return true;
  }
  return false;
}

// The example inputs graph input `v` (or a tuple element of one) takes, flattened: leaf value ->
// its index among all flattened inputs.
void number_flattened_inputs(const torch::jit::Value* v, size_t& next,
                             std::unordered_map<const torch::jit::Value*, size_t>& index) {
  if (!v->type()->cast<c10::TupleType>()) {
    index.emplace(v, next++);
    return;
  }
  const torch::jit::Node* unpack = nullptr;
  for (const auto& use : v->uses())
    if (use.user->kind() == c10::prim::TupleUnpack) unpack = use.user;
  if (!unpack) {  // read as a whole: its elements are numbered, none is a value of this graph
    next += example_inputs_taken(v->type());
    return;
  }
  for (const auto* element : unpack->outputs()) number_flattened_inputs(element, next, index);
}

// Whether `cond` is an `is None` / `is not None` test of an Optional element of a tuple input.
// onnxport folds such a test on the example given; torch.onnx keeps it at run time, and with it
// the inputs its branches read.
bool tests_optional_tuple_element(const torch::jit::Value* cond,
                                  const std::unordered_map<const torch::jit::Value*, size_t>& index) {
  const auto* test = cond->node();
  const std::string kind = test->kind().toQualString();
  if (kind != "aten::__is__" && kind != "aten::__isnot__") return false;
  for (const auto* in : test->inputs())
    if (index.count(in) && in->type()->cast<c10::OptionalType>() && in->node()->kind() == c10::prim::TupleUnpack)
      return true;
  return false;
}

void mark_inputs_read_in(const torch::jit::Block* block,
                         const std::unordered_map<const torch::jit::Value*, size_t>& index, std::vector<bool>& keep) {
  for (const auto* n : block->nodes()) {
    for (const auto* in : n->inputs())
      if (auto it = index.find(in); it != index.end()) keep[it->second] = true;
    for (const auto* sub : n->blocks()) mark_inputs_read_in(sub, index, keep);
  }
  for (const auto* out : block->outputs())
    if (auto it = index.find(out); it != index.end()) keep[it->second] = true;
}

void mark_inputs_under_optional_tests(const torch::jit::Block* block,
                                      const std::unordered_map<const torch::jit::Value*, size_t>& index,
                                      std::vector<bool>& keep) {
  for (const auto* n : block->nodes()) {
    if (n->kind() == c10::prim::If && tests_optional_tuple_element(n->input(), index))
      for (const auto* branch : n->blocks()) mark_inputs_read_in(branch, index, keep);
    for (const auto* sub : n->blocks()) mark_inputs_under_optional_tests(sub, index, keep);
  }
}

// Per flattened example input (graph inputs from `first`, after `self`): whether torch.onnx keeps
// it where onnxport may resolve at export time what reads it: it reaches a run-time list
// (reaches_run_time_list), is declared Optional by a scripted forward (torch.onnx gives it an
// optional type and tests it at run time, so `forward(x, y: Optional[Tensor] = ..., z: ...)`
// takes z even where y's test decides that nothing reads it), or a branch of a None test
// torch.onnx keeps (tests_optional_tuple_element).
// Also sets `declared_optional`: per flattened input, whether forward declares it Optional.
std::vector<bool> inputs_torch_onnx_keeps(const torch::jit::Graph& graph, size_t first,
                                          std::vector<bool>& declared_optional) {
  std::vector<bool> keep;
  std::unordered_map<const torch::jit::Value*, size_t> index;
  size_t next = 0;
  declared_optional.clear();
  for (size_t i = first; i < graph.inputs().size(); ++i) {
    const torch::jit::Value* input = graph.inputs()[i];
    number_flattened_inputs(input, next, index);
    const bool optional = input->type()->cast<c10::OptionalType>() != nullptr;
    declared_optional.resize(next, optional);
    keep.resize(next, optional || reaches_run_time_list(input));
  }
  mark_inputs_under_optional_tests(graph.block(), index, keep);
  return keep;
}

// The weights aten::linear reads: the conversion gives each one's transpose to MatMul, which
// the fold pass computes, so they are transposed on another thread meanwhile. At most 64 MiB of
// copies wait beside their sources for the fold: what the export holds above its parameters for
// them (vit_b_16's 330 MiB of Linear weights, all made ahead, had taken its peak RSS from 745 to 848 MiB).
// None for private parameters: the fold writes each transpose over its weight (ParameterBytes).
std::shared_ptr<TransposesAhead> transpose_linear_weights_ahead(std::vector<at::Tensor> weights,
                                                                const ExportOptions& options, bool parameters_private) {
  constexpr size_t kMaxBytes = size_t{64} << 20;
  if (parameters_private || !options.do_constant_folding || !options.export_params ||
      options.training == TrainingMode::Train)
    return nullptr;
  std::set<const void*> seen;  // a weight two Linears share (tied) is transposed once
  weights.erase(std::remove_if(weights.begin(), weights.end(),
                               [&](const at::Tensor& w) {
                                 return w.scalar_type() != at::kFloat || !seen.insert(w.data_ptr()).second;
                               }),
                weights.end());
  if (weights.empty()) return nullptr;
  return std::make_shared<TransposesAhead>(std::move(weights), kMaxBytes);
}

// The weights aten::linear reads as constants of a frozen or traced graph.
std::vector<at::Tensor> constant_linear_weights(const torch::jit::Graph& graph) {
  std::vector<at::Tensor> weights;
  for (const auto* n : graph.nodes()) {
    if (n->kind() != c10::aten::linear || n->inputs().size() < 2) continue;
    const auto weight = torch::jit::toIValue(n->input(1));
    if (weight && weight->isTensor()) weights.push_back(weight->toTensor());
  }
  return weights;
}

std::shared_ptr<torch::jit::Graph> frozen_forward(const torch::jit::Module& module, bool owned, size_t given_inputs,
                                                  bool whole_arguments, const ExportOptions& options,
                                                  PreparedGraph& out) {
  // Cloned without autograd: a clone of a parameter that requires grad would otherwise be a
  // non-leaf tensor, whose requires_grad cannot be switched off below.
  torch::jit::Module frozen = owned ? module : [&] {
    const at::NoGradGuard no_grad;
    return module.clone();
  }();
  define_forward_from_overload(frozen);
  if (options.training == TrainingMode::Eval) frozen.eval();
  if (options.training == TrainingMode::Train) frozen.train();
  for (const auto& p : frozen.named_parameters(true)) out.tensor_names.emplace(p.value.data_ptr(), p.name);
  // The tracer takes module tensors as constants, which it refuses for tensors needing grad. An
  // owned module's tensors may be the caller's too (a module traced for the export shares the
  // nn.Module's): its attributes become aliases that do not need grad, the tensors stay as they are.
  for (auto submodule : frozen.modules()) {
    std::vector<std::pair<std::string, at::Tensor>> needing_grad;
    for (const auto& p : submodule.named_parameters(false))
      if (p.value.requires_grad()) needing_grad.emplace_back(p.name, p.value);
    for (auto& [name, tensor] : needing_grad)
      if (owned)
        submodule._ivalue()->setAttr(name, tensor.detach());
      else
        tensor.requires_grad_(false);  // a clone's own tensor
  }
  for (const auto& b : frozen.named_buffers(true)) out.tensor_names.emplace(b.value.data_ptr(), b.name);
  // Before freezing, whose constant propagation would fold an expand of a constant source.
  for (const auto& submodule : frozen.modules())
    for (const auto& method : submodule.get_methods())
      copy_unexpanded_sources(*torch::jit::toGraphFunction(method.function()).graph());
  inline_calls(*frozen.get_method("forward").graph());  // freezing then has nothing left to inline
  // Before freezing, whose loop unrolling and list peepholes resolve lists torch.onnx keeps. (The
  // sources copied unexpanded above change no input's readers that this looks at.)
  if (options.drop_unused_inputs)
    out.inputs_torch_onnx_keeps =
        inputs_torch_onnx_keeps(*frozen.get_method("forward").graph(), 1, out.inputs_declared_optional);
  // A module handed over was traced for this export, on its inputs: the types its trace recorded
  // are kept for adopt_traced_types. (A loaded module's graph has none.)
  std::optional<CompleteTypes> traced_types;
  if (owned) traced_types.emplace(*frozen.get_method("forward").graph());
  const ModuleTensorReads tensor_reads(*frozen.get_method("forward").graph(), frozen);
  // Started before freezing, which runs on this thread alone: freezing keeps the module's
  // tensors as its constants, where the fold pass finds them (and transposes any other itself).
  out.transposes = transpose_linear_weights_ahead(tensor_reads.read_as(c10::aten::linear, 1), options, out.parameters_private);
  if (auto forward = frozen.get_method("forward").graph(); !freeze_straight_line_forward(forward, frozen))
    torch::jit::freeze_module_inplace(&frozen);
  if (traced_types) traced_types->restore(*frozen.get_method("forward").graph());
  tensor_reads.restore(*frozen.get_method("forward").graph());

  auto graph = frozen.get_method("forward").graph()->copy();
  torch::jit::Inline(*graph);
  inline_fork_wait(graph);
  WrittenState state;
  state.as_io = options.state_io;
  if (fold_attribute_writes(*graph, frozen, state) > 0) torch::jit::EliminateDeadCode(graph);
  out.state_paths = state.paths;
  out.state_loaded = state.loaded;
  out.state_io = state.as_io && !state.paths.empty();
  // Training mode keeps mutated buffers (BatchNorm statistics) as attributes read through self.
  if (!graph->inputs().empty() && graph->inputs()[0]->type()->cast<c10::ClassType>()) {
    if (graph->inputs()[0]->hasUses())
      out.self = frozen;
    else
      graph->eraseInput(0);
  }
  bind_arguments(*graph, frozen.get_method("forward").function().getSchema(), given_inputs, whole_arguments,
                 out.self ? 1 : 0, out.state_io ? out.state_paths.size() : 0);
  // Inlined nodes name the module's functions in their call stacks, which the interpreter's
  // error report reads: the functions live as long as the graph. (With libtorch 2.6 the module
  // goes with `loaded`, and a model that failed on its example inputs read freed functions.)
  out.functions = frozen._ivalue()->compilation_unit();
  // The loaded module's object may outlive the export inside libtorch (1.13 keeps it), and with it
  // the frozen forward graph and the module's own tensor slots, which hold every parameter: the
  // export would keep them all after the ONNX model has replaced them (folded copies). The copy
  // above is all the export runs, so a module loaded here has that graph emptied and, unless the
  // graph still reads `self`, its tensors let go.
  if (owned) {
    empty_graph(*torch::jit::toGraphFunction(frozen.get_method("forward").function()).graph());
    if (!out.self) release_tensor_slots(frozen);
  }
  return graph;
}

std::shared_ptr<torch::jit::Graph> traced_function_graph(LoadedModel& loaded, PreparedGraph& out) {
  out.tensor_names = std::move(loaded.traced_parameter_names);
  torch::jit::Inline(*loaded.traced_graph);
  inline_fork_wait(loaded.traced_graph);
  return loaded.traced_graph;
}

// The first node that still takes or makes a tuple (LowerAllTuples cannot flatten tuples that
// pass through ops such as prim::unchecked_cast, and leaves a graph the interpreter cannot run).
const torch::jit::Node* first_tuple_node(const torch::jit::Block* block) {
  for (const auto* n : block->nodes()) {
    for (const auto* v : n->outputs())
      if (v->type()->kind() == c10::TypeKind::TupleType) return n;
    for (const auto* v : n->inputs())
      if (v->type()->kind() == c10::TypeKind::TupleType) return n;
    for (const auto* b : n->blocks())
      if (const auto* found = first_tuple_node(b)) return found;
  }
  return nullptr;
}

bool has_tuples(const torch::jit::Graph& graph) {
  const auto is_tuple = [](const torch::jit::Value* v) { return v->type()->kind() == c10::TypeKind::TupleType; };
  return first_tuple_node(graph.block()) || std::any_of(graph.inputs().begin(), graph.inputs().end(), is_tuple) ||
         std::any_of(graph.outputs().begin(), graph.outputs().end(), is_tuple);
}

// LowerAllTuples turns an uninitialized tuple (a scripted `if` that assigns a tuple in one branch)
// into one prim::Uninitialized node with several outputs, but the interpreter's Uninitialized
// pushes one value: running the graph then corrupts its stack (and the heap). One node per value.
void split_uninitialized(torch::jit::Block* block) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    torch::jit::Node* n = *it++;
    for (auto* b : n->blocks()) split_uninitialized(b);
    if (n->kind() != c10::prim::Uninitialized || n->outputs().size() < 2) continue;
    torch::jit::WithInsertPoint here(n);
    for (auto* out : n->outputs()) {
      torch::jit::Node* single = n->owningGraph()->insertNode(n->owningGraph()->createUninitialized(out->type()));
      out->replaceAllUsesWith(single->output());
    }
    n->destroy();
  }
}

// torch 1.13's LowerAllTuples gives every value it flattens out of a tuple-typed prim::If output the
// type Tensor: ConvTasNet's `padded, num_pads = self._align_num_frames_with_strides(input)` (a
// (Tensor, int) returned from both branches) leaves num_pads an int typed Tensor, `num_pads > 0`
// then resolves to aten::gt's Tensor overload and running the graph fails ("Expected Tensor but got
// Int"). The branches' outputs still say the types: such an If output takes the type they unify to.
// Not an Optional: `if y is not None and c` gives y refined (Tensor) in one branch and the Optional y
// in the other, where it is None and never read; freezing has already dropped the refinements
// (unchecked_cast) of such a Tensor output, so its readers would see an Optional.
void retype_if_outputs(torch::jit::Block* block) {
  for (torch::jit::Node* n : block->nodes()) {
    for (torch::jit::Block* b : n->blocks()) retype_if_outputs(b);
    if (n->kind() != c10::prim::If || n->blocks().size() != 2) continue;
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      torch::jit::Value* out = n->outputs()[i];
      if (out->type()->kind() != c10::TypeKind::TensorType) continue;
      auto branches = c10::unifyTypes(n->blocks()[0]->outputs()[i]->type(), n->blocks()[1]->outputs()[i]->type());
      if (branches && (*branches)->kind() != c10::TypeKind::TensorType &&
          (*branches)->kind() != c10::TypeKind::OptionalType)
        out->setType(*branches);
    }
  }
}

// Folds the export-time facts and propagates constants until nothing more folds: a decided
// branch can expose another fact test (MultiheadAttention's `key is value` on the tensors a
// decided branch made).
void decide_export_time_facts(std::shared_ptr<torch::jit::Graph>& graph) {
  for (int round = 0; round < 8; ++round) {
    const bool folded = fold_export_time_facts(graph->block()) > 0;
    torch::jit::ConstantPropagationImmutableTypes(graph);
    if (!folded) break;
  }
  torch::jit::EliminateDeadCode(graph);
}

std::string describe_node(const torch::jit::Node* n) {
  return std::string(n->kind().toQualString()) + " in " +
         (module_path_of(n).empty() ? std::string("forward") : module_path_of(n)) +
         (source_of(n).empty() ? "" : " (" + source_of(n) + ")");
}

// Export-time facts folded, tuples flattened, constants propagated, dead code removed, quantized
// weights unpacked. Returns the graph as it was before flattening when flattening could not
// finish (nullptr otherwise), with `where` naming the node it stopped at.
std::shared_ptr<torch::jit::Graph> clean_up(std::shared_ptr<torch::jit::Graph> graph, PreparedGraph& out,
                                            std::string& where) {
  // Branches on export-time facts and on None defaults go first: the tuples they hold
  // (an optional LSTM state) are often ones LowerAllTuples cannot flatten.
  decide_export_time_facts(graph);
  if (!has_tuples(*graph)) {  // nothing to flatten, and constants have just propagated
    prepare_quantized_graph(*graph, out.tensor_names);
    return nullptr;
  }
  auto before = graph->copy();
  try {
    torch::jit::LowerAllTuples(graph);
  } catch (const c10::Error& e) {
    where = std::string("a tuple (") + e.what_without_backtrace() + ")";
    if (const auto* n = first_tuple_node(before->block())) where = describe_node(n);
    prepare_quantized_graph(*before, out.tensor_names);
    return before;
  }
  split_uninitialized(graph->block());
  retype_if_outputs(graph->block());
  if (const auto* n = first_tuple_node(graph->block())) {
    where = describe_node(n);
    prepare_quantized_graph(*before, out.tensor_names);
    return before;
  }
  torch::jit::ConstantPropagationImmutableTypes(graph);
  torch::jit::EliminateDeadCode(graph);
  prepare_quantized_graph(*graph, out.tensor_names);
  return nullptr;
}

void check_input_count(const torch::jit::Graph& graph, size_t given, size_t self_inputs) {
  if (given + self_inputs == graph.inputs().size()) return;
  throw ConfigError("the model's forward takes " + std::to_string(graph.inputs().size() - self_inputs) + " inputs, " +
                        std::to_string(given) + " example inputs were given",
                    ErrorContext::with_hint("give one --input per forward argument, in order"));
}

// Training-mode ops (BatchNorm) update buffers in place while the graph runs: a snapshot puts
// back the values the module was loaded with, or those one run left (retake).
class BufferSnapshot {
 public:
  explicit BufferSnapshot(const std::optional<torch::jit::Module>& self) {
    if (!self) return;
    for (const auto& b : self->named_buffers(true)) saved_.emplace_back(b.value, b.value.clone());
  }
  void restore() {
    torch::NoGradGuard no_grad;
    for (auto& [live, copy] : saved_) live.copy_(copy);
  }
  void retake() {
    torch::NoGradGuard no_grad;
    for (auto& [live, copy] : saved_) copy.copy_(live);
  }

 private:
  std::vector<std::pair<at::Tensor, at::Tensor>> saved_;
};

// Trace mode on a graph with control flow: run it under the tracer (loops unrolled, branches fixed).
std::shared_ptr<torch::jit::Graph> trace_control_flow(const std::shared_ptr<torch::jit::Graph>& graph,
                                                      const PreparedGraph& out, const ModeChoice& mode,
                                                      const std::vector<torch::jit::IValue>& inputs) {
  c10::optional<c10::IValue> self;
  if (out.self) self = out.self->_ivalue();
  try {
    return trace_graph(graph, self, inputs);
  } catch (Error& e) {
    // Say what tracing could not cope with: usually the control flow the warnings name.
    std::string why;
    for (const auto& w : mode.warnings) why += "\n  " + w;
    if (why.empty()) throw;
    throw ModelError(std::string(e.what()) + why, ErrorContext::with_hint("export it with --mode script (or auto)"));
  }
}

}  // namespace

// "check the --input shapes and dtypes (given: image float32[1,3,224,224], ...)"
std::string example_inputs_hint(const std::vector<torch::jit::IValue>& inputs, const ExportOptions& options) {
  std::string given;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = i < options.inputs.size() && !options.inputs[i].name.empty()
                                 ? options.inputs[i].name
                                 : "input " + std::to_string(i);
    const std::string what =
        inputs[i].isTensor() ? type_text(c10::TensorType::create(inputs[i].toTensor())) : inputs[i].tagKind();
    given += (given.empty() ? "" : ", ") + name + " " + what;
  }
  return "check the --input shapes and dtypes against what the model's forward expects (given: " + given + ")";
}

namespace {

// A Union argument given a tensor (PyTorch 2's GaussianNLLLoss takes `var: Union[Tensor, float]`)
// is a tensor input of the exported graph, so that the forward's isinstance tests on it are
// decided. Returns how many arguments it retyped.
size_t tensor_union_inputs(torch::jit::Graph& graph, const std::vector<torch::jit::IValue>& inputs,
                           size_t self_inputs) {
  size_t retyped = 0;
  for (size_t k = 0; k < inputs.size() && k + self_inputs < graph.inputs().size(); ++k) {
    torch::jit::Value* input = graph.inputs()[k + self_inputs];
    auto as_union = input->type()->cast<c10::UnionType>();
    if (!as_union || !inputs[k].isTensor() || !c10::TensorType::get()->isSubtypeOf(*as_union)) continue;
    input->setType(c10::TensorType::get());
    ++retyped;
  }
  return retyped;
}

// The state inputs (after the arguments' graph inputs) take the tensors the model was loaded with,
// and their attributes' names; without --state-io, a warning names what the export drops.
void take_state_inputs(const torch::jit::Graph& graph, PreparedGraph& out, std::vector<torch::jit::IValue>& inputs) {
  if (out.state_paths.empty()) return;
  std::string names;
  for (const auto& path : out.state_paths) names += (names.empty() ? "" : ", ") + path;
  if (!out.state_io) {
    out.warnings.push_back("the exported method assigns module state (" + names +
                           "): the ONNX file computes one call from the state the model file holds and drops "
                           "the new values; --state-io makes each an input and an output");
    return;
  }
  const size_t arguments = graph.inputs().size() - (out.self ? 1 : 0) - out.state_paths.size();
  out.input_names.resize(arguments);
  for (size_t k = 0; k < out.state_paths.size(); ++k) {
    out.input_names.push_back(out.state_paths[k]);
    inputs.push_back(out.state_loaded[k]);
  }
}

// A state tensor must keep its dtype and shape through a call (but for the dims that calls change,
// state_start.h), or the file's output would not fit its input on the next one.
void check_state_keeps_its_type(const PreparedGraph& out) {
  if (!out.state_io) return;
  const auto& outputs = out.graph->outputs();
  for (size_t k = 0; k < out.state_paths.size(); ++k) {
    const at::Tensor& loaded = out.state_loaded[k];
    auto after = outputs[outputs.size() - out.state_paths.size() + k]->type()->cast<c10::TensorType>();
    const auto sizes = after ? after->sizes().concrete_sizes() : c10::nullopt;
    auto fits = [&] {
      if (!after || !sizes || after->scalarType() != loaded.scalar_type() || sizes->size() != loaded.sizes().size())
        return false;
      const auto dynamic = out.state_dynamic_axes.find(out.state_paths[k]);
      for (size_t d = 0; d < sizes->size(); ++d)
        if ((*sizes)[d] != loaded.size(d) &&
            (dynamic == out.state_dynamic_axes.end() || !dynamic->second.count(static_cast<int64_t>(d))))
          return false;
      return true;
    };
    if (fits()) continue;
    const std::string now = after && sizes && after->scalarType()
                                ? type_text(after)
                                : "a value of another type";
    throw ModelError("--state-io: state '" + out.state_paths[k] + "' is " +
                         type_text(c10::TensorType::create(loaded)) + " in the model file and " + now +
                         " after a call: an input and output of the ONNX file cannot take both",
                     ErrorContext::with_hint("save the model with its state in the type the calls keep (call it "
                                             "once, then save it), or export without --state-io"));
  }
}

// The dims a state's calls change, named after its input or output: "_cache_dim0".
void add_state_dynamic_axes(const StateStart& started, PreparedGraph& out) {
  auto add = [&](const std::string& name, const std::vector<int64_t>& axes) {
    for (int64_t axis : axes) out.state_dynamic_axes[name][axis] = name + "_dim" + std::to_string(axis);
  };
  for (const auto& [path, axes] : started.input_axes) add(path, axes);
  for (const auto& [path, axes] : started.output_axes) add(path + "_out", axes);
}

}  // namespace

PreparedGraph prepare_model(LoadedModel loaded, const ExportOptions& given) {
  PreparedGraph out;
  out.warnings = loaded.warnings;
  out.parameters_private = loaded.parameters_private;
  std::optional<StateCall> later_state_call;
  if (given.state_io && loaded.module)
    if (auto started = start_state_after_first_call(*loaded.module, loaded.inputs, given)) {
      if (started->module) {
        loaded.module = *started->module;
        loaded.module_owned = true;  // a copy of its own
      }
      out.warnings.push_back(started->warning);
      add_state_dynamic_axes(*started, out);
      later_state_call = started->later_call;
    }
  if (given.state_io && loaded.module)
    if (auto numbers = number_state_warning(*loaded.module)) out.warnings.push_back(*numbers);
  ExportOptions widened;
  if (!out.state_dynamic_axes.empty()) widened = with_state_dynamic_axes(given, out);
  const ExportOptions& options = out.state_dynamic_axes.empty() ? given : widened;
  std::shared_ptr<torch::jit::Graph> graph =
      loaded.module ? frozen_forward(*loaded.module, loaded.module_owned, loaded.inputs.size(), loaded.whole_arguments,
                                     options, out)
                    : traced_function_graph(loaded, out);
  loaded.module.reset();  // the frozen graph (and `self`, if it is still read) hold what the export needs
  if (loaded.whole_arguments)
    flatten_whole_arguments(*graph, loaded.inputs, out.self ? 1 : 0, options.inputs, options.dynamic_numbers,
                            out.input_names);
  else
    for (const auto& spec : options.inputs) out.input_names.push_back(spec.name);
  take_state_inputs(*graph, out, loaded.inputs);
  std::string tuples_left_at;
  if (auto unflattened = clean_up(graph, out, tuples_left_at)) graph = unflattened;
  if (resolve_constant_key_dicts(*graph, out.output_names) > 0) {  // what was read may decide branches now
    if (tuples_left_at.empty() && has_tuples(*graph)) {  // a returned dict held tuples
      torch::jit::LowerAllTuples(graph);
      out.output_names.clear();
    }
    torch::jit::ConstantPropagationImmutableTypes(graph);
    torch::jit::EliminateDeadCode(graph);
  }

  const size_t self_inputs = out.self ? 1 : 0;
  check_input_count(*graph, loaded.inputs.size(), self_inputs);
  numbers_as_tensor_inputs(*graph, loaded.inputs, self_inputs);
  if (tensor_union_inputs(*graph, loaded.inputs, self_inputs) > 0) decide_export_time_facts(graph);
  // Quantized inputs arrive after clean_up's pass over quantized values: the float ops that read
  // them are rewritten now.
  if (unpack_quantized_inputs(*graph, loaded.inputs, self_inputs) > 0)
    prepare_quantized_graph(*graph, out.tensor_names);
  const std::vector<torch::jit::IValue>& inputs = loaded.inputs;
  for (const auto& iv : inputs)
    if (iv.isTensor()) out.example_tensors.push_back(iv.toTensor());
  std::vector<torch::jit::IValue> run_inputs;
  if (out.self) run_inputs.push_back(out.self->_ivalue());
  run_inputs.insert(run_inputs.end(), inputs.begin(), inputs.end());
  BufferSnapshot buffers(out.self);
  bool ran_once = false;  // the model has run on the example inputs (traced with its control flow)

  if (options.drop_unused_inputs && out.inputs_torch_onnx_keeps.empty())  // a traced function
    out.inputs_torch_onnx_keeps = inputs_torch_onnx_keeps(*graph, self_inputs, out.inputs_declared_optional);
  const ModeChoice mode = choose_mode(*graph, options);
  out.mode_reason = mode.reason;
  if (!loaded.program.empty()) {
    out.from_program = true;
    out.program_dims = std::move(loaded.program_dims);
    out.mode_reason = loaded.program + ": its graph as exported, typed from its tensor_meta";
  }
  out.warnings.insert(out.warnings.end(), mode.warnings.begin(), mode.warnings.end());
  out.scripted = mode.script;
  if (!tuples_left_at.empty() && (mode.script || mode.control_flow_sites == 0))
    throw ModelError("the scripted graph passes tuples through " + tuples_left_at +
                         ", which onnxport cannot flatten into separate values yet",
                     ErrorContext::with_hint("export with --mode trace (the trace flattens them)"));
  if (!mode.script && mode.control_flow_sites > 0) {
    if (!options.dynamic_axes.empty()) {
      out.untraced = graph;
      out.untraced_self = out.self;
    }
    graph = trace_control_flow(graph, out, mode, inputs);
    ran_once = true;
    buffers.retake();
    out.self.reset();
    run_inputs.assign(inputs.begin(), inputs.end());
  }
  if (mode.script) propagate_dtypes(graph, inputs, self_inputs);
  // A traced function's graph (no module to read before freezing), or a module whose Linears read
  // only tensors freezing computed: their weights are the graph's constants.
  if (!out.transposes) out.transposes = transpose_linear_weights_ahead(constant_linear_weights(*graph), options, out.parameters_private);
  // The model's runs have both cores (OpenBLAS splits its products over two threads): transposes
  // beside them made swin_t's whole export slower.
  if (out.transposes) out.transposes->pause(true);
  try {
    // A graph traced in this process (the Python API's) is typed already: one forward less.
    if (mode.script || !adopt_traced_types(*graph, run_inputs)) record_types(*graph, run_inputs, options.verbose);
    // The file holds the buffers as one run on the example inputs leaves them (BatchNorm's
    // statistics in training mode), as torch.onnx, which runs the model once, writes them.
    if (ran_once)
      buffers.restore();
    else
      buffers.retake();
    // Branches on a tensor's dtype or rank (fast-path checks, F.interpolate's per-rank calls)
    // are decided once they are known; so are list comprehensions over the rank.
    // Each decided branch brings its nodes to the top level, where one more run records their
    // types: fold until nothing more folds (a few rounds for torch.nn's nested checks).
    for (int round = 0; mode.script && round < 8 && fold_recorded_types(*graph) > 0; ++round) {
      torch::jit::ConstantPropagationImmutableTypes(graph);
      if (unroll_list_loops(*graph) > 0) torch::jit::ConstantPropagationImmutableTypes(graph);
      decide_export_time_facts(graph);
      record_types(*graph, run_inputs, options.verbose);
      buffers.restore();
    }
  } catch (Error& e) {
    e.add_context(ErrorContext::with_hint(example_inputs_hint(inputs, options)));
    throw;
  } catch (const c10::Error& e) {
    throw ModelError(std::string("running the model on the example inputs failed: ") + e.what_without_backtrace(),
                     ErrorContext::with_hint(example_inputs_hint(inputs, options)));
  }
  if (fold_packed_projection_splits(*graph) > 0) torch::jit::EliminateDeadCode(graph);
  if (out.transposes) out.transposes->pause(false);
  out.graph = graph;
  check_state_keeps_its_type(out);
  if (later_state_call) {
    check_graph_gives_later_call(graph, run_inputs, *later_state_call, out.state_paths, mode.script);
    buffers.restore();
  }
  out.resized = run_resized(out, graph_input_names(options, out.input_names, out.example_tensors.size()), options);
  buffers.restore();
  out.untraced.reset();
  out.untraced_self.reset();
  return out;
}

ExportOptions with_state_dynamic_axes(const ExportOptions& given, const PreparedGraph& out) {
  ExportOptions options = given;
  for (const auto& [name, axes] : out.state_dynamic_axes) options.dynamic_axes[name].insert(axes.begin(), axes.end());
  return options;
}

std::vector<std::string> graph_input_names(const ExportOptions& o, const std::vector<std::string>& from_specs,
                                           size_t count) {
  std::vector<std::string> names;
  for (size_t i = 0; i < count; ++i) {
    if (i < o.input_names.size())
      names.push_back(o.input_names[i]);
    else if (i < from_specs.size() && !from_specs[i].empty())
      names.push_back(from_specs[i]);
    else
      names.push_back("input_" + std::to_string(i));
  }
  return names;
}

}  // namespace onnxport::core
