#include "onnxport/export.h"

#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/lower_tuples.h>

#include <cstring>

#include <dlfcn.h>

#include <chrono>

#include "constant_folding.h"
#include "dynamic_check.h"
#include "convert.h"
#include "custom_schemas.h"
#include "fallback.h"
#include "graph_builder.h"
#include "npy.h"
#include "onnx_io.h"
#include "onnxport/errors.h"
#include "onnxport/registry/loader.h"
#include "torch_graph.h"

namespace onnxport {

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<std::string> graph_input_names(const ExportOptions& o, size_t count) {
  std::vector<std::string> names;
  for (size_t i = 0; i < count; ++i) {
    if (i < o.input_names.size()) names.push_back(o.input_names[i]);
    else if (i < o.inputs.size() && !o.inputs[i].name.empty()) names.push_back(o.inputs[i].name);
    else names.push_back("input_" + std::to_string(i));
  }
  return names;
}

ExportReport convert_and_write(const core::PreparedGraph& prepared, const Registry& registry,
                               const std::string& model_file, const std::string& output_path,
                               const ExportOptions& options, double seconds_prepare) {
  ExportReport report;
  report.output_path = output_path;
  report.seconds_prepare = seconds_prepare;
  auto t0 = std::chrono::steady_clock::now();

  core::OnnxModel model;
  core::BuilderOptions bo;
  bo.opset = options.opset_version;
  bo.training = options.training == TrainingMode::Train;
  bo.strict = options.strict;
  for (const auto& [domain, entry] : registry.domains()) bo.custom_domains[domain] = entry.version;
  if (options.operator_export_type == OperatorExportType::OnnxAten ||
      options.operator_export_type == OperatorExportType::OnnxAtenFallback)
    bo.custom_domains[core::kAtenDomain] = 1;
  for (const auto& [domain, version] : options.custom_opsets) bo.custom_domains[domain] = version;
  core::register_custom_schemas(registry);  // packs' schemas for their custom-domain ops
  core::GraphBuilder builder(model, bo);

  core::ConvertContext ctx{registry, options, model_file,
                           graph_input_names(options, prepared.graph->inputs().size())};
  if (options.operator_export_type == OperatorExportType::OnnxFallthrough)  // a domain per torch namespace
    for (const auto* n : prepared.graph->nodes()) {
      const std::string kind = n->kind().toQualString();
      if (!bo.custom_domains.count(kind.substr(0, kind.find("::"))) &&
          core::falls_back(options, kind, registry.lookup(kind, options.opset_version) != nullptr))
        builder.declare_domain(kind.substr(0, kind.find("::")), 1);
    }
  const core::ConvertStats stats = core::convert_graph(prepared, ctx, builder, model);
  report.fallback_ops = stats.fallback_ops;
  report.core_ops = stats.core_ops;
  report.mode = prepared.scripted ? "script" : "trace";
  report.mode_reason = prepared.mode_reason;
  report.warnings = prepared.warnings;
  report.dynamic_checks = core::check_dynamic_axes(prepared, ctx.input_names, stats.value_names, model, options, model_file);
  core::eliminate_dead_code(model);
  if (options.do_constant_folding) {
    core::fold_constants(model, options.opset_version, options.export_params);
    core::eliminate_dead_code(model);
  }
  if (options.training == TrainingMode::Eval && options.export_params && core::fuse_conv_batchnorm(model) > 0)
    core::eliminate_dead_code(model);
  report.seconds_convert = seconds_since(t0);

  core::ModelMeta meta;
  meta.producer_version = ONNXPORT_VERSION;
  meta.export_params = options.export_params;
  meta.keep_initializers_as_inputs = options.keep_initializers_as_inputs;
  meta.provenance_doc_strings = options.provenance;
  t0 = std::chrono::steady_clock::now();
  core::write_model(model, meta, output_path);
  report.seconds_write = seconds_since(t0);

  report.node_count = model.nodes.size();
  report.initializer_count = model.initializers.size();
  for (const auto& init : model.initializers) report.initializer_bytes += init.tensor.nbytes();
  for (const auto& n : model.nodes) ++report.op_histogram[n.proto.op_type()];
  if (options.verbose) report.graph_text = core::print_graph(core::build_model_proto(model, meta, true), &model);

  return report;
}

// The checker reads the whole file back: run it once the model's own tensors are released.
void check_written(ExportReport& report, const ExportOptions& options, const std::string& model_file) {
  if (!options.check) return;
  auto t0 = std::chrono::steady_clock::now();
  try {
    core::check_model_file(report.output_path);
  } catch (Error& e) {
    std::remove(report.output_path.c_str());
    e.add_context(ErrorContext::for_file(model_file, "this is an onnxport bug; --no-check writes the file anyway"));
    throw;
  }
  report.seconds_check = seconds_since(t0);
}
}  // namespace

