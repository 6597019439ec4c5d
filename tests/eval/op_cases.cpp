// The per-operator suite (tests/ops) run through onnxport's evaluator: every exported model in
// ort_cases.json (written by onnxport_export_cases) is evaluated in this one process on its
// manifest's inputs, and each output is compared with BOTH the eager PyTorch output and ONNX
// Runtime's output for the same model (saved by `ort_compare.js --save-actual DIR` in
// ops.onnxruntime). Comparing with ONNX Runtime too means the evaluator cannot pass by sharing a
// wrong mapping's mistake with the exporter. The rule is ort_compare.js's compareOutput: dtype and
// shape exact; floats pass iff |a - b| <= atol + rtol * |b| (the case's rtol/atol, else 1e-3 and
// 1e-5; NaN matches NaN, equal infinities match); integers and bools exactly.
//
//   onnx_op_cases CASES.json --ort-actual DIR [--only LABEL[,LABEL]] [--expected-failures FILE]
//                 [--json FILE] [-v]
//
// A case is skipped when the evaluator has no kernel for one of its nodes (ATen fallback,
// custom domains); skips are counted by the missing op. --only takes case labels
// ("celu@opset13") or case names ("celu", every opset). --expected-failures: lines
// "label  reason"; such a case may fail, and one that passes is an error (remove it from the list).
// Exit status: 0 when no case failed except expected ones, 1 otherwise, 2 on bad usage.
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "2_eval/evaluator.h"
#include "1_base/npy.h"
#include "2_eval/fold_kernels.h"
#include "3_export/6_write/model_check.h"

namespace fs = std::filesystem;
using nlohmann::json;
using onnxport::core::eval::EvalValue;
using onnxport::core::eval::ModelEvaluator;

