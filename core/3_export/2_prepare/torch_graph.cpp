#include "3_export/2_prepare/torch_graph.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/custom_operator.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/lower_tuples.h>

#include <torch/csrc/jit/passes/shape_analysis.h>

#include "onnxport/errors.h"

namespace onnxport::core {

TensorType tensor_type_of(const torch::jit::Value* v, bool keep_static_dims) {
  TensorType out;
  const auto& type = v->type();
  if (auto tt = type->cast<c10::TensorType>()) {
    if (auto st = tt->scalarType()) out.dtype = dtype_of(*st);
    if (auto sizes = tt->sizes().concrete_sizes()) {
      std::vector<Dim> dims;
      for (int64_t d : *sizes) dims.push_back(keep_static_dims ? Dim::fixed(d) : Dim::unknown());
      out.shape = dims;
    } else if (auto rank = tt->dim()) {
      out.shape = std::vector<Dim>(*rank, Dim::unknown());
    }
  } else if (type->kind() == c10::TypeKind::IntType) {
    out.dtype = DType::Int64;
    out.shape = std::vector<Dim>{};
  } else if (type->kind() == c10::TypeKind::FloatType) {
    out.dtype = DType::Double;
    out.shape = std::vector<Dim>{};
  } else if (type->kind() == c10::TypeKind::BoolType) {
    out.dtype = DType::Bool;
    out.shape = std::vector<Dim>{};
  }
  return out;
}

bool is_complex_dtype(DType t) { return t == DType::Complex64 || t == DType::Complex128; }

TensorType real_pair_type(TensorType t) {
  if (!is_complex_dtype(t.dtype)) return t;
  t.dtype = t.dtype == DType::Complex64 ? DType::Float : DType::Double;
  if (t.shape) t.shape->push_back(Dim::fixed(2));
  return t;
}

std::optional<bool> holds_complex_tensor(const torch::jit::Value* v) {
  const auto tt = v->type()->cast<c10::TensorType>();
  if (!tt) return false;
  const auto st = tt->scalarType();
  if (!st) return std::nullopt;
  return c10::isComplexType(*st);
}

bool is_number_type(const c10::TypePtr& type) {
  const auto k = type->kind();
  return k == c10::TypeKind::IntType || k == c10::TypeKind::FloatType || k == c10::TypeKind::BoolType;
}

std::string module_path_of(const torch::jit::Node* node) {
  auto cs = node->callstack();
  if (!cs) return "";
  std::string path;
  for (const auto& entry : (*cs)->vec()) {
    const auto& info = std::get<torch::jit::kModuleInstanceInfo>(entry);
    if (!info) continue;
    const std::string name = info->instance_name();
    if (name.empty() || name == "self" || name == "SELF") continue;  // SELF: a method calling another of its module
    path += (path.empty() ? "" : ".") + name;
  }
  return path;
}

std::string source_of(const torch::jit::Node* node) {
  // A loaded model's nodes point into the archive's serialized code; the range that generated
  // it (kept in the debug info) is the user's own source file.
  auto range = node->sourceRange();
  if (auto original = range.findSourceRangeThatGenerated()) range = *original;
  const auto flc = range.file_line_col();
  if (!flc) return "";
  const std::string& file = std::get<0>(*flc);
  return file + ":" + std::to_string(std::get<1>(*flc));
}

namespace {

torch::jit::GraphFunction* callee_of(torch::jit::Node* call) {
  if (call->kind() == c10::prim::CallMethod) {
    auto type = call->input(0)->type()->cast<c10::ClassType>();
    return type ? torch::jit::tryToGraphFunction(type->getMethod(call->s(c10::attr::name))) : nullptr;
  }
  if (call->kind() == c10::prim::CallFunction && call->input(0)->node()->kind() == c10::prim::Constant) {
    auto type = call->input(0)->type()->cast<c10::FunctionType>();
    return type ? torch::jit::tryToGraphFunction(*type->function()) : nullptr;
  }
  return nullptr;
}

// Inlines from the innermost call out, as Inline does with its optimized graphs: each callee's
// body is inlined first (once per callee, on a copy), so that the inlined nodes' call stacks
// name every module on the way ("features" then "0": module path features.0).
class CallInliner {
 public:
  void inline_block(torch::jit::Block* block) {
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      torch::jit::Node* n = *it++;
      for (auto* b : n->blocks()) inline_block(b);
      torch::jit::GraphFunction* callee = callee_of(n);
      if (!callee) continue;
      torch::jit::Graph& body = inlined_body(callee);
      if (n->kind() == c10::prim::CallFunction) n->removeInput(0);  // the function constant
      torch::jit::inlineCallTo(n, callee, &body);
    }
  }

