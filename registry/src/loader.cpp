#include "onnxport/registry/loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <map>
#include <optional>
#include <utility>

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <boost/filesystem.hpp>

#include "onnxport/errors.h"
#include "onnxport/op_pack.h"

namespace onnxport {

namespace fs = boost::filesystem;

const char* PackStatus::state_name() const {
  switch (state) {
    case State::Loaded: return "loaded";
    case State::Failed: return "failed";
  }
  return "unknown";
}

namespace {

// The only place that talks to Boost.DLL: opens a library and finds the two entry points.
class PackLibrary {
 public:
  // Opens file (an absolute canonical path) or returns the loader's reason.
  static std::optional<PackLibrary> open(const std::string& file, std::string& error) {
    // RTLD_NODELETE: symbolics copied into the registry (std::function managers, lambdas)
    // point into the library, and the registry may be destroyed after this loader.
    const auto mode = static_cast<boost::dll::load_mode::type>(RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    boost::system::error_code ec;
    boost::dll::shared_library lib(file, mode, ec);
    if (ec || !lib.is_loaded()) {
      const char* reason = ::dlerror();  // Boost.DLL keeps only a generic error code
      error = reason ? reason : ec.message();
      if (error.rfind(file + ": ", 0) == 0) error.erase(0, file.size() + 2);  // named already
      return std::nullopt;
    }
    return PackLibrary(std::move(lib));
  }

  bool has_entry_points() const { return lib_.has(kPackInfoSymbol) && lib_.has(kPackRegisterSymbol); }
  const PackInfo* info() const { return lib_.get<const PackInfo*()>(kPackInfoSymbol)(); }
  PackRegisterFn register_fn() const { return &lib_.get<void(Registrar&)>(kPackRegisterSymbol); }

 private:
  explicit PackLibrary(boost::dll::shared_library lib) : lib_(std::move(lib)) {}
  boost::dll::shared_library lib_;
};

std::optional<std::string> canonical_file(const std::string& file, std::string& error) {
  boost::system::error_code ec;
  fs::path p = fs::canonical(fs::absolute(file), ec);
  if (ec) {
    error = ec.message();
    return std::nullopt;
  }
  return p.string();
}

std::string str_or_empty(const char* s) { return s ? s : ""; }

// The Python bridge, opened on the first .py pack and kept for the process (its interpreter
// cannot be unloaded). nullptr and `why` when this machine cannot run Python packs.
PythonPackLoadFn python_bridge(std::string& why) {
  static std::string error;
  static const PythonPackLoadFn load = []() -> PythonPackLoadFn {
    const fs::path lib = fs::weakly_canonical(boost::dll::this_line_location()).parent_path() / kPythonBridgeLibrary;
    const auto mode = static_cast<boost::dll::load_mode::type>(RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    boost::system::error_code ec;
    static boost::dll::shared_library bridge;
    bridge.load(lib, mode, ec);
    if (ec || !bridge.is_loaded()) {
      const char* reason = ::dlerror();
      error = "the Python bridge " + lib.string() + " cannot be loaded (" + (reason ? reason : ec.message()) +
              ") — install python3 and python3-torch, or remove the .py file from the plugin directories";
      return nullptr;
    }
    if (!bridge.has(kPythonPackLoadSymbol)) {
      error = "the Python bridge " + lib.string() + " does not export " + kPythonPackLoadSymbol;
      return nullptr;
    }
    return &bridge.get<bool(const std::string&, PythonPackContents&, std::string&)>(kPythonPackLoadSymbol);
  }();
  why = error;
  return load;
}

}  // namespace

struct PackLoader::Impl {
  std::vector<PackLibrary> libraries;             // loaded packs, kept open while the loader lives
  std::map<std::string, size_t> status_by_file;   // canonical file -> index in packs_
  std::map<std::string, std::string> file_by_id;  // id of a loaded pack -> its file
};

PackLoader::PackLoader(Registry& registry) : impl_(std::make_unique<Impl>()), registry_(registry) {}

PackLoader::~PackLoader() = default;

const PackStatus& PackLoader::load_file(const std::string& file) {
  PackStatus st;
  st.file = file;
  auto failed = [&](const std::string& why) -> const PackStatus& { return record_failure(std::move(st), why); };

  std::string error;
  std::optional<std::string> canonical = canonical_file(file, error);
  if (!canonical) return failed("cannot open op pack: " + error);
  st.file = *canonical;
  if (auto seen = impl_->status_by_file.find(st.file); seen != impl_->status_by_file.end()) {
    return packs_[seen->second];  // the same file loads once
  }
  impl_->status_by_file.emplace(st.file, packs_.size());
  if (fs::path(st.file).extension() == ".py") return load_python_file(std::move(st));

  std::optional<PackLibrary> lib = PackLibrary::open(st.file, error);
  if (!lib) return failed("not a loadable shared library: " + error);
  if (!lib->has_entry_points()) {
    return failed(std::string("not an onnxport op pack: it does not export ") + kPackInfoSymbol + " and " +
                  kPackRegisterSymbol + " (define the pack with ONNXPORT_OP_PACK)");
  }
  const PackInfo* info = lib->info();
  if (!info) return failed(std::string(kPackInfoSymbol) + "() returned null");
  // Only api_version is read before it is checked: the rest of the layout depends on it.
  st.api_version = info->api_version;
  if (st.api_version != host_sdk_api_version()) {
    return failed("SDK API version " + std::to_string(st.api_version) + ", this onnxport expects " +
                  std::to_string(host_sdk_api_version()) + " — rebuild the pack against this SDK");
  }
  st.abi_tag = str_or_empty(info->abi_tag);
  st.id = str_or_empty(info->id);
  st.version = str_or_empty(info->version);
  if (st.abi_tag != host_abi_tag()) {
    return failed("ABI tag \"" + st.abi_tag + "\", this onnxport expects \"" + host_abi_tag() +
                  "\" — rebuild the pack with the same compiler and standard library settings");
  }
  if (st.id.empty()) return failed("the pack declares an empty id");
  if (auto other = impl_->file_by_id.find(st.id); other != impl_->file_by_id.end()) {
    return failed("op pack id \"" + st.id + "\" is already loaded from " + other->second +
                  " — remove one of the two files from the plugin directories");
  }

  try {
    Registrar registrar;
    lib->register_fn()(registrar);
    registry_.add_pack(PackRef{st.id, st.file}, registrar);
    st.domains = registrar.domains();
    st.op_count = registrar.registrations().size();
    for (const CustomOpSchema& s : registrar.schemas()) st.schemas.push_back(s.key());
    for (const EvaluatorDecl& e : registrar.evaluators())
      st.evaluators.push_back(Registry::evaluator_key(e.domain, e.op_type));
  } catch (const std::exception& e) {
    return failed(std::string("registering the pack failed: ") + e.what());
  } catch (...) {
    return failed("registering the pack failed: it threw a non-standard exception");
  }

  st.state = PackStatus::State::Loaded;
  impl_->file_by_id.emplace(st.id, st.file);
  impl_->libraries.push_back(std::move(*lib));
  packs_.push_back(std::move(st));
  return packs_.back();
}

const PackStatus& PackLoader::record_failure(PackStatus st, const std::string& why) {
  st.state = PackStatus::State::Failed;
  st.error = st.file + ": " + why;
  packs_.push_back(std::move(st));
  return packs_.back();
}

const PackStatus& PackLoader::load_python_file(PackStatus st) {
  auto failed = [&](const std::string& why) -> const PackStatus& { return record_failure(std::move(st), why); };
  st.id = "python:" + fs::path(st.file).stem().string();
  st.version = "python";
  std::string error;
  PythonPackLoadFn load = python_bridge(error);
  if (!load) return failed(error);
  if (auto other = impl_->file_by_id.find(st.id); other != impl_->file_by_id.end())
    return failed("op pack id \"" + st.id + "\" is already loaded from " + other->second +
                  " — rename one of the two files");
  PythonPackContents contents;
  contents.id = st.id;
  try {
    if (!load(st.file, contents, error)) return failed(error);
    registry_.add_python_pack(PackRef{st.id, st.file}, contents);
  } catch (const std::exception& e) {
    return failed(std::string("registering the Python pack failed: ") + e.what());
  }
  st.state = PackStatus::State::Loaded;
  st.op_count = contents.symbolics.size();
  impl_->file_by_id.emplace(st.id, st.file);
  packs_.push_back(std::move(st));
  return packs_.back();
}

void PackLoader::load_dir(const std::string& dir) {
  boost::system::error_code ec;
  fs::path path = fs::absolute(dir);
  if (!fs::is_directory(path, ec)) {
    PackStatus st;
    st.file = path.string();
    st.error = st.file + ": op pack directory does not exist or is not a directory";
    packs_.push_back(std::move(st));
    return;
  }
  std::vector<fs::path> files;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if ((p.extension() == ".so" || p.extension() == ".py") && fs::is_regular_file(p, ec)) files.push_back(p);
  }
  if (ec) {
    PackStatus st;
    st.file = path.string();
    st.error = st.file + ": cannot list op pack directory: " + ec.message();
    packs_.push_back(std::move(st));
  }
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  for (const fs::path& f : files) load_file(f.string());
}

std::string builtin_pack_dir() {
  // The library's path as the dynamic loader saw it, e.g. ".../bin/../lib/libonnxport_registry.so.1".
  const fs::path lib = fs::weakly_canonical(boost::dll::this_line_location());
  return (lib.parent_path() / "onnxport" / "packs").string();
}

std::vector<std::string> env_pack_dirs() {
  std::vector<std::string> dirs;
  const char* env = std::getenv("ONNXPORT_PLUGIN_PATH");
  if (!env) return dirs;
  std::string value(env);
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(':', start);
    if (end == std::string::npos) end = value.size();
    if (end > start) dirs.push_back(fs::absolute(value.substr(start, end - start)).string());
    start = end + 1;
  }
  return dirs;
}

}  // namespace onnxport