namespace {

struct Tolerance {
  double rtol = 1e-3, atol = 1e-5;
};

struct Case {
  std::string label;  // "name@opsetN"
  fs::path onnx, manifest;
  Tolerance tol;
};

struct Outcome {
  std::string status;  // "pass", "fail", "skip", "expected failure"
  std::string detail;
};

struct Options {
  std::string cases_file, ort_dir, json_file, expected_file;
  std::set<std::string> only;
  bool verbose = false;
};

std::vector<Case> read_cases(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  const json list = json::parse(in);
  const auto dir = file.parent_path();
  std::vector<Case> cases;
  for (const auto& c : list) {
    Case one;
    one.onnx = dir / c.at("onnx").get<std::string>();
    one.manifest = dir / c.at("manifest").get<std::string>();
    one.label = c.value("name", one.onnx.filename().string());
    one.tol.rtol = c.value("rtol", one.tol.rtol);
    one.tol.atol = c.value("atol", one.tol.atol);
    cases.push_back(std::move(one));
  }
  return cases;
}

at::Tensor load_npy(const fs::path& file) { return onnxport::core::to_aten(onnxport::core::read_npy(file.string())); }

// The arrays a manifest lists under `key` ("inputs" or "outputs"), read from its directory.
std::vector<at::Tensor> manifest_arrays(const fs::path& manifest, const char* key) {
  std::ifstream in(manifest);
  if (!in) throw std::runtime_error("cannot read manifest " + manifest.string());
  const json m = json::parse(in);
  std::vector<at::Tensor> arrays;
  for (const auto& entry : m.at(key))
    arrays.push_back(load_npy(manifest.parent_path() / entry.at("file").get<std::string>()));
  return arrays;
}

std::string type_text(const at::Tensor& t) {
  std::ostringstream s;
  s << c10::toString(t.scalar_type()) << t.sizes();
  return s.str();
}

// One output against one reference, by ort_compare.js's rule.
struct Diff {
  bool ok = true;
  double max_abs = 0;  // over all elements; infinity where NaN/infinity do not match
  int64_t bad = 0;
  std::string mismatch;  // dtype or shape difference
};

Diff compare(const at::Tensor& got, const at::Tensor& want, const Tolerance& tol) {
  Diff d;
  if (got.scalar_type() != want.scalar_type() || !got.sizes().equals(want.sizes())) {
    d.ok = false;
    d.max_abs = std::numeric_limits<double>::quiet_NaN();
    d.mismatch = "got " + type_text(got) + ", expected " + type_text(want);
    return d;
  }
  if (want.numel() == 0) return d;
  const auto a = got.to(at::kDouble), b = want.to(at::kDouble);
  at::Tensor ok, err;
  if (at::isFloatingType(want.scalar_type())) {
    const auto equal = at::logical_or(at::eq(a, b), at::logical_and(at::isnan(a), at::isnan(b)));
    const auto finite = at::logical_and(at::isfinite(a), at::isfinite(b));
    const auto diff = at::where(finite, at::abs(a - b), std::numeric_limits<double>::infinity());
    ok = at::logical_or(equal, at::le(diff, tol.atol + tol.rtol * at::abs(b)));
    err = at::where(equal, at::zeros_like(diff), diff);
  } else {
    ok = at::eq(got, want);  // raw: int64 values past 2^53 must not collapse through double
    err = at::abs(a - b);
  }
  d.bad = (~ok).sum().item<int64_t>();
  d.ok = d.bad == 0;
  d.max_abs = err.max().item<double>();
  return d;
}

std::string describe(const Diff& d, int64_t numel) {
  if (!d.mismatch.empty()) return d.mismatch;
  std::ostringstream s;
  s << "max abs err " << d.max_abs;
  if (!d.ok) s << " (" << d.bad << " of " << numel << " off)";
  return s.str();
}

// ONNX Runtime's output k of the case, or an undefined tensor when ops.onnxruntime did not save
// one for the model as it is now (missing, or older than the model: a stale run).
at::Tensor ort_output(const Case& c, const std::string& ort_dir, size_t k) {
  const auto file = fs::path(ort_dir) / (c.onnx.stem().string() + ".actual" + std::to_string(k) + ".npy");
  std::error_code ec;
  if (!fs::exists(file, ec) || fs::last_write_time(file) < fs::last_write_time(c.onnx)) return {};
  return load_npy(file);
}

// Why ONNX Runtime did not run the model as it is now ("" when it was not skipped): ort_compare's
// --ort-lacks leaves <basename>.not_run beside the outputs it saves.
std::string ort_not_run(const Case& c, const std::string& ort_dir) {
  const auto file = fs::path(ort_dir) / (c.onnx.stem().string() + ".not_run");
  std::error_code ec;
  if (!fs::exists(file, ec) || fs::last_write_time(file) < fs::last_write_time(c.onnx)) return "";
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line.empty() ? "no reason given" : line;
}

// What the evaluator lacks for this model ("" when it can run it): the missing ops, without
// opsets, so skips group by op.
std::string missing_kernels(const ModelEvaluator& evaluator) {
  std::set<std::string> ops;
  for (const auto& m : evaluator.unsupported_nodes()) ops.insert(m.substr(0, m.find(" at opset")));
  std::string text;
  for (const auto& op : ops) text += (text.empty() ? "" : ", ") + op;
  return text;
}

// "" when output k matches both references, else one clause naming it and both errors.
std::string check_output(const Case& c, const std::string& ort_dir, size_t k, const std::string& name,
                         const EvalValue& got, const at::Tensor& torch_out) {
  const std::string head = "out" + std::to_string(k) + " '" + name + "': ";
  if (got.is_sequence()) return head + "the evaluator produced a sequence, expected a tensor";
  const auto vs_torch = compare(got.tensor, torch_out, c.tol);
  const auto ort = ort_output(c, ort_dir, k);
  if (!ort.defined())
    return head + "no ONNX Runtime output in " + ort_dir + " (run ops.onnxruntime); vs torch " +
           describe(vs_torch, torch_out.numel());
  const auto vs_ort = compare(got.tensor, ort, c.tol);
  if (vs_torch.ok && vs_ort.ok) return "";
  return head + "vs torch " + describe(vs_torch, torch_out.numel()) + ", vs ONNX Runtime " +
         describe(vs_ort, ort.numel());
}

Outcome run_case(const Case& c, const std::string& ort_dir) {
  const auto model = onnxport::core::read_model_file(c.onnx.string());
  for (const auto& io : {model.graph().input(), model.graph().output()})
    for (const auto& v : io)
      if (!v.type().has_tensor_type()) return {"skip", "value '" + v.name() + "' is not a tensor"};
  ModelEvaluator evaluator(model, c.onnx.parent_path().string());
  if (auto missing = missing_kernels(evaluator); !missing.empty()) return {"skip", "no kernel: " + missing};
  if (auto why = ort_not_run(c, ort_dir); !why.empty()) return {"skip", "not run in ONNX Runtime: " + why};
  const auto inputs = manifest_arrays(c.manifest, "inputs");
  const auto expected = manifest_arrays(c.manifest, "outputs");
  if (inputs.size() != evaluator.input_names().size())
    return {"fail", "the graph has " + std::to_string(evaluator.input_names().size()) + " inputs, the manifest " +
                        std::to_string(inputs.size())};
  if (expected.size() != evaluator.output_names().size())
    return {"fail", "the graph has " + std::to_string(evaluator.output_names().size()) + " outputs, the manifest " +
                        std::to_string(expected.size())};
  std::vector<EvalValue> outputs;
  try {
    outputs = evaluator.run(std::vector<EvalValue>(inputs.begin(), inputs.end()));
  } catch (const std::exception& e) {
    return {"fail", std::string("evaluator error: ") + e.what()};
  }
  std::string detail;
  for (size_t k = 0; k < expected.size(); ++k)
    if (auto d = check_output(c, ort_dir, k, evaluator.output_names()[k], outputs[k], expected[k]); !d.empty())
      detail += (detail.empty() ? "" : "; ") + d;
  return {detail.empty() ? "pass" : "fail", detail};
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  }
  return out;
}