 private:
  torch::jit::Graph& inlined_body(torch::jit::GraphFunction* callee) {
    auto known = bodies_.find(callee);
    if (known != bodies_.end()) return *known->second;
    auto body = callee->graph()->copy();
    inline_block(body->block());
    return *(bodies_[callee] = body);
  }

  std::unordered_map<torch::jit::GraphFunction*, std::shared_ptr<torch::jit::Graph>> bodies_;
};

}  // namespace

void inline_calls(torch::jit::Graph& graph) { CallInliner().inline_block(graph.block()); }

const std::string& SourceLocations::of(const torch::jit::Node* node) {
  const auto& range = node->sourceRange();
  const auto key = std::make_tuple(range.source().get(), range.start(), range.end());
  auto it = known_.find(key);
  if (it == known_.end()) it = known_.emplace(key, Entry{range.source(), source_of(node)}).first;
  return it->second.location;
}

void run_graph(const std::shared_ptr<torch::jit::Graph>& graph, torch::jit::Stack& stack) {
  // The plain interpreter: a GraphFunction would go through the profiling executor, whose
  // instrumentation of the graph takes time quadratic in its size (minutes at 50k nodes).
  torch::jit::Code code(graph, "onnxport_run");
  torch::jit::InterpreterState(code).run(stack);
}

std::vector<std::pair<const torch::jit::Value*, at::Tensor>> run_and_collect(
    const torch::jit::Graph& graph, const std::vector<torch::jit::IValue>& inputs, bool copy_values) {
  // A copy of the graph that also returns every top-level tensor value, run once.
  auto recorder = const_cast<torch::jit::Graph&>(graph).copy();  // copy() is not const, but reads only
  std::vector<const torch::jit::Value*> originals;
  std::vector<torch::jit::Value*> extra;
  std::vector<torch::jit::Node*> producers;  // of each extra value, in the recorder
  auto rec_it = recorder->nodes().begin();
  for (auto orig_it = graph.nodes().begin(); orig_it != graph.nodes().end(); ++orig_it, ++rec_it) {
    for (size_t i = 0; i < orig_it->outputs().size(); ++i) {
      if (orig_it->outputs()[i]->type()->kind() != c10::TypeKind::TensorType) continue;
      originals.push_back(orig_it->outputs()[i]);
      extra.push_back(rec_it->outputs()[i]);
      producers.push_back(*rec_it);
    }
  }
  if (copy_values && !extra.empty()) {
    torch::jit::Value* no_format = nullptr;
    {
      torch::jit::WithInsertPoint at_start(*recorder->nodes().begin());
      no_format = recorder->insertConstant(c10::IValue());
    }
    for (size_t i = 0; i < extra.size(); ++i) {
      auto* copy = recorder->create(c10::aten::clone, {extra[i], no_format});
      copy->output()->setType(extra[i]->type());
      copy->insertAfter(producers[i]);
      extra[i] = copy->output();
    }
  }
  // A graph function returns one value: pack the original outputs and the extras in a tuple.
  const size_t base_outputs = recorder->outputs().size();
  std::vector<torch::jit::Value*> all(recorder->outputs().begin(), recorder->outputs().end());
  all.insert(all.end(), extra.begin(), extra.end());
  while (!recorder->outputs().empty()) recorder->eraseOutput(0);
  auto* tuple = recorder->insertNode(recorder->createTuple(all));
  recorder->registerOutput(tuple->output());
  torch::jit::Stack stack(inputs.begin(), inputs.end());
  {
    torch::NoGradGuard no_grad;
    run_graph(recorder, stack);
  }
  std::vector<c10::IValue> outs;
  if (stack.size() == 1 && stack[0].isTuple()) {
    for (const auto& e : stack[0].toTupleRef().elements()) outs.push_back(e);
  } else {
    outs.assign(stack.begin(), stack.end());
  }
  std::vector<std::pair<const torch::jit::Value*, at::Tensor>> result;
  for (size_t i = 0; i < graph.inputs().size() && i < inputs.size(); ++i)
    if (inputs[i].isTensor()) result.emplace_back(graph.inputs()[i], inputs[i].toTensor());
  for (size_t i = 0; i < originals.size() && base_outputs + i < outs.size(); ++i)
    if (outs[base_outputs + i].isTensor()) result.emplace_back(originals[i], outs[base_outputs + i].toTensor());
  return result;
}

