// onnxport_export_cases: exports every case of the per-operator table (tests/ops/op_cases.py,
// built by make_op_fixtures.py) at each of its opsets, in one process through the C++ API, and
// writes the list of exported models for `ort_compare.js --cases`.
//
//   onnxport_export_cases INDEX.json OUT_DIR [--only ID]... [--opset N]...
//
// Every symbolic in the registry is wrapped to record which torch ops an export converted: a
// case passes only if each op it declares went through its registered symbolic at that opset
// (so the coverage the table claims is real). Opsets the table marks as expected failures must
// fail with the declared text. One line per failed export; exit status 1 if any failed.
// Models are .pt files (Exporter::export_file, or export_function for rows marked
// via="function") or TorchScript IR text (.ir: built into a module here, export_module).
// A declared op "aten::X[complex]" is the op's entry for complex values (Registrar::add_complex):
// the export must have converted a node through that entry.
#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/irparser.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "onnxport/errors.h"
#include "onnxport/export.h"
#include "onnxport/registry/loader.h"
#include "onnxport/registry/registry.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Case {
  std::string id, mode, via;  // via: "file" (export_file) or "function" (export_function)
  fs::path manifest;
  std::vector<std::string> ops;
  std::vector<int> opsets;
  std::map<int, std::string> expect_fail;  // opset -> text the error must contain
  bool training = false;
  std::map<std::string, std::vector<int64_t>> dynamic_axes;  // graph input name -> axes
  bool dynamic_check = true;
  json tolerances = json::object();
};

struct Options {
  fs::path index, out_dir;
  std::set<std::string> only;
  std::set<int> opsets;
  size_t shard = 0, shards = 1;  // --shard K/N: the cases at positions K, K+N, K+2N... of the index
};

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "onnxport_export_cases: " << problem << "\n"
            << "usage: onnxport_export_cases INDEX.json OUT_DIR [--only ID]... [--opset N]... [--shard K/N]\n";
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--only" || arg == "--opset" || arg == "--shard") && i + 1 >= argc) usage(arg + " needs a value");
    if (arg == "--only")
      o.only.insert(argv[++i]);
    else if (arg == "--opset")
      o.opsets.insert(std::stoi(argv[++i]));
    else if (arg == "--shard") {
      const std::string text = argv[++i];
      const size_t slash = text.find('/');
      if (slash == std::string::npos) usage("--shard '" + text + "': expected K/N, e.g. 0/2");
      o.shard = std::stoul(text.substr(0, slash));
      o.shards = std::stoul(text.substr(slash + 1));
      if (o.shards == 0 || o.shard >= o.shards) usage("--shard '" + text + "': K must be below N");
    }
    else if (arg.rfind("--", 0) == 0)
      usage("unknown option " + arg);
    else
      positional.push_back(arg);
  }
  if (positional.size() != 2) usage("expected INDEX.json and OUT_DIR");
  o.index = positional[0];
  o.out_dir = positional[1];
  return o;
}

json read_json(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string() + " (run make_op_fixtures.py first)");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
}

std::vector<Case> read_cases(const fs::path& index_file) {
  const json index = read_json(index_file);
  std::vector<Case> cases;
  for (const auto& c : index.at("cases")) {
    Case x;
    x.id = c.at("id");
    x.mode = c.at("mode");
    x.via = c.value("via", "file");
    x.manifest = fs::absolute(index_file).parent_path() / c.at("manifest").get<std::string>();
    x.ops = c.at("ops").get<std::vector<std::string>>();
    x.opsets = c.at("opsets").get<std::vector<int>>();
    for (const auto& [opset, text] : c.at("expect_fail").items()) x.expect_fail[std::stoi(opset)] = text;
    x.training = c.value("training", false);
    if (c.contains("dynamic_axes"))
      x.dynamic_axes = c["dynamic_axes"].get<std::map<std::string, std::vector<int64_t>>>();
    x.dynamic_check = c.value("dynamic_check", true);
    for (const char* key : {"rtol", "atol", "ort_optimization"})
      if (c.contains(key)) x.tolerances[key] = c[key];
    cases.push_back(std::move(x));
  }
  return cases;
}

// Wraps every registered symbolic so that each call records its torch op in `converted`.
void record_conversions(onnxport::Registry& registry, std::set<std::string>& converted) {
  std::map<std::string, std::pair<onnxport::PackRef, onnxport::Registrar>> by_pack;
  for (const onnxport::RegistryEntry* e : registry.entries()) {
    auto& [pack, registrar] = by_pack[e->pack.id + "\n" + e->pack.file];
    pack = e->pack;
    registrar.add_override(e->torch_op, e->since_opset,
                           [fn = e->fn, op = e->torch_op, &converted](onnxport::Graph& g, const onnxport::TorchNode& n,
                                                                      const onnxport::Args& a) {
                             converted.insert(op);
                             return fn(g, n, a);
                           });
  }
  for (const auto& [key, entry] : by_pack) registry.add_pack(entry.first, entry.second);
}