bool parse_args(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool takes_value =
        arg == "--only" || arg == "--json" || arg == "--expected-failures" || arg == "--ort-actual";
    if (arg == "-v") {
      o.verbose = true;
    } else if (takes_value && i + 1 < argc) {
      const std::string value = argv[++i];
      if (arg == "--json") o.json_file = value;
      if (arg == "--expected-failures") o.expected_file = value;
      if (arg == "--ort-actual") o.ort_dir = value;
      std::stringstream s(arg == "--only" ? value : "");
      for (std::string name; std::getline(s, name, ',');) o.only.insert(name);
    } else if (o.cases_file.empty() && arg[0] != '-') {
      o.cases_file = arg;
    } else {
      return false;
    }
  }
  return !o.cases_file.empty() && !o.ort_dir.empty();
}

bool selected(const Options& o, const Case& c) {
  return o.only.empty() || o.only.count(c.label) || o.only.count(c.label.substr(0, c.label.find('@')));
}

// label -> reason; false when the file cannot be read.
bool read_expected_failures(const std::string& file, std::map<std::string, std::string>& out) {
  if (file.empty()) return true;
  std::ifstream in(file);
  if (!in) return false;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.find_first_of(" \t");
    out[line.substr(0, space)] = space == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", space));
  }
  return true;
}

void write_json(const std::string& file, const std::map<std::string, int>& counts,
                const std::map<std::string, int>& skip_reasons,
                const std::vector<std::pair<std::string, Outcome>>& results, double seconds) {
  std::ofstream out(file);
  auto count = [&](const char* k) { return counts.count(k) ? counts.at(k) : 0; };
  out << "{\n  \"cases\": " << results.size() << ",\n  \"passed\": " << count("pass")
      << ",\n  \"failed\": " << count("fail") << ",\n  \"expected_failures\": " << count("expected failure")
      << ",\n  \"skipped\": " << count("skip") << ",\n  \"seconds\": " << seconds << ",\n  \"skip_reasons\": {";
  const char* sep = "\n";
  for (const auto& [reason, n] : skip_reasons) {
    out << sep << "    \"" << json_escape(reason) << "\": " << n;
    sep = ",\n";
  }
  out << "\n  },\n  \"results\": [\n";
  for (size_t i = 0; i < results.size(); ++i)
    out << "    {\"name\": \"" << json_escape(results[i].first) << "\", \"status\": \"" << results[i].second.status
        << "\", \"detail\": \"" << json_escape(results[i].second.detail) << "\"}"
        << (i + 1 < results.size() ? ",\n" : "\n");
  out << "  ]\n}\n";
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_args(argc, argv, o)) {
    std::cerr << "usage: onnx_op_cases CASES.json --ort-actual DIR [--only LABEL[,LABEL]] [--expected-failures FILE] "
                 "[--json FILE] [-v]\n";
    return 2;
  }
  std::map<std::string, std::string> expected_failures;
  if (!read_expected_failures(o.expected_file, expected_failures)) {
    std::cerr << "onnx_op_cases: cannot read " << o.expected_file << "\n";
    return 2;
  }
  std::vector<Case> cases;
  try {
    for (auto& c : read_cases(o.cases_file))
      if (selected(o, c)) cases.push_back(std::move(c));
  } catch (const std::exception& e) {
    std::cerr << "onnx_op_cases: " << o.cases_file << ": " << e.what() << " (run ops.export first)\n";
    return 2;
  }

  const auto start = std::chrono::steady_clock::now();
  std::map<std::string, int> counts, skip_reasons;
  std::vector<std::pair<std::string, Outcome>> results;
  for (const auto& c : cases) {
    Outcome out;
    try {
      out = run_case(c, o.ort_dir);
    } catch (const std::exception& e) {
      out = {"fail", e.what()};
    }
    const bool listed = expected_failures.count(c.label) > 0;
    if (out.status == "fail" && listed) out.status = "expected failure";
    if (out.status == "pass" && listed)
      out = {"fail", "listed as an expected failure but passes: remove it from the list"};
    if (out.status == "skip") ++skip_reasons[out.detail];
    ++counts[out.status];
    if (out.status == "fail")
      std::cout << "FAIL " << c.label << ": " << out.detail << "\n";
    else if (o.verbose)
      std::cout << out.status << " " << c.label << (out.detail.empty() ? "" : ": " + out.detail) << "\n";
    results.emplace_back(c.label, out);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  for (const auto& [reason, n] : skip_reasons) std::cout << "skipped " << n << ": " << reason << "\n";
  std::cout << cases.size() << " cases: " << counts["pass"] << " passed, " << counts["fail"] << " failed, "
            << counts["expected failure"] << " expected failures, " << counts["skip"] << " skipped (" << seconds
            << " s)\n";
  if (!o.json_file.empty()) write_json(o.json_file, counts, skip_reasons, results, seconds);
  return counts["fail"] == 0 ? 0 : 1;
}