namespace {

// Where onnxport::record_type writes while record_types runs a graph (one run at a time per thread).
thread_local std::vector<c10::TypePtr>* recorded_types = nullptr;
thread_local size_t values_recorded = 0;  // how far the run got: slots are in graph order

// onnxport::record_type(value, slot) keeps the type of a tensor as the interpreter computes it,
// so a run records every value's type without holding every value (a forward pass's
// activations would all be alive at once: hundreds of MB on a ViT).
torch::jit::RegisterOperators register_record_type({torch::jit::Operator(
    "onnxport::record_type(Tensor? value, int slot) -> ()",
    [](torch::jit::Stack& stack) {
      const int64_t slot = stack.back().toInt();
      const c10::IValue value = stack[stack.size() - 2];
      stack.resize(stack.size() - 2);
      if (!recorded_types) return;
      values_recorded = static_cast<size_t>(slot) + 1;
      if (!value.isTensor() || !value.toTensor().defined()) return;
      const at::Tensor& t = value.toTensor();
      // A nested tensor (TransformerEncoder's fast path) has a rank and dtype but no sizes.
      recorded_types->at(static_cast<size_t>(slot)) =
          t.is_nested() ? c10::TensorType::create(t.scalar_type(), t.device(), c10::VaryingShape<int64_t>(t.dim()),
                                                  c10::VaryingShape<int64_t>(t.dim()), false)
                        : c10::TensorType::create(t);
    },
    // Conservative: the op has no outputs, and must not be removed as dead or reordered.
    c10::AliasAnalysisKind::CONSERVATIVE)});

// The last line of an interpreter error: the reason, without TorchScript's traceback.
std::string reason_of(const std::string& full) {
  // A c10::Error raised inside an op carries the C++ backtrace after its message.
  const std::string what = full.substr(0, full.find("\nException raised from"));
  std::string last;
  size_t start = 0;
  while (start <= what.size()) {
    size_t end = what.find('\n', start);
    if (end == std::string::npos) end = what.size();
    std::string line = what.substr(start, end - start);
    if (line.find_first_not_of(" \t") != std::string::npos) last = line.substr(line.find_first_not_of(" \t"));
    start = end + 1;
  }
  return last;
}

}  // namespace

std::string type_text(const c10::TypePtr& type) {
  auto t = type ? type->cast<c10::TensorType>() : nullptr;
  const auto sizes = t ? t->sizes().concrete_sizes() : c10::nullopt;
  if (!t || !t->scalarType() || !sizes) return type ? type->str() : "?";
  std::string dims;
  for (int64_t d : *sizes) dims += (dims.empty() ? "" : ",") + std::to_string(d);
  return dtype_name(dtype_of(*t->scalarType())) + std::string("[") + dims + "]";
}

namespace {

const c10::Symbol kRecordType = c10::Symbol::fromQualString("onnxport::record_type");

}  // namespace

