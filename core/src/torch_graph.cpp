#include "torch_graph.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/lower_tuples.h>

#include "onnxport/errors.h"

namespace onnxport::core {

DType dtype_of(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return DType::Float;
    case at::kDouble: return DType::Double;
    case at::kHalf: return DType::Float16;
    case at::kBFloat16: return DType::BFloat16;
    case at::kLong: return DType::Int64;
    case at::kInt: return DType::Int32;
    case at::kShort: return DType::Int16;
    case at::kChar: return DType::Int8;
    case at::kByte: return DType::UInt8;
    case at::kBool: return DType::Bool;
    case at::kComplexFloat: return DType::Complex64;
    case at::kComplexDouble: return DType::Complex128;
    default: return DType::Undefined;
  }
}

at::ScalarType scalar_type_of(DType t) {
  switch (t) {
    case DType::Float: return at::kFloat;
    case DType::Double: return at::kDouble;
    case DType::Float16: return at::kHalf;
    case DType::BFloat16: return at::kBFloat16;
    case DType::Int64: return at::kLong;
    case DType::Int32: return at::kInt;
    case DType::Int16: return at::kShort;
    case DType::Int8: return at::kChar;
    case DType::UInt8: return at::kByte;
    case DType::Bool: return at::kBool;
    default: throw ExportError(std::string("no torch dtype for ") + dtype_name(t));
  }
}

Tensor borrow_tensor(const at::Tensor& tensor) {
  at::Tensor t = tensor.detach();
  if (!t.is_contiguous()) t = t.contiguous();
  const DType dtype = dtype_of(t.scalar_type());
  if (dtype == DType::Undefined)
    throw ExportError(std::string("tensors of type ") + c10::toString(t.scalar_type()) + " cannot be exported");
  auto keepalive = std::make_shared<at::Tensor>(t);
  return Tensor::borrowed(dtype, t.sizes().vec(), t.data_ptr(), t.nbytes(),
                          std::shared_ptr<const void>(keepalive, keepalive.get()));
}

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

std::string module_path_of(const torch::jit::Node* node) {
  auto cs = node->callstack();
  if (!cs) return "";
  std::string path;
  for (const auto& entry : (*cs)->vec()) {
    const auto& info = std::get<torch::jit::kModuleInstanceInfo>(entry);
    if (!info) continue;
    const std::string name = info->instance_name();
    if (name.empty() || name == "self") continue;
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

void record_types(torch::jit::Graph& graph, const std::vector<torch::jit::IValue>& inputs) {
  // A copy of the graph that also returns every top-level tensor/number value, run once.
  auto recorder = graph.copy();
  std::vector<torch::jit::Value*> originals;
  auto orig_it = graph.nodes().begin();
  auto rec_it = recorder->nodes().begin();
  std::vector<torch::jit::Value*> extra;
  for (; orig_it != graph.nodes().end(); ++orig_it, ++rec_it) {
    for (size_t i = 0; i < orig_it->outputs().size(); ++i) {
      auto kind = orig_it->outputs()[i]->type()->kind();
      if (kind == c10::TypeKind::TensorType) {
        originals.push_back(orig_it->outputs()[i]);
        extra.push_back(rec_it->outputs()[i]);
      }
    }
  }
  // A graph function returns one value: pack the original outputs and the extras in a tuple.
  const size_t base_outputs = recorder->outputs().size();
  std::vector<torch::jit::Value*> all(recorder->outputs().begin(), recorder->outputs().end());
  all.insert(all.end(), extra.begin(), extra.end());
  while (!recorder->outputs().empty()) recorder->eraseOutput(0);
  auto* tuple = recorder->insertNode(recorder->createTuple(all));
  recorder->registerOutput(tuple->output());
  torch::jit::GraphFunction fn("onnxport_record_types", recorder, nullptr);
  torch::jit::Stack stack(inputs.begin(), inputs.end());
  {
    torch::NoGradGuard no_grad;
    fn.run(stack);
  }
  // Multiple outputs come back as one tuple.
  std::vector<c10::IValue> outs;
  if (stack.size() == 1 && stack[0].isTuple()) {
    for (const auto& e : stack[0].toTupleRef().elements()) outs.push_back(e);
  } else {
    outs.assign(stack.begin(), stack.end());
  }
  for (size_t i = 0; i < originals.size() && base_outputs + i < outs.size(); ++i) {
    const auto& iv = outs[base_outputs + i];
    if (iv.isTensor()) originals[i]->setType(c10::TensorType::create(iv.toTensor()));
  }
  for (size_t i = 0; i < graph.inputs().size() && i < inputs.size(); ++i)
    if (inputs[i].isTensor()) graph.inputs()[i]->setType(c10::TensorType::create(inputs[i].toTensor()));
}

PreparedGraph prepare_module(const torch::jit::Module& module, bool owned,
                             const std::vector<torch::jit::IValue>& inputs, const ExportOptions& options) {
  PreparedGraph out;
  // clone() and freeze_module() both deep-copy parameters: freeze in place instead.
  torch::jit::Module frozen = owned ? module : module.clone();
  if (options.training == TrainingMode::Eval) frozen.eval();
  if (options.training == TrainingMode::Train) frozen.train();
  for (const auto& p : frozen.named_parameters(true)) out.tensor_names.emplace(p.value.data_ptr(), p.name);
  for (const auto& b : frozen.named_buffers(true)) out.tensor_names.emplace(b.value.data_ptr(), b.name);
  torch::jit::freeze_module_inplace(&frozen);

  auto graph = frozen.get_method("forward").graph()->copy();
  torch::jit::Inline(*graph);
  if (!graph->inputs().empty() && graph->inputs()[0]->type()->cast<c10::ClassType>()) {
    if (graph->inputs()[0]->hasUses()) out.self = frozen;
    else graph->eraseInput(0);
  }
  torch::jit::LowerAllTuples(graph);
  torch::jit::ConstantPropagationImmutableTypes(graph);
  torch::jit::EliminateDeadCode(graph);

  const size_t self_inputs = out.self ? 1 : 0;
  if (inputs.size() + self_inputs != graph->inputs().size())
    throw ConfigError("the model's forward takes " + std::to_string(graph->inputs().size() - self_inputs) + " inputs, " +
                          std::to_string(inputs.size()) + " example inputs were given",
                      ErrorContext{{}, {}, {}, {}, {}, "give one --input per forward argument, in order"});
  for (const auto& iv : inputs)
    if (iv.isTensor()) out.example_tensors.push_back(iv.toTensor());
  std::vector<torch::jit::IValue> run_inputs;
  if (out.self) run_inputs.push_back(out.self->_ivalue());
  run_inputs.insert(run_inputs.end(), inputs.begin(), inputs.end());
  // Training-mode ops (BatchNorm) update buffers in place while recording: snapshot and restore
  // them so the export holds the module's values as loaded.
  std::vector<std::pair<at::Tensor, at::Tensor>> saved;
  if (out.self)
    for (const auto& b : out.self->named_buffers(true)) saved.emplace_back(b.value, b.value.clone());
  try {
    record_types(*graph, run_inputs);
    torch::NoGradGuard no_grad;
    for (auto& [live, copy] : saved) live.copy_(copy);
  } catch (const c10::Error& e) {
    throw ModelError(std::string("running the model on the example inputs failed: ") + e.what_without_backtrace(),
                     ErrorContext{{}, {}, {}, {}, {}, "check the --input shapes and dtypes"});
  }
  out.graph = graph;
  return out;
}

}  // namespace onnxport::core
