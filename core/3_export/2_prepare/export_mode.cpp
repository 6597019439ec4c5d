#include "3_export/2_prepare/export_mode.h"

#include <algorithm>
#include <optional>

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/lower_tuples.h>
#include <torch/csrc/jit/runtime/custom_operator.h>

#include <map>
#include <set>

#include "1_base/libtorch_message.h"
#include "onnxport/errors.h"
#include "3_export/2_prepare/torch_graph.h"

namespace onnxport::core {

namespace {

// Ops that read a tensor's metadata, not its values.
bool reads_metadata_only(const torch::jit::Node* n) {
  static const std::set<std::string> kinds = {
      "aten::size",   "aten::dim",    "aten::len",       "prim::shape",   "aten::numel",  "prim::dtype",
      "prim::device", "aten::__is__", "aten::__isnot__", "prim::is_cuda", "prim::layout", "aten::is_floating_point"};
  return kinds.count(n->kind().toQualString()) > 0;
}

class DependenceAnalysis {
 public:
  explicit DependenceAnalysis(const torch::jit::Graph& g) : graph_(g) {}

  Dependence of(const torch::jit::Value* v) {
    if (auto it = memo_.find(v); it != memo_.end()) return it->second;
    memo_[v] = Dependence::None;  // cycles through loop-carried values
    Dependence d = compute(v);
    memo_[v] = d;
    return d;
  }

 private:
  Dependence compute(const torch::jit::Value* v) {
    const auto* n = v->node();
    if (n == graph_.param_node()) {
      // Module `self` holds constants; the example inputs are data.
      return v->type()->cast<c10::ClassType>() ? Dependence::None : Dependence::Data;
    }
    if (n->kind() == c10::prim::Param) {  // a block input: loop iteration or carried value
      const auto* owner = n->owningBlock()->owningNode();
      Dependence d = Dependence::None;
      if (owner)
        for (const auto* in : owner->inputs()) d = std::max(d, of(in));
      if (owner && v->offset() > 0 && owner->kind() == c10::prim::Loop) {
        const auto* block = n->owningBlock();
        d = std::max(d, of(block->outputs()[v->offset()]));
      }
      return d;
    }
    if (n->kind() == c10::prim::Constant || n->kind() == c10::prim::GetAttr) return Dependence::None;
    Dependence d = Dependence::None;
    for (const auto* in : n->inputs()) d = std::max(d, of(in));
    if (reads_metadata_only(n) && d == Dependence::Data) d = Dependence::Shape;
    // A value produced by control flow depends on what decided it.
    if (n->kind() == c10::prim::If || n->kind() == c10::prim::Loop) {
      for (const auto* b : n->blocks())
        d = std::max(d, of(b->outputs()[v->offset() + (n->kind() == c10::prim::Loop ? 1 : 0)]));
    }
    return d;
  }
  const torch::jit::Graph& graph_;
  std::map<const torch::jit::Value*, Dependence> memo_;
};

// Ops that turn a tensor into a number: a trace keeps the number the example inputs gave.
bool makes_number_from_tensor(const torch::jit::Node* n) {
  static const std::set<std::string> kinds = {"aten::Int",           "aten::Float",          "aten::Bool",
                                              "aten::item",          "aten::IntImplicit",    "aten::FloatImplicit",
                                              "aten::ScalarImplicit", "aten::is_nonzero",    "aten::tolist"};
  return n->inputs().size() >= 1 && kinds.count(n->kind().toQualString()) > 0 &&
         n->input(0)->type()->cast<c10::TensorType>();
}

// Ops that give a size of a tensor as a number (not its rank, dtype or device).
bool takes_size_as_number(const torch::jit::Node* n) {
  static const std::set<std::string> kinds = {"aten::size", "aten::numel", "aten::len", "prim::shape"};
  return kinds.count(n->kind().toQualString()) > 0 && n->inputs().size() >= 1 &&
         n->input(0)->type()->cast<c10::TensorType>() && n->outputs().size() == 1 && n->output()->hasUses() &&
         !n->output()->type()->cast<c10::TensorType>();
}

void collect_sites(const torch::jit::Block* b, DependenceAnalysis& deps, TraceFixedSites& out) {
  for (const auto* n : b->nodes()) {
    if (n->kind() == c10::prim::If) {
      out.control_flow.push_back({n, deps.of(n->input())});
    } else if (n->kind() == c10::prim::Loop) {
      const auto* body = n->blocks()[0];
      out.control_flow.push_back(
          {n, std::max({deps.of(n->inputs()[0]), deps.of(n->inputs()[1]), deps.of(body->outputs()[0])})});
    } else if (makes_number_from_tensor(n) && deps.of(n->input(0)) == Dependence::Data) {
      out.numbers.push_back({n, Dependence::Data});
    } else if (takes_size_as_number(n) && deps.of(n->input(0)) == Dependence::Data) {
      out.sizes.push_back({n, Dependence::Shape});
    }
    for (const auto* sub : n->blocks()) collect_sites(sub, deps, out);
  }
}

const char* dependence_text(Dependence d) {
  switch (d) {
    case Dependence::None: return "constants";
    case Dependence::Shape: return "input sizes";
    case Dependence::Data: return "tensor values";
  }
  return "?";
}

// torch.tensor / torch.as_tensor of numbers: libtorch fills the tensor by a copy the tracer does not
// see, so a trace of the op records an empty tensor. Wrapped in this op, the original runs with
// tracing off and the trace records its result as a constant holding the values, as a Python
// trace of torch.tensor does.
const c10::Symbol kUntracedTensor = c10::Symbol::fromQualString("onnxport::untraced_tensor");

const torch::jit::RegisterOperators untraced_tensor_op({torch::jit::Operator(
    kUntracedTensor,
    [](const torch::jit::Node* node) -> torch::jit::Operation {
      auto original = torch::jit::getOperatorForLiteral(node->s(c10::attr::name).c_str())->getOperation();
      return [original](torch::jit::Stack& stack) mutable {
        const auto state = torch::jit::tracer::getTracingState();
        torch::jit::tracer::setTracingState(nullptr);
        try {
          original(stack);
        } catch (...) {
          torch::jit::tracer::setTracingState(state);
          throw;
        }
        torch::jit::tracer::setTracingState(state);
        if (state) {
          const auto& result = stack.back();
          torch::jit::tracer::setValueTrace(result, state->graph->insertConstant(result));
        }
      };
    },
    c10::AliasAnalysisKind::CONSERVATIVE)});

bool makes_tensor_from_numbers(const torch::jit::Node* n) {
  const auto kind = n->kind();
  if (kind != c10::aten::tensor && kind != c10::aten::as_tensor) return false;
  return n->inputs().size() >= 1 && !n->input(0)->type()->cast<c10::TensorType>() && n->maybeSchema();
}

void wrap_tensors_from_numbers(torch::jit::Block* block) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    auto* n = *it++;
    for (auto* sub : n->blocks()) wrap_tensors_from_numbers(sub);
    if (!makes_tensor_from_numbers(n)) continue;
    auto* wrapped = block->owningGraph()->create(kUntracedTensor, n->inputs(), 1);
    wrapped->s_(c10::attr::name, c10::toString(n->schema()));
    wrapped->output()->setType(n->output()->type());
    wrapped->setSourceRange(n->sourceRange());
    wrapped->insertBefore(n);
    n->output()->replaceAllUsesWith(wrapped->output());
    n->destroy();
  }
}

}  // namespace