// A module whose forward is the IR graph as written: no TorchScript frontend in between, so
// alias ops (aten::divide, aten::swapaxes, ...) survive instead of being normalized away.
torch::jit::Module module_from_ir(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  std::stringstream text;
  text << in.rdbuf();
  auto graph = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(text.str(), graph.get());
  torch::jit::Module module(c10::QualifiedName("__torch__.onnxport_ops.IrCase"));
  graph->insertInput(0, "self")->setType(module.type());
  auto* forward = module._ivalue()->compilation_unit()->create_function(
      c10::QualifiedName(*module.type()->name(), "forward"), graph);
  module.type()->addMethod(forward);
  return module;
}

std::vector<onnxport::InputSpec> input_specs(const fs::path& manifest_file, const json& manifest) {
  std::vector<onnxport::InputSpec> specs;
  for (const auto& in : manifest.at("inputs")) {
    const fs::path npy = manifest_file.parent_path() / in.at("file").get<std::string>();
    specs.push_back(onnxport::InputSpec::parse(in.at("name").get<std::string>() + "=" + npy.string()));
  }
  return specs;
}

// Debian's torchvision kernel library, named for the Python it was built for
// (_C.cpython-311-x86_64-linux-gnu.so on Debian 12, -313- on Debian 13).
std::string debian_torchvision_library() {
  const std::filesystem::path dir = "/usr/lib/python3/dist-packages/torchvision";
  if (std::filesystem::is_directory(dir))
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("_C.", 0) == 0 && name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0)
        return entry.path().string();
    }
  return (dir / "_C.so").string();  // missing: load_op_library names it in its error
}

// Hook for custom-op rows: torch::jit::load only accepts a model with torchvision:: ops once
// torchvision's kernel library is loaded (as `onnxport export --load-op-library` does). Loaded
// when some case declares such an op; ONNXPORT_TORCHVISION_LIBRARY overrides Debian's path.
void load_torchvision_if_needed(const std::vector<Case>& cases) {
  for (const Case& c : cases)
    for (const auto& op : c.ops)
      if (op.rfind("torchvision::", 0) == 0) {
        const char* path = std::getenv("ONNXPORT_TORCHVISION_LIBRARY");
        onnxport::load_op_library(path ? path : debian_torchvision_library());
        return;
      }
}

