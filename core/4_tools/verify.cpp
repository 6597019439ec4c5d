// verify: the TorchScript model (libtorch) and the ONNX file (onnxport's evaluator) on the same
// inputs, several input sets, every output compared with rtol/atol; on a mismatch (or asked)
// node by node, through a second conversion of the model that maps ONNX values to TorchScript's.
#include "onnxport/verify.h"

#include <torch/csrc/jit/runtime/graph_executor.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <set>
#include <nlohmann/json.hpp>

#include "2_eval/evaluator.h"
#include "2_eval/pack_kernels.h"
#include "3_export/1_load/example_arguments.h"
#include "3_export/1_load/load.h"
#include "3_export/1_load/program_graph.h"
#include "3_export/6_write/export_settings.h"
#include "3_export/2_prepare/argument_inputs.h"
#include "3_export/2_prepare/attribute_writes.h"
#include "4_tools/model_inputs.h"
#include "3_export/6_write/model_check.h"
#include "onnxport/errors.h"
#include "onnxport/export.h"
#include "1_base/intra_op_threads.h"
#include "1_base/libtorch_message.h"
#include "1_base/torch_release.h"
#include "1_base/torch_tensors.h"
#include "1_base/output_file.h"
#include "4_tools/per_node.h"
#include "3_export/pipeline.h"
#include "4_tools/tensor_compare.h"

namespace onnxport {

namespace {

using core::eval::EvalValue;

// The model's outputs as the ONNX graph lays them out: tuples give their elements; a list gives
// its elements, or is one value where the graph's output at that place is a sequence; numbers
// become 0-d tensors.
void flatten_outputs(const c10::IValue& v, const std::vector<bool>& sequence_outputs, std::vector<EvalValue>& out) {
  if (v.isTensor()) {
    out.emplace_back(v.toTensor());
  } else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) flatten_outputs(e, sequence_outputs, out);
  } else if (v.isList() && out.size() < sequence_outputs.size() && sequence_outputs[out.size()]) {
    std::vector<at::Tensor> items;
    for (const auto& e : v.toListRef()) {
      if (!e.isTensor())
        throw ExportError(std::string("verify: the model returns a list holding a ") + e.tagKind() +
                              " where the ONNX graph has a sequence of tensors",
                          ErrorContext::with_hint("verify the ONNX file exported from this model"));
      items.push_back(e.toTensor());
    }
    out.push_back(EvalValue::of_sequence(std::move(items)));
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) flatten_outputs(e, sequence_outputs, out);
  } else if (v.isGenericDict()) {  // its values in the dict's order, as the export returns them
    for (const auto& item : v.toGenericDict()) flatten_outputs(item.value(), sequence_outputs, out);
  } else if (v.isInt()) {
    out.emplace_back(at::scalar_tensor(v.toInt(), at::kLong));
  } else if (v.isDouble()) {
    out.emplace_back(at::scalar_tensor(v.toDouble(), at::kFloat));
  } else if (v.isBool()) {
    out.emplace_back(at::scalar_tensor(v.toBool(), at::kBool));
  } else if (!v.isNone()) {
    throw ExportError(std::string("verify: the model returns a ") + v.tagKind() + ", which has no ONNX output",
                      ErrorContext::with_hint("verify models that return tensors (or tuples, lists and dicts of them)"));
  }
}

OutputCheck compare(const std::string& name, const at::Tensor& onnx, const at::Tensor& torch, const VerifyOptions& o) {
  const core::TensorDifference d = core::compare_tensors(onnx, torch, o.rtol, o.atol);
  return OutputCheck{name, d.type, d.max_abs_error, d.max_rel_error, d.ok, d.problem};
}