void record_types(torch::jit::Graph& graph, const std::vector<torch::jit::IValue>& inputs, bool full_traceback) {
  // A copy of the graph with a record_type call after every top-level node: one per tensor
  // output (its type), or one with None for a node without (how far the run got).
  auto recorder = graph.copy();
  std::vector<torch::jit::Node*> nodes;         // per slot: the original node
  std::vector<torch::jit::Value*> originals;    // per slot: its tensor value, or null
  std::vector<torch::jit::Value*> copies;       // per slot: what the recorder records
  std::vector<torch::jit::Node*> copied_nodes;  // per slot: the recorder's node
  auto rec_it = recorder->nodes().begin();
  for (auto orig_it = graph.nodes().begin(); orig_it != graph.nodes().end(); ++orig_it, ++rec_it) {
    const size_t before = originals.size();
    for (size_t i = 0; i < orig_it->outputs().size(); ++i)
      if (orig_it->outputs()[i]->type()->kind() == c10::TypeKind::TensorType) {
        nodes.push_back(*orig_it);
        originals.push_back(orig_it->outputs()[i]);
        copies.push_back(rec_it->outputs()[i]);
        copied_nodes.push_back(*rec_it);
      }
    if (originals.size() == before) {
      nodes.push_back(*orig_it);
      originals.push_back(nullptr);
      copies.push_back(nullptr);
      copied_nodes.push_back(*rec_it);
    }
  }
  for (size_t slot = 0; slot < copies.size(); ++slot) {
    torch::jit::WithInsertPoint at(copied_nodes[slot]->next());
    // The recorded node's source range and scope: the interpreter's error report reads them.
    torch::jit::WithCurrentScope scope(*recorder, copied_nodes[slot]->scope());
    const auto& range = copied_nodes[slot]->sourceRange();
    torch::jit::Value* slot_value = recorder->insertConstant(static_cast<int64_t>(slot), range);
    torch::jit::Value* value = copies[slot] ? copies[slot] : recorder->insertConstant(c10::IValue(), range);
    recorder->insertNode(recorder->create(kRecordType, {value, slot_value}, 0))->setSourceRange(range);
  }
  std::vector<c10::TypePtr> types(originals.size());
  torch::jit::Stack stack(inputs.begin(), inputs.end());
  recorded_types = &types;
  values_recorded = 0;
  try {
    torch::NoGradGuard no_grad;
    run_graph(recorder, stack);
  } catch (const std::exception& e) {
    recorded_types = nullptr;
    // The node that failed is the first one not recorded. Its inputs' types as this run
    // computed them say what shapes met there.
    if (values_recorded >= nodes.size()) throw;
    const torch::jit::Node* failed = nodes[values_recorded];
    std::unordered_map<const torch::jit::Value*, size_t> slot_of;
    for (size_t i = 0; i < values_recorded; ++i)
      if (originals[i]) slot_of.emplace(originals[i], i);
    std::string operands;
    for (const auto* in : failed->inputs()) {
      if (in->type()->kind() != c10::TypeKind::TensorType) continue;
      const auto slot = slot_of.find(in);
      c10::TypePtr type = slot != slot_of.end() ? types[slot->second] : nullptr;
      for (size_t i = 0; !type && i < graph.inputs().size() && i < inputs.size(); ++i)
        if (graph.inputs()[i] == in && inputs[i].isTensor()) type = c10::TensorType::create(inputs[i].toTensor());
      operands += (operands.empty() ? "" : ", ") + type_text(type ? type : in->type());
    }
    throw ModelError("running the model on the example inputs failed: " + reason_of(e.what()) +
                         (operands.empty() ? "" : " (the op's tensor inputs: " + operands + ")") +
                         (full_traceback ? std::string("\n") + e.what() + "\n" : std::string()),
                     ErrorContext::for_node("", failed->kind().toQualString(), module_path_of(failed),
                                            source_of(failed)));
  }
  recorded_types = nullptr;
  for (size_t i = 0; i < graph.inputs().size() && i < inputs.size(); ++i)
    if (inputs[i].isTensor() && inputs[i].toTensor().defined())
      graph.inputs()[i]->setType(c10::TensorType::create(inputs[i].toTensor()));
  // An op's absent optional output (need_weights=False) recorded nothing and stays untyped.
  for (size_t i = 0; i < originals.size(); ++i)
    if (originals[i] && types[i]) originals[i]->setType(types[i]);
}

namespace {
bool has_blocks(const torch::jit::Graph& graph) {
  for (const auto* n : graph.nodes())
    if (!n->blocks().empty()) return true;
  return false;
}
}  // namespace

CompleteTypes::CompleteTypes(const torch::jit::Graph& graph) {
  auto keep = [&](const torch::jit::Value* v) {
    if (const auto t = v->type()->cast<c10::TensorType>(); t && t->isComplete()) types_.emplace(v->unique(), t);
  };
  for (const auto* in : graph.inputs()) keep(in);
  for (const auto* n : graph.nodes())
    for (const auto* out : n->outputs()) keep(out);
}