std::string one_line(std::string text) {
  for (size_t pos = 0; (pos = text.find('\n', pos)) != std::string::npos;) text.replace(pos, 1, " | ");
  return text;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

struct Tally {
  int exported = 0, expected_failures = 0, failed = 0;
  std::map<int, std::pair<int, int>> per_opset;  // opset -> (ok, failed)
  double seconds = 0;
};

class CaseExporter {
 public:
  explicit CaseExporter(const fs::path& out_dir) : out_dir_(fs::absolute(out_dir)) {
    record_conversions(exporter_.registry(), converted_);
  }

  // Prints every op pack that failed to load (its ops then fail every case): the real cause.
  int report_broken_packs() const {
    int broken = 0;
    for (const auto& pack : exporter_.loader().packs()) {
      if (pack.state == onnxport::PackStatus::State::Loaded) continue;
      std::cout << "FAIL op pack " << pack.file << " did not load: " << one_line(pack.error) << "\n";
      ++broken;
    }
    return broken;
  }

  // Exports one case at one opset; returns the ort_compare entry on success (null otherwise).
  json run(const Case& c, int opset, Tally& tally) {
    const std::string label = c.id + "@opset" + std::to_string(opset);
    const fs::path onnx = out_dir_ / (c.id + ".opset" + std::to_string(opset) + ".onnx");
    const auto expected = c.expect_fail.find(opset);
    std::string error;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      export_one(c, opset, onnx);
    } catch (const std::exception& e) {
      error = one_line(e.what());
    }
    tally.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    std::string failure;
    if (expected != c.expect_fail.end()) {
      if (error.empty())
        failure = "expected to fail with \"" + expected->second + "\" but exported";
      else if (error.find(expected->second) == std::string::npos)
        failure = "expected an error containing \"" + expected->second + "\", got: " + error;
    } else if (!error.empty()) {
      failure = error;
    } else {
      std::vector<std::string> missing;
      for (const auto& op : c.ops)
        if (!converted_.count(op)) missing.push_back(op);
      if (!missing.empty())
        failure = "declares " + join(missing) +
                  " but the export never converted it (converted: " + join({converted_.begin(), converted_.end()}) +
                  ")";
    }
    auto& [ok, bad] = tally.per_opset[opset];
    if (!failure.empty()) {
      std::cout << "FAIL " << label << ": " << failure << "\n";
      ++tally.failed;
      ++bad;
      return nullptr;
    }
    ++ok;
    if (expected != c.expect_fail.end()) {
      ++tally.expected_failures;
      return nullptr;
    }
    ++tally.exported;
    json entry = {
        {"name", label}, {"onnx", onnx.filename().string()}, {"manifest", fs::relative(c.manifest, out_dir_).string()}};
    entry.update(c.tolerances);
    return entry;
  }

 private:
  void export_one(const Case& c, int opset, const fs::path& onnx) {
    const json manifest = read_json(c.manifest);
    onnxport::ExportOptions options;
    options.opset_version = opset;
    options.inputs = input_specs(c.manifest, manifest);
    if (c.training) options.training = onnxport::TrainingMode::Train;
    options.check_dynamic_axes = c.dynamic_check;
    // Scripted rows keep their control flow; traced and IR rows export as traced.
    if (c.mode == "script") options.mode = onnxport::ExportMode::Script;
    for (const auto& [name, axes] : c.dynamic_axes)
      for (int64_t axis : axes) options.dynamic_axes[name][axis] = name + "_dim" + std::to_string(axis);
    auto inputs = onnxport::make_example_inputs(options.inputs);
    // A complex input is stored as its real pair [..., 2] (the ONNX model's input): the
    // TorchScript model takes the complex tensor.
    const json& entries = manifest.at("inputs");
    for (size_t k = 0; k < inputs.size() && k < entries.size(); ++k)
      if (entries[k].value("complex", false)) inputs[k] = at::view_as_complex(inputs[k].toTensor().contiguous());
    const fs::path model = c.manifest.parent_path() / manifest.at("model").get<std::string>();
    converted_.clear();
    fs::remove(onnx);
    onnxport::ExportReport report;
    if (c.mode == "ir") {
      report = exporter_.export_module(module_from_ir(model), inputs, onnx.string(), options);
    } else if (c.via == "function") {
      // The C++ tracer records what the module's forward runs, without freezing: ops that
      // freezing removes (aten::detach) reach the converter only this way.
      torch::jit::Module module = torch::jit::load(model.string());
      module.train(c.training);
      auto forward = [&module](std::vector<torch::jit::IValue> in) { return module.forward(std::move(in)); };
      report = exporter_.export_function(forward, inputs, onnx.string(), options);
    } else {
      report = exporter_.export_file(model.string(), onnx.string(), options, inputs);
    }
    for (const auto& [op, count] : report.core_ops) converted_.insert(op);
  }

  fs::path out_dir_;
  onnxport::Exporter exporter_;
  std::set<std::string> converted_;
};

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  const auto start = std::chrono::steady_clock::now();
  try {
    std::vector<Case> cases = read_cases(o.index);
    load_torchvision_if_needed(cases);
    fs::create_directories(o.out_dir);
    CaseExporter exporter(o.out_dir);
    const int broken_packs = exporter.report_broken_packs();
    Tally tally;
    json ort_cases = json::array();
    size_t selected = 0;
    for (size_t position = 0; position < cases.size(); ++position) {
      const Case& c = cases[position];
      if (position % o.shards != o.shard) continue;
      if (!o.only.empty() && !o.only.count(c.id)) continue;
      ++selected;
      for (int opset : c.opsets) {
        if (!o.opsets.empty() && !o.opsets.count(opset)) continue;
        json entry = exporter.run(c, opset, tally);
        if (!entry.is_null()) ort_cases.push_back(std::move(entry));
      }
    }
    if (!o.only.empty() && selected != o.only.size()) usage("--only names a case that is not in the index");
    const fs::path cases_file = o.out_dir / "ort_cases.json";
    std::ofstream(cases_file) << ort_cases.dump(1) << "\n";

    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "per opset (exported or failed as declared / failed):";
    for (const auto& [opset, counts] : tally.per_opset)
      std::cout << " " << opset << ": " << counts.first << "/" << counts.second;
    std::cout << "\n"
              << selected << " cases: " << tally.exported << " exported, " << tally.expected_failures
              << " failed as declared, " << tally.failed << " FAILED; " << total << " s (" << tally.seconds
              << " s in exports); wrote " << cases_file.string() << "\n";
    return tally.failed == 0 && broken_packs == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "onnxport_export_cases: " << one_line(e.what()) << "\n";
    return 1;
  }
}