// A sequence output: as long as PyTorch's list, each item compared; the worst item's figures.
OutputCheck compare(const std::string& name, const EvalValue& onnx, const EvalValue& torch, const VerifyOptions& o) {
  if (!onnx.is_sequence() && !torch.is_sequence()) return compare(name, onnx.tensor, torch.tensor, o);
  OutputCheck c{name, "sequence", 0, 0, false, ""};
  if (!onnx.is_sequence() || !torch.is_sequence()) {
    c.problem = onnx.is_sequence() ? "ONNX gives a sequence, PyTorch a tensor" : "ONNX gives a tensor, PyTorch a list";
    return c;
  }
  const auto &items = *onnx.sequence, &expected = *torch.sequence;
  c.type = "sequence of " + std::to_string(items.size());
  if (items.size() != expected.size()) {
    c.problem = "ONNX gives " + std::to_string(items.size()) + " items, PyTorch " + std::to_string(expected.size());
    return c;
  }
  c.ok = true;
  for (size_t i = 0; i < items.size(); ++i) {
    const OutputCheck item = compare(name, items[i], expected[i], o);
    c.max_abs_error = std::max(c.max_abs_error, item.max_abs_error);
    c.max_rel_error = std::max(c.max_rel_error, item.max_rel_error);
    if (!item.ok && c.ok && !item.problem.empty()) c.problem = "item " + std::to_string(i) + ": " + item.problem;
    c.ok = c.ok && item.ok;
  }
  return c;
}

std::string tolerances(const VerifyOptions& o) {
  return "(rtol " + core::error_figure(o.rtol) + ", atol " + core::error_figure(o.atol) + ")";
}

std::string node_text(const NodeCheck& n) {
  std::string text = n.op_type + " node '" + n.node + "' (value '" + n.output + "'), from " + n.torch_op;
  if (!n.pack.empty()) text += " by op pack '" + n.pack + "'";
  if (!n.module_path.empty()) text += " in module '" + n.module_path + "'";
  if (!n.source.empty()) text += " at " + n.source;
  if (!n.uncompared_sources.empty()) {
    text += "; it reads values not compared, from ";
    for (size_t i = 0; i < n.uncompared_sources.size(); ++i) text += (i ? ", " : "") + n.uncompared_sources[i];
  }
  return text;
}

// How many graph inputs an argument of this type became: a tensor one, a tuple its elements'
// (as the export flattens them); 0 for a type verify cannot build from tensors.
size_t graph_inputs_of(const c10::TypePtr& type) {
  if (type->kind() == c10::TypeKind::TensorType) return 1;
  if (type->kind() == c10::TypeKind::OptionalType) return graph_inputs_of(type->expectRef<c10::OptionalType>().getElementType());
  if (type->kind() != c10::TypeKind::TupleType) return 0;
  size_t count = 0;
  for (const auto& element : type->expectRef<c10::TupleType>().elements()) {
    const size_t n = graph_inputs_of(element);
    if (n == 0) return 0;
    count += n;
  }
  return count;
}

c10::IValue argument_from(const c10::TypePtr& type, const std::vector<at::Tensor>& tensors, size_t& next) {
  if (type->kind() == c10::TypeKind::TensorType) return tensors.at(next++);
  if (type->kind() == c10::TypeKind::OptionalType)
    return argument_from(type->expectRef<c10::OptionalType>().getElementType(), tensors, next);
  std::vector<c10::IValue> elements;
  for (const auto& element : type->expectRef<c10::TupleType>().elements())
    elements.push_back(argument_from(element, tensors, next));
  return c10::ivalue::Tuple::create(std::move(elements));
}

// forward()'s arguments (without self) from one tensor per graph input, in order; an argument
// with a default (an LSTM's hx=None) past the last tensor takes its default, as in the export.
std::vector<c10::IValue> forward_arguments(const torch::jit::Module& module, const std::vector<at::Tensor>& tensors) {
  const auto& arguments = module.get_method("forward").function().getSchema().arguments();
  std::vector<c10::IValue> args;
  size_t next = 0;
  for (size_t i = 1; i < arguments.size(); ++i) {
    if (next == tensors.size() && arguments[i].default_value()) {
      args.push_back(*arguments[i].default_value());
      continue;
    }
    args.push_back(argument_from(arguments[i].type(), tensors, next));
  }
  return args;
}

