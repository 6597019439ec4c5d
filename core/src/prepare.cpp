#include "prepare.h"

#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/lower_tuples.h>

#include "export_mode.h"
#include "onnxport/errors.h"
#include "quantized_weights.h"

namespace onnxport::core {

namespace {

// The module's forward, frozen and inlined. clone() and freeze_module() both deep-copy
// parameters: a module the export owns is frozen in place instead.
// forward() arguments after the given example inputs take their default values (as calling the
// module with fewer arguments does): they become constants and leave the graph's inputs.
void bind_default_arguments(torch::jit::Graph& graph, const c10::FunctionSchema& schema, size_t given,
                            size_t self_inputs) {
  const auto& params = schema.arguments();  // params[0] is self
  const size_t first_graph_input = self_inputs;
  for (size_t i = graph.inputs().size(); i-- > first_graph_input + given;) {
    const size_t param = i - first_graph_input + 1;
    if (param >= params.size() || !params[param].default_value()) return;  // check_input_count reports it
    torch::jit::WithInsertPoint at_start(graph.block()->nodes().front());
    torch::jit::Value* value = graph.insertConstant(*params[param].default_value());
    graph.inputs()[i]->replaceAllUsesWith(value);
    graph.eraseInput(i);
  }
}

std::shared_ptr<torch::jit::Graph> frozen_forward(const torch::jit::Module& module, bool owned, size_t given_inputs,
                                                  const ExportOptions& options, PreparedGraph& out) {
  torch::jit::Module frozen = owned ? module : module.clone();
  if (options.training == TrainingMode::Eval) frozen.eval();
  if (options.training == TrainingMode::Train) frozen.train();
  for (const auto& p : frozen.named_parameters(true)) {
    out.tensor_names.emplace(p.value.data_ptr(), p.name);
    // The tracer takes module tensors as constants, which it refuses for tensors needing grad.
    p.value.requires_grad_(false);
  }
  for (const auto& b : frozen.named_buffers(true)) out.tensor_names.emplace(b.value.data_ptr(), b.name);
  torch::jit::freeze_module_inplace(&frozen);

  auto graph = frozen.get_method("forward").graph()->copy();
  torch::jit::Inline(*graph);
  // Training mode keeps mutated buffers (BatchNorm statistics) as attributes read through self.
  if (!graph->inputs().empty() && graph->inputs()[0]->type()->cast<c10::ClassType>()) {
    if (graph->inputs()[0]->hasUses())
      out.self = frozen;
    else
      graph->eraseInput(0);
  }
  bind_default_arguments(*graph, frozen.get_method("forward").function().getSchema(), given_inputs, out.self ? 1 : 0);
  return graph;
}

std::shared_ptr<torch::jit::Graph> traced_function_graph(LoadedModel& loaded, PreparedGraph& out) {
  out.tensor_names = std::move(loaded.traced_parameter_names);
  torch::jit::Inline(*loaded.traced_graph);
  return loaded.traced_graph;
}

void clean_up(std::shared_ptr<torch::jit::Graph> graph, PreparedGraph& out) {
  torch::jit::LowerAllTuples(graph);
  torch::jit::ConstantPropagationImmutableTypes(graph);
  torch::jit::EliminateDeadCode(graph);
  prepare_quantized_graph(*graph, out.tensor_names);
}

void check_input_count(const torch::jit::Graph& graph, size_t given, size_t self_inputs) {
  if (given + self_inputs == graph.inputs().size()) return;
  throw ConfigError("the model's forward takes " + std::to_string(graph.inputs().size() - self_inputs) + " inputs, " +
                        std::to_string(given) + " example inputs were given",
                    ErrorContext::with_hint("give one --input per forward argument, in order"));
}

// Training-mode ops (BatchNorm) update buffers in place while the graph runs: a snapshot puts
// back the values the module was loaded with.
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

PreparedGraph prepare_model(LoadedModel loaded, const ExportOptions& options) {
  PreparedGraph out;
  std::shared_ptr<torch::jit::Graph> graph =
      loaded.module ? frozen_forward(*loaded.module, loaded.module_owned, loaded.inputs.size(), options, out)
                    : traced_function_graph(loaded, out);
  loaded.module.reset();  // the frozen graph (and `self`, if it is still read) hold what the export needs
  clean_up(graph, out);

  const std::vector<torch::jit::IValue>& inputs = loaded.inputs;
  const size_t self_inputs = out.self ? 1 : 0;
  check_input_count(*graph, inputs.size(), self_inputs);
  for (const auto& iv : inputs)
    if (iv.isTensor()) out.example_tensors.push_back(iv.toTensor());
  std::vector<torch::jit::IValue> run_inputs;
  if (out.self) run_inputs.push_back(out.self->_ivalue());
  run_inputs.insert(run_inputs.end(), inputs.begin(), inputs.end());
  BufferSnapshot buffers(out.self);

  const ModeChoice mode = choose_mode(*graph, options);
  out.mode_reason = mode.reason;
  out.warnings = mode.warnings;
  out.scripted = mode.script;
  if (!mode.script && mode.control_flow_sites > 0) {
    graph = trace_control_flow(graph, out, mode, inputs);
    buffers.restore();
    out.self.reset();
    run_inputs.assign(inputs.begin(), inputs.end());
  }
  if (mode.script) propagate_dtypes(graph, inputs, self_inputs);
  try {
    record_types(*graph, run_inputs);
    buffers.restore();
  } catch (const c10::Error& e) {
    throw ModelError(std::string("running the model on the example inputs failed: ") + e.what_without_backtrace(),
                     ErrorContext::with_hint("check the --input shapes and dtypes"));
  }
  out.graph = graph;
  return out;
}

}  // namespace onnxport::core
