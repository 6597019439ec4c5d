#include "onnxport/export.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "3_export/3_convert/custom_schemas.h"
#include "onnxport/errors.h"
#include "onnxport/registry/loader.h"
#include "3_export/pipeline.h"
#include "3_export/1_load/program_graph.h"

namespace onnxport {

void load_op_library(const std::string& path) {
  // dlopen("") returns the program itself: it would "succeed" having loaded nothing.
  if (path.empty())
    throw ConfigError("--load-op-library '': the path is empty",
                      ErrorContext::with_hint("pass the path of a shared library that registers torch ops (TORCH_LIBRARY)"));
  // RTLD_LAZY: Python extension modules (torchvision's _C) carry Python symbols that op
  // registration never calls. RTLD_GLOBAL: kernels may be shared between libraries.
  if (!::dlopen(path.c_str(), RTLD_LAZY | RTLD_GLOBAL)) {
    const char* why = ::dlerror();
    throw ModelError(
        "cannot load op library '" + path + "': " + (why ? why : "unknown error"),
        ErrorContext::with_hint("pass the path of a shared library that registers torch ops (TORCH_LIBRARY)"));
  }
}

namespace {

// A pack directory the caller names must exist and be readable: a typo would otherwise leave
// the vendor's ops unregistered and the export failing far from the cause (or not at all).
void check_plugin_dir(const std::string& dir) {
  struct stat st {};
  const auto fail = [&](const std::string& what) {
    throw ConfigError("--plugin-dir '" + dir + "' " + what,
                      ErrorContext::with_hint("give a directory that holds op pack libraries (*.so)"));
  };
  if (::stat(dir.c_str(), &st) != 0) fail(std::string("cannot be used: ") + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) fail("is not a directory");
  if (::access(dir.c_str(), R_OK | X_OK) != 0) fail(std::string("cannot be read: ") + std::strerror(errno));
}

}  // namespace

Exporter::Exporter(const std::vector<std::string>& plugin_dirs, bool load_builtin)
    : registry_(std::make_unique<Registry>()), loader_(std::make_unique<PackLoader>(*registry_)) {
  for (const auto& dir : plugin_dirs) check_plugin_dir(dir);
  if (load_builtin) loader_->load_dir(builtin_pack_dir());
  for (const auto& dir : env_pack_dirs()) loader_->load_dir(dir);
  for (const auto& dir : plugin_dirs) loader_->load_dir(dir);
  core::register_custom_schemas(*registry_);  // ONNX's schema registry is process-wide: once per load
}

Exporter::~Exporter() = default;
Registry& Exporter::registry() { return *registry_; }
const PackLoader& Exporter::loader() const { return *loader_; }

ExportReport Exporter::export_file(const std::string& model_path, const std::string& output_path,
                                   const ExportOptions& options, std::vector<torch::jit::IValue> example_inputs) {
  if (core::ProgramArchive::holds_program(model_path)) {
    core::ProgramArchive program(model_path);
    const ExportOptions program_options = core::options_for_program(program, options);
    core::Pipeline pipeline(*registry_, program_options, model_path, output_path, last_report_, progress_);
    return pipeline.run([&] { return core::load_program(program, options, std::move(example_inputs)); });
  }
  core::Pipeline pipeline(*registry_, options, model_path, output_path, last_report_, progress_);
  return pipeline.run([&] { return core::load_model_file(model_path, options, std::move(example_inputs)); });
}

ExportReport Exporter::export_module(const torch::jit::Module& module, std::vector<torch::jit::IValue> example_inputs,
                                     const std::string& output_path, const ExportOptions& options) {
  core::Pipeline pipeline(*registry_, options, "", output_path, last_report_, progress_);
  return pipeline.run([&] { return core::load_module(module, std::move(example_inputs)); });
}

ExportReport Exporter::export_module(torch::jit::Module&& module, std::vector<torch::jit::IValue> example_inputs,
                                     const std::string& output_path, const ExportOptions& options) {
  core::Pipeline pipeline(*registry_, options, "", output_path, last_report_, progress_);
  return pipeline.run([&] { return core::load_module(module, std::move(example_inputs), /*handed_over=*/true); });
}

ExportReport Exporter::export_function(const std::function<torch::jit::IValue(std::vector<torch::jit::IValue>)>& fn,
                                       std::vector<torch::jit::IValue> example_inputs, const std::string& output_path,
                                       const ExportOptions& options,
                                       const std::map<std::string, at::Tensor>& named_parameters) {
  core::Pipeline pipeline(*registry_, options, "", output_path, last_report_, progress_);
  return pipeline.run([&] { return core::load_traced_function(fn, std::move(example_inputs), named_parameters); });
}

}  // namespace onnxport