// The exported method's arguments from one value per graph input: one per tensor, tuples
// flattened (tensor specs), or rebuilt around the constants the export folded (whole specs:
// numbers, None, collections).
class MethodArguments {
 public:
  MethodArguments(const std::vector<InputSpec>& specs, const torch::jit::Module& module,
                  const std::vector<std::string>& graph_inputs, const VerifyOptions& options)
      : module_(module), specs_(specs) {
    const auto& schema = module.get_method("forward").function().getSchema();
    whole_ = given_whole(specs, schema);
    if (!whole_) return;
    made_ = core::make_example_arguments(specs, options.seed, schema, core::export_target_name(options.export_options));
    is_input_ = [names = std::set<std::string>(graph_inputs.begin(), graph_inputs.end())](const std::string& n) {
      return names.count(n) > 0;
    };
  }
  bool whole() const { return whole_; }

  // Specs name graph inputs (some may be left to draw) unless one gives what is no graph input
  // of its own: a number, None, a collection, or a file for an argument that is no tensor.
  static bool given_whole(const std::vector<InputSpec>& specs, const c10::FunctionSchema& schema) {
    for (const auto& spec : specs) {
      if (!spec.is_tensor()) return true;
      for (const auto& argument : schema.arguments())
        if (argument.name() == spec.name && !argument.type()->cast<c10::TensorType>() &&
            !argument.type()->cast<c10::OptionalType>())
          return !core::tuple_elements_one_by_one(specs, schema);
    }
    return false;
  }
  // The specs of the graph's inputs.
  std::vector<InputSpec> graph_specs() const { return whole_ ? core::graph_input_specs(made_, specs_, is_input_) : specs_; }
  std::vector<c10::IValue> operator()(const std::vector<at::Tensor>& tensors) const {
    return whole_ ? core::arguments_from_graph_inputs(made_, specs_, tensors, is_input_)
                  : forward_arguments(module_, tensors);
  }

 private:
  const torch::jit::Module& module_;
  std::vector<InputSpec> specs_;
  bool whole_ = false;
  std::vector<c10::IValue> made_;
  std::function<bool(const std::string&)> is_input_;
};

// A file exported with --state-io: graph input NAME, output NAME_out and the module tensor NAME.
struct StatePair {
  size_t input;
  size_t output;
  std::string path;
};

const onnx::ValueInfoProto& graph_input(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto& input : graph.input())
    if (input.name() == name) return input;
  throw std::logic_error("no graph input '" + name + "'");
}

std::vector<StatePair> state_pairs(const torch::jit::Module& module, const core::eval::ModelEvaluator& evaluator) {
  std::vector<StatePair> pairs;
  const auto& outputs = evaluator.output_names();
  for (size_t i = 0; i < evaluator.input_names().size(); ++i) {
    const std::string& name = evaluator.input_names()[i];
    const auto out = std::find(outputs.begin(), outputs.end(), name + "_out");
    if (out != outputs.end() && core::attribute_tensor(module, name).defined())
      pairs.push_back({i, static_cast<size_t>(out - outputs.begin()), name});
  }
  std::sort(pairs.begin(), pairs.end(), [](const StatePair& a, const StatePair& b) { return a.output < b.output; });
  return pairs;
}

// `specs`, `given_for_state` and, for each other state input with dynamic dims (state_start.h), its
// value in the model file, which each input set starts from: such an input has no size to draw.
std::vector<InputSpec> with_state_specs(std::vector<InputSpec> specs, const std::vector<InputSpec>& given_for_state,
                                        const onnx::ModelProto& model,
                                        const core::eval::ModelEvaluator& evaluator, const torch::jit::Module& module,
                                        const std::vector<StatePair>& state) {
  specs.insert(specs.end(), given_for_state.begin(), given_for_state.end());
  for (const auto& pair : state) {
    const std::string& name = evaluator.input_names()[pair.input];
    const at::Tensor value = core::attribute_tensor(module, pair.path);
    const bool given = std::any_of(specs.begin(), specs.end(), [&](const InputSpec& s) { return s.name == name; });
    if (given || !core::fits_declared(graph_input(model.graph(), name), core::as_onnx_input(value))) continue;
    InputSpec spec;
    spec.name = name;
    spec.shape = value.sizes().vec();
    spec.dtype = core::dtype_of(value.scalar_type());
    specs.push_back(spec);
  }
  return specs;
}