std::string ControlFlowSite::describe() const {
  std::string where = module_path_of(node);
  std::string src = source_of(node);
  std::string text = std::string(node->kind().toQualString()) + " in " + (where.empty() ? "forward" : where);
  if (!src.empty()) text += " (" + src + ")";
  return text;
}

TraceFixedSites trace_fixed_sites(const torch::jit::Graph& graph) {
  DependenceAnalysis deps(graph);
  TraceFixedSites out;
  collect_sites(graph.block(), deps, out);
  return out;
}

// libtorch's tracer returns tensors, and tuples, tensor lists and str-keyed dicts of them; it checks
// the values a run gives, so an Optional, Union or Any output may or may not trace.
enum class Traceable { Yes, Maybe, No };

Traceable traceable(const c10::TypePtr& t) {
  switch (t->kind()) {
    case c10::TypeKind::TensorType: return Traceable::Yes;
    case c10::TypeKind::OptionalType: return traceable(t->containedType(0));
    case c10::TypeKind::UnionType:
    case c10::TypeKind::AnyType: return Traceable::Maybe;
    case c10::TypeKind::ListType:  // a list of Optional tensors is no tensor list, whatever it holds
      return t->containedType(0)->kind() == c10::TypeKind::TensorType ? Traceable::Yes : Traceable::No;
    case c10::TypeKind::DictType:
      return t->containedType(0)->kind() == c10::TypeKind::StringType ? traceable(t->containedType(1))
                                                                       : Traceable::No;
    case c10::TypeKind::TupleType: {
      Traceable all = Traceable::Yes;
      for (const auto& e : t->containedTypes()) all = std::max(all, traceable(e));
      return all;
    }
    default: return Traceable::No;
  }
}