void CompleteTypes::restore(torch::jit::Graph& graph) const {
  // A graph with control flow runs under the tracer to be typed (trace_control_flow). Given the
  // trace's types, the graph that run made had sizes in view shapes (torchvision's AnchorGenerator:
  // [-1, 1, 4] became [100, 1, 4], shared with views of 25 rows).
  if (types_.empty() || has_blocks(graph)) return;
  auto put = [&](torch::jit::Value* v) {
    const auto it = types_.find(v->unique());
    if (it != types_.end() && v->type()->kind() == c10::TypeKind::TensorType) v->setType(it->second);
  };
  for (auto* in : graph.inputs()) put(in);
  for (auto* n : graph.nodes())
    for (auto* out : n->outputs()) put(out);
}

bool adopt_traced_types(torch::jit::Graph& graph, const std::vector<torch::jit::IValue>& inputs) {
  for (size_t i = 0; i < graph.inputs().size() && i < inputs.size(); ++i) {
    const c10::TypePtr& type = graph.inputs()[i]->type();
    if (type->kind() != c10::TypeKind::TensorType) continue;
    if (!inputs[i].isTensor() || !inputs[i].toTensor().defined()) return false;
    // Traced on tensors of other sizes (a module traced earlier, then given other inputs): no.
    const auto traced = type->expect<c10::TensorType>()->withRequiresGrad(false);
    if (*traced != *c10::TensorType::create(inputs[i].toTensor())->withRequiresGrad(false)) return false;
  }
  if (has_blocks(graph)) return false;
  for (const auto* n : graph.nodes())
    for (const auto* out : n->outputs())
      if (const auto t = out->type()->cast<c10::TensorType>(); t && !t->isComplete()) return false;
  for (size_t i = 0; i < graph.inputs().size() && i < inputs.size(); ++i)
    if (inputs[i].isTensor()) graph.inputs()[i]->setType(c10::TensorType::create(inputs[i].toTensor()));
  // The trace ran with autograd on; a run records types without it.
  for (auto* n : graph.nodes())
    for (auto* out : n->outputs())
      if (const auto t = out->type()->cast<c10::TensorType>()) out->setType(t->withRequiresGrad(false));
  return true;
}

namespace {
void copy_dtypes(const torch::jit::Block* from, torch::jit::Block* to) {
  auto copy_value = [](const torch::jit::Value* f, torch::jit::Value* t) {
    auto ft = f->type()->cast<c10::TensorType>();
    auto tt = t->type()->cast<c10::TensorType>();
    if (!ft || !tt || !ft->scalarType() || tt->scalarType()) return;
    auto typed = tt->withScalarType(ft->scalarType());
    if (auto rank = ft->dim()) typed = typed->withDim(rank);
    t->setType(typed);
  };
  for (size_t i = 0; i < from->inputs().size(); ++i) copy_value(from->inputs()[i], to->inputs()[i]);
  auto f = from->nodes().begin();
  auto t = to->nodes().begin();
  for (; f != from->nodes().end() && t != to->nodes().end(); ++f, ++t) {
    for (size_t i = 0; i < f->outputs().size() && i < t->outputs().size(); ++i)
      copy_value(f->outputs()[i], t->outputs()[i]);
    for (size_t b = 0; b < f->blocks().size() && b < t->blocks().size(); ++b)
      copy_dtypes(f->blocks()[b], t->blocks()[b]);
  }
}
}  // namespace

void propagate_dtypes(const std::shared_ptr<torch::jit::Graph>& graph, const std::vector<torch::jit::IValue>& inputs,
                      size_t self_inputs) {
  // TorchScript's shape propagation rewrites types the interpreter relies on, so it runs on a
  // copy; the original only takes dtypes and ranks of tensors (inside branches and loops too).
  auto copy = graph->copy();
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].isTensor()) copy->inputs()[i + self_inputs]->setType(c10::TensorType::create(inputs[i].toTensor()));
  try {
    torch::jit::PropagateInputShapes(copy);
  } catch (const std::exception&) {
    return;  // best effort: ONNX inference types what propagation could not
  }
  copy_dtypes(copy->block(), graph->block());
}

}  // namespace onnxport::core