void load_op_library(const std::string& path) {
  // RTLD_LAZY: Python extension modules (torchvision's _C) carry Python symbols that op
  // registration never calls. RTLD_GLOBAL: kernels may be shared between libraries.
  if (!::dlopen(path.c_str(), RTLD_LAZY | RTLD_GLOBAL)) {
    const char* why = ::dlerror();
    throw ModelError("cannot load op library '" + path + "': " + (why ? why : "unknown error"),
                     ErrorContext::with_hint("pass the path of a shared library that registers torch ops (TORCH_LIBRARY)"));
  }
}

std::vector<torch::jit::IValue> make_example_inputs(const std::vector<InputSpec>& specs, uint64_t seed) {
  std::vector<torch::jit::IValue> out;
  at::Generator gen = at::detail::createCPUGenerator(seed);
  for (const auto& spec : specs) {
    if (!spec.npy_file.empty()) {
      Tensor t = core::read_npy(spec.npy_file);
      at::Tensor a = at::empty(t.shape(), at::TensorOptions().dtype(core::scalar_type_of(t.dtype())));
      std::memcpy(a.data_ptr(), t.data(), t.nbytes());
      out.emplace_back(a);
      continue;
    }
    auto opts = at::TensorOptions().dtype(core::scalar_type_of(spec.dtype));
    if (is_floating(spec.dtype)) {
      out.emplace_back(at::randn(spec.shape, gen, opts));
    } else if (spec.dtype == DType::Bool) {
      out.emplace_back(at::randint(0, 2, spec.shape, gen, at::TensorOptions().dtype(at::kLong)).to(at::kBool));
    } else {
      // Small non-negative integers keep index-like inputs (embeddings, gathers) valid.
      out.emplace_back(at::randint(0, 8, spec.shape, gen, opts));
    }
  }
  return out;
}

Exporter::Exporter(const std::vector<std::string>& plugin_dirs, bool load_builtin)
    : registry_(std::make_unique<Registry>()), loader_(std::make_unique<PackLoader>(*registry_)) {
  if (load_builtin) loader_->load_dir(builtin_pack_dir());
  for (const auto& dir : env_pack_dirs()) loader_->load_dir(dir);
  for (const auto& dir : plugin_dirs) loader_->load_dir(dir);
}

Exporter::~Exporter() = default;
Registry& Exporter::registry() { return *registry_; }
const PackLoader& Exporter::loader() const { return *loader_; }