// Converts MODEL.pt again (in memory, nothing written) to learn libtorch's value of each ONNX
// value on `inputs`, then compares node by node.
void compare_nodes(const std::string& model_path, core::ProgramArchive* program, const MethodArguments& arguments,
                   const std::string& onnx_path,
                   const onnx::ModelProto& model, const core::eval::ModelEvaluator& evaluator,
                   const core::ModelInputs& inputs, const VerifyOptions& options, Exporter* exporter,
                   VerifyResult& result) {
  ExportOptions export_options = options.export_options;
  for (const auto& opset : model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx") export_options.opset_version = opset.version();
  core::TorchReference reference;
  ExportReport report;
  core::Pipeline pipeline(exporter->registry(), export_options, model_path, "", report);
  pipeline.stop_after_passes("record torch values", [&](const core::PreparedGraph& prepared, const auto& value_names,
                                                        const core::OnnxModel& converted) {
    reference = core::record_torch_reference(prepared, value_names, converted);
  });
  try {
    pipeline.run([&] {
      if (program) return core::load_program(*program, export_options, arguments(inputs.tensors));
      // As export takes them: tensor specs are the graph's inputs, forward's defaults filled by the
      // load (a None default given here would reach the tracer as an input).
      if (!arguments.whole())
        return core::load_model_file(model_path, export_options,
                                     std::vector<c10::IValue>(inputs.tensors.begin(), inputs.tensors.end()), false);
      return core::load_model_file(model_path, export_options, arguments(inputs.tensors), true);
    });
  } catch (const Error& e) {
    result.per_node_note =
        std::string("intermediate values not compared: converting '") + model_path + "' again failed: " + e.what();
    return;
  }
  const auto feeds = core::as_onnx_inputs(inputs.tensors);
  result.nodes = core::compare_per_node(evaluator, model.graph(), std::vector<EvalValue>(feeds.begin(), feeds.end()),
                                        reference,
                                        options.rtol, options.atol);
  if (result.nodes.empty()) {
    result.per_node_note = "intermediate values not compared: no value of '" + onnx_path +
                           "' has a name the conversion of '" + model_path +
                           "' gives (give verify the options it was exported with: --config, --mode, --opset)";
    return;
  }
  for (size_t i = 0; i < result.nodes.size(); ++i)
    if (!result.nodes[i].ok) {
      result.first_diverging = static_cast<int>(i);
      break;
    }
  result.per_node_note = result.first_diverging < 0
                             ? "all " + std::to_string(result.nodes.size()) + " intermediate values compared agree"
                             : "first diverging node: " + node_text(result.nodes[result.first_diverging]);
}

void check_evaluable(const core::eval::ModelEvaluator& evaluator, const torch::jit::Module& module,
                     const std::string& model_path, const std::string& onnx_path, size_t state_inputs) {
  evaluator.check_supported();
  const auto& arguments = module.get_method("forward").function().getSchema().arguments();
  size_t tensors = 0;
  const size_t given = evaluator.input_names().size() - state_inputs;
  for (size_t i = 1; i < arguments.size(); ++i) {  // without self
    if (tensors == given && arguments[i].default_value()) continue;  // left at its default
    const size_t n = graph_inputs_of(arguments[i].type());
    if (n == 0)
      throw ConfigError("verify: forward() of '" + model_path + "' takes '" + arguments[i].name() + "' of type " +
                            arguments[i].type()->annotation_str() + ", which verify cannot build from graph inputs",
                        ErrorContext::with_hint("verify compares models whose forward takes tensors and tuples of "
                                                "tensors; compare this one in ONNX Runtime"));
    tensors += n;
  }
  if (tensors != given)
    throw ConfigError("verify: forward() of '" + model_path + "' takes " + std::to_string(tensors) + " tensors, '" +
                          onnx_path + "' has " + std::to_string(given) + " inputs" +
                          (state_inputs ? " besides its " + std::to_string(state_inputs) + " state inputs" : ""),
                      ErrorContext::with_hint("verify the ONNX file exported from this model"));
}

// PyTorch's own float32 can be off: libtorch 2.6's oneDNN LSTM is 0.23 away from its math on an AMD
// EPYC, its ConvTranspose2d 0.03. An output that mismatches is judged again against the model run
// in float64 (parameters, buffers and floating inputs), or, when it cannot run so (a trace holds
// float32 constants, such as an LSTM's zero initial state), in float32 with oneDNN off. When the
// ONNX output matches that run and PyTorch's float32 does not, the file is right and the check
// says how far PyTorch was off. Without such a run the mismatch stands.
struct Reference {
  std::vector<EvalValue> outputs;
  std::string name;  // "float64 run", "run without oneDNN"
};

using core::torch_release::OneDnnOff;

std::optional<Reference> reference_run(torch::jit::Module& module, const MethodArguments& arguments,
                                       const std::vector<bool>& sequence_outputs, const core::ModelInputs& inputs) {
  Reference r;
  try {
    torch::jit::Module wide = module.clone();
    wide.to(at::kDouble);
    std::vector<at::Tensor> tensors;
    for (const auto& t : inputs.tensors)
      tensors.push_back(t.defined() && at::isFloatingType(t.scalar_type()) ? t.to(at::kDouble) : t);
    flatten_outputs(wide.forward(arguments(tensors)), sequence_outputs, r.outputs);
    r.name = "float64 run";
    return r;
  } catch (const std::exception&) {
  }
  if (!at::globalContext().userEnabledMkldnn()) return std::nullopt;
  try {
    const OneDnnOff one_dnn_off;
    r.outputs.clear();
    flatten_outputs(module.forward(arguments(inputs.tensors)), sequence_outputs, r.outputs);
    r.name = "run without oneDNN";
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void judge_by_reference(torch::jit::Module& module, const MethodArguments& arguments,
                        const std::vector<bool>& sequence_outputs, const core::ModelInputs& inputs,
                        const std::vector<EvalValue>& actual, const std::vector<EvalValue>& expected,
                        const VerifyOptions& options, SampleCheck& sample) {
  const std::optional<Reference> reference = reference_run(module, arguments, sequence_outputs, inputs);
  if (!reference) return;
  sample.ok = true;
  for (size_t i = 0; i < sample.outputs.size(); ++i) {
    OutputCheck& check = sample.outputs[i];
    const bool narrow = !expected[i].is_sequence() && expected[i].tensor.defined() &&
                        (expected[i].tensor.scalar_type() == at::kFloat || expected[i].tensor.scalar_type() == at::kHalf);
    const auto& truth_value = i < reference->outputs.size() ? reference->outputs[i] : EvalValue();
    if (!check.ok && narrow && !truth_value.is_sequence() && truth_value.tensor.defined() &&
        truth_value.tensor.sizes() == expected[i].tensor.sizes()) {
      const at::Tensor truth = truth_value.tensor.to(expected[i].tensor.scalar_type());
      const OutputCheck against_reference = compare(check.name, actual[i].tensor, truth, options);
      const core::TensorDifference pytorch = core::compare_tensors(expected[i].tensor, truth, options.rtol, options.atol);
      if (against_reference.ok && !pytorch.ok) {
        check = against_reference;
        check.pytorch_off_by = pytorch.max_abs_error;
        check.judged_by = reference->name;
      }
    }
    sample.ok = sample.ok && check.ok;
  }
}

SampleCheck check_sample(torch::jit::Module& module, const MethodArguments& arguments,
                         const core::eval::ModelEvaluator& evaluator,
                         const std::vector<bool>& sequence_outputs, const core::ModelInputs& inputs,
                         const VerifyOptions& options, const std::string& onnx_path,
                         const std::vector<StatePair>& state, std::vector<EvalValue>& actual) {
  std::vector<EvalValue> expected;
  // The graph as written, without the executor's optimizations: from the second call on, libtorch
  // 2.6's profiling executor specializes and fuses it, which took minutes for a small ViT (and
  // would check libtorch's fused kernels rather than the model).
  const torch::jit::GraphOptimizerEnabledGuard as_written(false);
  flatten_outputs(module.forward(arguments(inputs.tensors)), sequence_outputs, expected);
  for (const auto& pair : state)  // the state outputs follow the model's own
    if (pair.output == expected.size()) expected.emplace_back(core::attribute_tensor(module, pair.path).clone());
  const auto feeds = core::as_onnx_inputs(inputs.tensors);
  actual = evaluator.run(std::vector<EvalValue>(feeds.begin(), feeds.end()));
  if (actual.size() < expected.size())
    throw ExportError("verify: the model returns " + std::to_string(expected.size()) + " tensors, '" + onnx_path +
                          "' has " + std::to_string(actual.size()) + " outputs",
                      ErrorContext::with_hint("verify the ONNX file exported from this model"));
  SampleCheck sample;
  sample.inputs = inputs.described;
  sample.ok = true;
  for (size_t i = 0; i < actual.size(); ++i) {
    const std::string& name = evaluator.output_names()[i];
    if (i >= expected.size()) {
      sample.unchecked.push_back(name);
      continue;
    }
    sample.outputs.push_back(compare(name, actual[i], expected[i], options));
    sample.ok = sample.ok && sample.outputs.back().ok;
  }
  if (!sample.ok && state.empty())
    judge_by_reference(module, arguments, sequence_outputs, inputs, actual, expected, options, sample);
  return sample;
}

// The one-line verdict; returns the input set of the first mismatch (0 when all agree).
size_t decide(VerifyResult& result, const VerifyOptions& options) {
  result.ok = true;
  for (size_t k = 0; k < result.samples.size(); ++k)
    for (const auto& out : result.samples[k].outputs)
      if (!out.ok) {
        result.ok = false;
        result.verdict =
            "MISMATCH: output '" + out.name + "' of input set " + std::to_string(k / options.steps + 1) +
            (options.steps > 1 ? " step " + std::to_string(k % options.steps + 1) : "") + ": " +
            (out.problem.empty() ? "max abs error " + core::error_figure(out.max_abs_error) + ", max rel error " +
                                       core::error_figure(out.max_rel_error) + " " + tolerances(options)
                                 : out.problem);
        return k;
      }
  double worst = 0;
  for (const auto& s : result.samples)
    for (const auto& out : s.outputs) worst = std::max(worst, out.max_abs_error);
  const std::string sets = options.steps > 1 ? std::to_string(result.samples.size() / options.steps) +
                                                  " input sets x " + std::to_string(options.steps) + " steps, "
                                            : std::to_string(result.samples.size()) + " input sets, ";
  result.verdict = "ok: " + sets +
                   std::to_string(result.samples.empty() ? 0 : result.samples[0].outputs.size()) +
                   " outputs each, max abs error " + core::error_figure(worst) + " " + tolerances(options);
  return 0;
}

}  // namespace

VerifyResult verify_onnx_file(const std::string& model_path, const std::string& onnx_path, const VerifyOptions& given,
                              Exporter* exporter) {
  VerifyOptions options = given;
  if (options.samples < 1)
    throw ConfigError("--samples " + std::to_string(options.samples) + ": at least one input set is needed",
                      ErrorContext::with_hint("give --samples 1 or more"));
  if (options.steps < 1)
    throw ConfigError("--steps " + std::to_string(options.steps) + ": at least one call is needed",
                      ErrorContext::with_hint("give --steps 1 or more"));
  if (!(options.rtol >= 0) || !(options.atol >= 0))
    throw ConfigError("--rtol/--atol must be non-negative numbers",
                      ErrorContext::with_hint("e.g. --rtol 1e-3 --atol 1e-5"));
  const core::DefaultDtypeScope default_dtype(options.export_options.default_dtype);
  const core::IntraOpThreads threads(options.export_options.threads);
  const onnx::ModelProto model = core::read_model_file(onnx_path);
  VerifyResult result;
  // What the export's command line said and the file recorded (numbers folded into the graph, the
  // method exported), unless given again.
  result.recorded_settings = core::take_recorded_export_settings(model, options.inputs, options.export_options);
  std::unique_ptr<core::ProgramArchive> program;
  if (core::ProgramArchive::holds_program(model_path)) {
    program = std::make_unique<core::ProgramArchive>(model_path);
    options.export_options = core::options_for_program(*program, options.export_options);
    // Inputs not given are drawn at the sizes of the program's example inputs.
    if (options.inputs.empty()) options.inputs = options.export_options.inputs;
  }
  torch::jit::Module module =
      program ? core::program_module(*program)
              : core::select_export_target(core::load_torchscript_file(model_path), options.export_options, model_path);
  core::define_forward_from_overload(module);
  module.eval();
  std::unique_ptr<Exporter> builtin;
  if (!exporter) exporter = (builtin = std::make_unique<Exporter>()).get();
  try {
    const core::eval::ModelEvaluator evaluator(model, core::directory_of(onnx_path),
                                               core::eval::pack_kernels(exporter->registry()));
    const std::vector<StatePair> state = state_pairs(module, evaluator);
    // --input may give a state input the shape its zeros take (one the first call makes 2-d with a
    // dynamic batch); the others give the method's arguments.
    std::vector<InputSpec> argument_specs, state_specs;
    for (const auto& spec : options.inputs)
      (std::any_of(state.begin(), state.end(),
                   [&](const StatePair& pair) { return evaluator.input_names()[pair.input] == spec.name; })
           ? state_specs
           : argument_specs)
          .push_back(spec);
    const MethodArguments arguments(argument_specs, module, evaluator.input_names(), options);
    if (options.steps > 1 && state.empty())
      throw ConfigError("verify --steps " + std::to_string(options.steps) + ": '" + onnx_path +
                            "' has no state inputs (an input NAME and an output NAME_out for a module tensor NAME)",
                        ErrorContext::with_hint("export the model with --state-io, or verify without --steps"));
    if (!arguments.whole()) check_evaluable(evaluator, module, model_path, onnx_path, state.size());
    torch::NoGradGuard no_grad;
    std::vector<core::ModelInputs> input_sets{
        core::inputs_for_model(model.graph(), evaluator.input_names(), with_state_specs(arguments.graph_specs(), state_specs, model,
                                                                                         evaluator, module, state),
                               options.seed)};
    for (int k = 1; k < options.samples; ++k)
      input_sets.push_back(
          core::redrawn_inputs(model.graph(), evaluator.input_names(), input_sets[0], options.seed + k, k));
    std::vector<bool> sequence_outputs;
    for (const auto& out : model.graph().output()) sequence_outputs.push_back(out.type().has_sequence_type());
    // Each input set starts from the state the model file holds, as the export did.
    std::vector<at::Tensor> loaded_state;
    for (const auto& pair : state) loaded_state.push_back(core::attribute_tensor(module, pair.path).clone());
    std::vector<core::ModelInputs> first_steps;  // per input set, with the model file's state
    for (const auto& inputs : input_sets) {
      core::ModelInputs step = inputs;
      for (size_t k = 0; k < state.size(); ++k) {
        core::set_attribute_tensor(module, state[k].path, loaded_state[k].clone());
        at::Tensor& fed = step.tensors[state[k].input];
        // A state the first call gives its lasting dtype or rank (an empty context made 2-d) is an
        // input of that type, which the export proved starts from zeros (state_start.h).
        const bool file_type = core::fits_declared(graph_input(model.graph(), evaluator.input_names()[state[k].input]),
                                                   core::as_onnx_input(loaded_state[k]));
        fed = file_type ? loaded_state[k].clone() : at::zeros_like(fed);
        step.described[state[k].input] =
            state[k].path + ": " +
            (file_type ? core::tensor_type_text(loaded_state[k]) + " from the model file"
                       : "zeros " + core::tensor_type_text(fed) + " (the model file holds " +
                             core::tensor_type_text(loaded_state[k]) + ")");
      }
      first_steps.push_back(step);
      for (int s = 0; s < options.steps; ++s) {
        std::vector<EvalValue> actual;
        try {
          result.samples.push_back(check_sample(module, arguments, evaluator, sequence_outputs, step, options,
                                                onnx_path, state, actual));
        } catch (const Error&) {
          throw;
        } catch (const std::exception& e) {  // libtorch's: drawn inputs can be ones the model refuses (an index out of range)
          std::string given;
          for (const auto& d : step.described) given += (given.empty() ? "" : "; ") + d;
          throw ModelError("verify: running '" + model_path + "' on input set " +
                               std::to_string(result.samples.size() + 1) + " (" + given +
                               ") failed: " + core::libtorch_error_line(e.what()),
                           ErrorContext::with_hint(
                               "give the model inputs it takes (--input NAME=FILE.npy) or check only those (--samples 1)"));
        }
        if (options.steps > 1)
          result.samples.back().inputs.push_back("step " + std::to_string(s + 1) + " of " +
                                                 std::to_string(options.steps));
        for (const auto& pair : state) {
          step.tensors[pair.input] = actual.at(pair.output).tensor;
          step.described[pair.input] = pair.path + ": " + core::tensor_type_text(step.tensors[pair.input]) +
                                       " from step " + std::to_string(s + 1);
        }
      }
    }
    for (size_t k = 0; k < state.size(); ++k) core::set_attribute_tensor(module, state[k].path, loaded_state[k]);
    const size_t failing = decide(result, options);
    if (options.per_node || !result.ok) {
      // A later step's state is no state the export saw: nodes are compared on the first step's.
      compare_nodes(model_path, program.get(), arguments, onnx_path, model, evaluator, first_steps[failing / options.steps], options,
                    exporter, result);
      if (!result.ok && result.first_diverging >= 0)
        result.verdict += "; first diverging node: " + node_text(result.nodes[result.first_diverging]);
    }
  } catch (const core::eval::EvalError& e) {
    throw ExportError(std::string("verify: running '") + onnx_path + "': " + e.what(),
                      ErrorContext::with_hint("onnxport cannot evaluate this; compare in ONNX Runtime"));
  }
  return result;
}

std::string verify_report_json(const std::string& model_path, const std::string& onnx_path,
                               const VerifyResult& result) {
  using nlohmann::json;
  json samples = json::array();
  for (const auto& s : result.samples) {
    json outputs = json::array();
    for (const auto& o : s.outputs) {
      outputs.push_back({{"name", o.name},
                         {"type", o.type},
                         {"ok", o.ok},
                         {"max_abs_error", o.max_abs_error},
                         {"max_rel_error", o.max_rel_error},
                         {"problem", o.problem}});
      if (o.pytorch_off_by) {
        outputs.back()["pytorch_float32_off_by"] = *o.pytorch_off_by;
        outputs.back()["judged_by"] = o.judged_by;
      }
    }
    samples.push_back({{"inputs", s.inputs}, {"ok", s.ok}, {"outputs", outputs}, {"not_compared", s.unchecked}});
  }
  json nodes = json::array();
  for (const auto& n : result.nodes)
    nodes.push_back({{"node", n.node},
                     {"op_type", n.op_type},
                     {"output", n.output},
                     {"type", n.type},
                     {"torch_op", n.torch_op},
                     {"pack", n.pack},
                     {"module_path", n.module_path},
                     {"source", n.source},
                     {"ok", n.ok},
                     {"max_abs_error", n.max_abs_error},
                     {"max_rel_error", n.max_rel_error},
                     {"problem", n.problem},
                     {"uncompared_sources", n.uncompared_sources}});
  json report{{"model", model_path},
              {"onnx", onnx_path},
              {"ok", result.ok},
              {"verdict", result.verdict},
              {"samples", samples},
              {"nodes", nodes},
              {"per_node_note", result.per_node_note}};
  report["first_diverging"] = result.first_diverging >= 0 ? json(result.first_diverging) : json(nullptr);
  return report.dump(2) + "\n";
}

void write_verify_report(const std::string& path, const std::string& model_path, const std::string& onnx_path,
                         const VerifyResult& result) {
  core::OutputFile file(path);
  file.stream() << verify_report_json(model_path, onnx_path, result);
  file.finish();
  core::OutputFile::commit_all({&file});
}

}  // namespace onnxport
