#pragma once
// Finds and loads op packs (shared libraries) with Boost.DLL and registers them.
#include <memory>
#include <string>
#include <vector>

#include "onnxport/registry/registry.h"

namespace onnxport {

struct PackStatus {
  enum class State { Loaded, Failed };
  std::string file;  // absolute path
  State state = State::Failed;
  std::string id, version;  // from the pack's info block, when it could be read
  int api_version = 0;
  std::string abi_tag;
  std::vector<DomainDecl> domains;
  size_t op_count = 0;
  std::vector<std::string> schemas;  // keys of the ONNX schemas it declares ("com.vendor::FancyOp (since version 2)")
  std::vector<std::string> evaluators;  // the custom-domain ops it can compute ("com.vendor::FancyOp")
  std::string error;                 // why it failed: names the file, and got/expected where relevant
  const char* state_name() const;    // "loaded", "failed"
};

class PackLoader {
 public:
  explicit PackLoader(Registry& registry);
  ~PackLoader();
  PackLoader(const PackLoader&) = delete;
  PackLoader& operator=(const PackLoader&) = delete;

  // Every *.so (C++ op pack) and *.py (Python op pack: torch.onnx symbolics, run by the Python
  // bridge, python_packs.h) directly in dir, in name order. A missing dir is reported as a failed entry.
  void load_dir(const std::string& dir);
  // One file. Never throws for a bad pack: the failure is recorded in packs() and skipped.
  // The same file (by canonical path) loads once; a second file with an id already loaded is
  // recorded as Failed with an error naming both files.
  const PackStatus& load_file(const std::string& file);

  const std::vector<PackStatus>& packs() const { return packs_; }

 private:
  const PackStatus& load_python_file(PackStatus status);
  // Records `status` as failed for `why` ("FILE: why") and returns it.
  const PackStatus& record_failure(PackStatus status, const std::string& why);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Registry& registry_;
  std::vector<PackStatus> packs_;
};

// Directory of the built-in packs: <dir of libonnxport_registry.so>/onnxport/packs.
std::string builtin_pack_dir();
// Directories from ONNXPORT_PLUGIN_PATH (colon-separated), made absolute.
std::vector<std::string> env_pack_dirs();

}  // namespace onnxport