ExportReport Exporter::export_file(const std::string& model_path, const std::string& output_path,
                                   const ExportOptions& options, std::vector<torch::jit::IValue> example_inputs) {
  options.validate();
  ExportReport report;
  {
    auto t0 = std::chrono::steady_clock::now();
    torch::jit::Module module;
    try {
      module = torch::jit::load(model_path);
    } catch (const c10::Error& e) {
      std::string what = e.what_without_backtrace();
      throw ModelError("cannot load TorchScript model '" + model_path + "': " + what.substr(0, what.find('\n')),
                       ErrorContext::for_file(model_path, "save it with torch.jit.trace(...).save() or torch.jit.script(...).save()"));
    } catch (const std::exception& e) {
      // The TorchScript compiler reports unknown ops ("Unknown builtin op: vendor::fancy").
      std::string what = e.what();
      const auto start = what.find_first_not_of("\n ");
      what = what.substr(start == std::string::npos ? 0 : start);
      throw ModelError("cannot load TorchScript model '" + model_path + "': " + what.substr(0, what.find('\n')),
                       ErrorContext::for_file(model_path, "if the model uses custom torch ops, load the library that registers them with --load-op-library"));
    }
    if (example_inputs.empty()) example_inputs = make_example_inputs(options.inputs, options.seed);
    if (example_inputs.empty())
      throw ConfigError("no example inputs", ErrorContext::for_file(model_path, "give --input NAME:1x3x224x224:float32 (or NAME=FILE.npy) for each forward argument"));
    try {
      core::PreparedGraph prepared = core::prepare_module(module, /*owned=*/true, example_inputs, options);
      module = torch::jit::Module();  // the frozen graph holds what the export needs
      report = convert_and_write(prepared, *registry_, model_path, output_path, options, seconds_since(t0));
    } catch (Error& e) {
      e.add_context(ErrorContext::for_file(model_path));
      throw;
    }
  }
  check_written(report, options, model_path);
  return report;
}

ExportReport Exporter::export_module(const torch::jit::Module& module, std::vector<torch::jit::IValue> example_inputs,
                                     const std::string& output_path, const ExportOptions& options) {
  options.validate();
  if (example_inputs.empty())
    throw ConfigError("no example inputs", ErrorContext::with_hint("give --input NAME:1x3x224x224:float32 (or NAME=FILE.npy) for each forward argument"));
  auto t0 = std::chrono::steady_clock::now();
  ExportReport report;
  {
    core::PreparedGraph prepared = core::prepare_module(module, /*owned=*/false, example_inputs, options);
    report = convert_and_write(prepared, *registry_, "", output_path, options, seconds_since(t0));
  }
  check_written(report, options, "");
  return report;
}

ExportReport Exporter::export_function(const std::function<torch::jit::IValue(std::vector<torch::jit::IValue>)>& fn,
                                       std::vector<torch::jit::IValue> example_inputs, const std::string& output_path,
                                       const ExportOptions& options,
                                       const std::map<std::string, at::Tensor>& named_parameters) {
  options.validate();
  auto t0 = std::chrono::steady_clock::now();
  // The tracer records parameters as constants, which it refuses for tensors that require
  // grad: switch that off for the duration of the trace and restore it afterwards.
  std::vector<at::Tensor> grad_restore;
  for (const auto& [name, t] : named_parameters)
    if (t.requires_grad()) {
      grad_restore.push_back(t);
      const_cast<at::Tensor&>(t).requires_grad_(false);
    }
  auto restore = [&grad_restore] {
    for (auto& t : grad_restore) t.requires_grad_(true);
  };
  std::tuple<std::shared_ptr<torch::jit::tracer::TracingState>, torch::jit::Stack> traced;
  try {
    traced = torch::jit::tracer::trace(
        example_inputs,
        [&fn](torch::jit::Stack in) -> torch::jit::Stack {
          return {fn(std::vector<torch::jit::IValue>(in.begin(), in.end()))};
        },
        [](const at::Tensor&) { return std::string(); }, /*strict=*/false, /*force_outplace=*/false);
  } catch (const std::exception& e) {
    restore();
    std::string what = e.what();
    throw ModelError("tracing the function failed: " + what.substr(0, what.find('\n')),
                     ErrorContext::with_hint("pass every parameter the function reads in named_parameters"));
  }
  restore();
  core::PreparedGraph prepared;
  prepared.graph = std::get<0>(traced)->graph;
  for (const auto& [name, t] : named_parameters) prepared.tensor_names.emplace(t.data_ptr(), name);
  torch::jit::Inline(*prepared.graph);
  torch::jit::LowerAllTuples(prepared.graph);
  torch::jit::EliminateDeadCode(prepared.graph);
  for (const auto& iv : example_inputs)
    if (iv.isTensor()) prepared.example_tensors.push_back(iv.toTensor());
  core::record_types(*prepared.graph, example_inputs);
  ExportReport report = convert_and_write(prepared, *registry_, "", output_path, options, seconds_since(t0));
  check_written(report, options, "");
  return report;
}

}  // namespace onnxport
