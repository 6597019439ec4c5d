#include "1_base/external_data.h"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <functional>

#include "onnxport/errors.h"

namespace onnxport::core {

namespace fs = std::filesystem;

namespace {

const char* const kKeepInside =
    "an ONNX file may only name data files inside its own directory: put the data file beside the model and "
    "name it by a relative path";

[[noreturn]] void refuse(const std::string& role, const onnx::TensorProto& t, const std::string& location,
                         const std::string& problem, const std::string& hint = kKeepInside) {
  throw ModelError(role + " '" + t.name() + "': its external data location '" + location + "' " + problem,
                   ErrorContext::with_hint(hint));
}

int64_t non_negative(const std::string& role, const onnx::TensorProto& t, const std::string& key,
                     const std::string& text) {
  int64_t value = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0)
    throw ModelError(role + " '" + t.name() + "': its external data " + key + " '" + text +
                         "' is not a non-negative integer",
                     ErrorContext::with_hint("the file is corrupt or was edited by hand; export it again"));
  return value;
}

bool inside(const fs::path& path, const fs::path& dir) {
  const fs::path rel = path.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

ExternalDataRef resolve_external_data(const onnx::TensorProto& t, const std::string& model_dir, DataFile rule,
                                      const std::string& role) {
  ExternalDataRef ref;
  std::string location;
  for (const auto& entry : t.external_data()) {
    if (entry.key() == "location") location = entry.value();
    if (entry.key() == "offset") ref.offset = non_negative(role, t, "offset", entry.value());
    if (entry.key() == "length") ref.length = non_negative(role, t, "length", entry.value());
  }
  if (location.empty())
    throw ModelError(role + " '" + t.name() + "' keeps its data outside the model but names no location",
                     ErrorContext::with_hint("the file is corrupt or was edited by hand; export it again"));
  if (location.find('\0') != std::string::npos) refuse(role, t, location, "holds a NUL character");
  const fs::path relative(location);
  if (relative.is_absolute()) refuse(role, t, location, "is an absolute path");
  for (const auto& part : relative)
    if (part == "..") refuse(role, t, location, "has a '..' component");

  const fs::path dir = model_dir.empty() ? fs::path(".") : fs::path(model_dir);
  const fs::path joined = dir / relative;
  ref.path = joined.string();
  std::error_code ec;
  const fs::path real_dir = fs::canonical(dir, ec);
  if (ec) {
    if (rule == DataFile::MayBeMissing) return ref;
    refuse(role, t, location, "cannot be resolved: the model's directory '" + dir.string() + "': " + ec.message(),
           "check that the model's directory exists and can be read");
  }
  const fs::path real = fs::weakly_canonical(joined, ec);
  if (ec) refuse(role, t, location, "cannot be resolved: " + ec.message(), "check the data file beside the model");
  if (!inside(real, real_dir))
    refuse(role, t, location, "leaves the model's directory through a symbolic link (to '" + real.string() + "')");
  struct stat st {};
  if (::stat(real.c_str(), &st) != 0) {
    if (errno == ENOENT && rule == DataFile::MayBeMissing) return ref;
    refuse(role, t, location, std::string("cannot be opened: ") + std::strerror(errno),
           "put the data file beside the model, under the name the model gives it");
  }
  if (S_ISDIR(st.st_mode)) refuse(role, t, location, "names a directory", "the location must name a data file");
  if (!S_ISREG(st.st_mode))
    refuse(role, t, location, "is not a regular file (a FIFO, socket or device)", "the location must name a data file");
  return ref;
}

void refuse_external_data_outside(const onnx::ModelProto& model, const std::string& model_dir, DataFile rule) {
  const auto check = [&](const onnx::TensorProto& t, const std::string& role) {
    if (t.data_location() == onnx::TensorProto::EXTERNAL) resolve_external_data(t, model_dir, rule, role);
  };
  std::function<void(const onnx::GraphProto&)> walk = [&](const onnx::GraphProto& graph) {
    for (const auto& t : graph.initializer()) check(t, "initializer");
    for (const auto& s : graph.sparse_initializer()) {
      check(s.values(), "sparse initializer");
      check(s.indices(), "sparse initializer");
    }
    for (const auto& node : graph.node()) {
      const std::string role = "the " + std::string(node.op_type()) + " node " +
                               (node.name().empty() ? std::string() : "'" + node.name() + "' ") + "attribute";
      for (const auto& a : node.attribute()) {
        if (a.has_t()) check(a.t(), role);
        for (const auto& t : a.tensors()) check(t, role);
        if (a.has_sparse_tensor()) check(a.sparse_tensor().values(), role);
        if (a.has_g()) walk(a.g());
        for (const auto& g : a.graphs()) walk(g);
      }
    }
  };
  walk(model.graph());
}

}  // namespace onnxport::core