// The first graph output whose type is at least `at_least` untraceable, described.
std::optional<std::string> untraceable_output(const torch::jit::Graph& graph, Traceable at_least) {
  for (size_t i = 0; i < graph.outputs().size(); ++i)
    if (traceable(graph.outputs()[i]->type()) >= at_least)
      return "a value of type " + graph.outputs()[i]->type()->annotation_str() + " (output " + std::to_string(i) + ")";
  return std::nullopt;
}

ModeChoice choose_mode(const torch::jit::Graph& graph, const ExportOptions& o) {
  ModeChoice choice;
  const auto fixed = trace_fixed_sites(graph);
  const auto& sites = fixed.control_flow;
  choice.control_flow_sites = sites.size();
  const bool dynamic = !o.dynamic_axes.empty();
  std::vector<const ControlFlowSite*> needs_script;
  for (const auto& s : sites)
    if (s.dependence == Dependence::Data || (s.dependence == Dependence::Shape && dynamic)) needs_script.push_back(&s);
  for (const auto& s : fixed.numbers) needs_script.push_back(&s);
  // Tracing the control flow away would also fix these sizes, which dynamic axes must keep.
  if (dynamic && !sites.empty())
    for (const auto& s : fixed.sizes) needs_script.push_back(&s);
  if (o.mode == ExportMode::Script) {
    choice.script = true;
    choice.reason = "--mode script: " + std::to_string(sites.size()) + " control-flow node(s) kept as ONNX If/Loop";
    return choice;
  }
  // The graph is traced only where it has control flow.
  if (!sites.empty() && o.mode == ExportMode::Trace)
    if (auto type = untraceable_output(graph, Traceable::No))
      throw ModelError("--mode trace: the graph returns " + *type + ", which a trace cannot return",
                       ErrorContext::with_hint("export it with --mode script or --mode auto"));
  if (!sites.empty() && o.mode == ExportMode::Auto)
    if (auto type = untraceable_output(graph, Traceable::Maybe)) {
      choice.script = true;
      choice.reason = "--mode auto chose script: the graph returns " + *type + ", which a trace may not return";
      return choice;
    }
  if (o.mode == ExportMode::Auto && !needs_script.empty()) {
    choice.script = true;
    choice.reason = "--mode auto chose script: " + needs_script.front()->describe() + " depends on " +
                    dependence_text(needs_script.front()->dependence) +
                    (needs_script.size() > 1 ? " (and " + std::to_string(needs_script.size() - 1) + " more)" : "");
    return choice;
  }
  choice.reason =
      std::string(o.mode == ExportMode::Auto ? "--mode auto chose trace: " : "--mode trace: ") +
      (sites.empty() ? "the graph has no control flow"
                     : std::to_string(sites.size()) + " control-flow node(s) fixed by tracing, none depending on " +
                           (dynamic ? "tensor values or dynamic sizes" : "tensor values"));
  for (const auto* s : needs_script)
    choice.warnings.push_back(
        "the trace fixes " + s->describe() + " to what the example inputs did, but it depends on " +
        dependence_text(s->dependence) +
        ": other inputs may need another branch, trip count or number. Export with --mode script (or auto)");
  return choice;
}

std::shared_ptr<torch::jit::Graph> trace_graph(const std::shared_ptr<torch::jit::Graph>& graph,
                                               const c10::optional<c10::IValue>& self,
                                               const std::vector<c10::IValue>& inputs) {
  auto copy = graph->copy();
  wrap_tensors_from_numbers(copy->block());
  if (copy->outputs().size() != 1) {  // a function returns one value: pack several in a tuple
    std::vector<torch::jit::Value*> outs(copy->outputs().begin(), copy->outputs().end());
    while (!copy->outputs().empty()) copy->eraseOutput(0);
    copy->registerOutput(copy->insertNode(copy->createTuple(outs))->output());
  }
  torch::jit::Stack traced_inputs(inputs.begin(), inputs.end());
  std::shared_ptr<torch::jit::tracer::TracingState> state;
  try {
    torch::NoGradGuard no_grad;
    state = std::get<0>(torch::jit::tracer::trace(
        traced_inputs,
        [&](torch::jit::Stack in) {
          torch::jit::Stack stack;
          if (self) stack.push_back(*self);
          stack.insert(stack.end(), in.begin(), in.end());
          run_graph(copy, stack);
          return stack;
        },
        [](const at::Tensor&) { return std::string(); }, /*strict=*/false, /*force_outplace=*/false));
  } catch (const std::exception& e) {
    throw ModelError("tracing the scripted model failed: " + libtorch_error_line(e.what()),
                     ErrorContext::with_hint("export it with --mode script"));
  }
  auto traced = state->graph;
  torch::jit::Inline(*traced);
  torch::jit::LowerAllTuples(traced);
  torch::jit::EliminateDeadCode(traced);
  return traced;
}

}  // namespace onnxport::core
