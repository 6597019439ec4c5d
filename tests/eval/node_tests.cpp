// ONNX's own backend node tests (Debian's libonnx-testdata: per case a one-node model.onnx and
// test_data_set_*/input_*.pb, output_*.pb) run through onnxport's evaluator. A case runs when
// the evaluator has a kernel for every node at the case's opset; it passes when every output
// has the expected dtype and shape and its values are within rtol 1e-3, atol 1e-7 (the
// tolerances of ONNX's backend test runner; NaN matches NaN).
//
//   onnx_node_tests DATA_DIR [--only NAME[,NAME]] [--expected-failures FILE] [--json FILE] [-v]
//
// --expected-failures: lines "test_name  reason"; such a case may fail (and must still run).
// Exit status: 0 when no case failed except expected ones, 1 otherwise, 2 on bad usage.
// onnx_pb.h first: it defines ONNX_API, which onnx-data.pb.h uses.
#include <onnx/onnx_pb.h>
// (keep)
#include <onnx/onnx-data.pb.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "1_base/onnx_release.h"
#include "2_eval/evaluator.h"

namespace fs = std::filesystem;
using onnxport::core::eval::EvalValue;
using onnxport::core::eval::ModelEvaluator;
using onnxport::core::eval::tensor_from_proto;

namespace {

template <class Proto>
Proto read_proto(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  Proto proto;
  if (!in || !proto.ParseFromIstream(&in)) throw std::runtime_error("cannot read " + file.string());
  return proto;
}

EvalValue read_value(const fs::path& file, const onnx::TypeProto& type) {
  if (type.has_sequence_type()) {
    auto seq = read_proto<onnx::SequenceProto>(file);
    std::vector<at::Tensor> items;
    for (const auto& t : seq.tensor_values()) items.push_back(tensor_from_proto(t));
    return EvalValue::of_sequence(std::move(items));
  }
  if (!type.has_tensor_type())
    throw std::runtime_error("value type of " + file.string() + " is not a tensor or sequence");
  return EvalValue(tensor_from_proto(read_proto<onnx::TensorProto>(file)));
}

std::string shape_text(const at::Tensor& t) {
  std::ostringstream s;
  s << c10::toString(t.scalar_type()) << t.sizes();
  return s.str();
}

// "" when equal within tolerance, else what differs.
std::string compare_tensor(const at::Tensor& actual, const at::Tensor& expected) {
  if (actual.scalar_type() != expected.scalar_type() || !actual.sizes().equals(expected.sizes()))
    return "got " + shape_text(actual) + ", expected " + shape_text(expected);
  if (expected.numel() == 0) return "";
  if (at::isFloatingType(expected.scalar_type()) || at::isComplexType(expected.scalar_type())) {
    auto a =
        at::isComplexType(expected.scalar_type()) ? at::view_as_real(actual).to(at::kDouble) : actual.to(at::kDouble);
    auto e = at::isComplexType(expected.scalar_type()) ? at::view_as_real(expected).to(at::kDouble)
                                                       : expected.to(at::kDouble);
    auto both_nan = at::logical_and(at::isnan(a), at::isnan(e));
    auto same_inf = at::logical_and(at::isinf(e), at::eq(a, e));
    auto close = at::le(at::abs(a - e), 1e-7 + 1e-3 * at::abs(e));
    auto ok = at::logical_or(at::logical_or(both_nan, same_inf), close);
    if (ok.all().item<bool>()) return "";
    auto err = at::where(ok, at::zeros_like(a), at::abs(a - e));
    std::ostringstream s;
    s << "max abs error " << err.max().item<double>() << " (" << (~ok).sum().item<int64_t>() << " of " << ok.numel()
      << " elements off)";
    return s.str();
  }
  if (at::equal(actual, expected)) return "";
  return "values differ (" + std::to_string(at::ne(actual, expected).sum().item<int64_t>()) + " elements)";
}

std::string compare(const EvalValue& actual, const EvalValue& expected) {
  if (expected.is_sequence()) {
    if (!actual.is_sequence()) return "got a tensor, expected a sequence";
    if (actual.sequence->size() != expected.sequence->size())
      return "sequence of " + std::to_string(actual.sequence->size()) + ", expected " +
             std::to_string(expected.sequence->size());
    for (size_t i = 0; i < expected.sequence->size(); ++i)
      if (auto d = compare_tensor((*actual.sequence)[i], (*expected.sequence)[i]); !d.empty())
        return "item " + std::to_string(i) + ": " + d;
    return "";
  }
  if (actual.is_sequence()) return "got a sequence, expected a tensor";
  return compare_tensor(actual.tensor, expected.tensor);
}

struct Outcome {
  std::string status;  // "pass", "fail", "skip"
  std::string detail;
};

Outcome run_case(const fs::path& dir) {
  const auto model = read_proto<onnx::ModelProto>(dir / "model.onnx");
  for (const auto& io : {model.graph().input(), model.graph().output()})
    for (const auto& v : io)
      if (!v.type().has_tensor_type() && !v.type().has_sequence_type())
        return {"skip", "value '" + v.name() + "' is neither a tensor nor a sequence (optional/map types)"};
  ModelEvaluator evaluator(model, dir.string());
  if (auto missing = evaluator.unsupported_nodes(); !missing.empty()) {
    std::string text;
    for (const auto& m : missing) text += (text.empty() ? "" : ", ") + m;
    return {"skip", "no kernel: " + text};
  }
  std::vector<fs::path> sets;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(entry.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return {"skip", "no test data"};
  const auto& graph = model.graph();
  std::map<std::string, const onnx::TypeProto*> types;
  for (const auto& v : graph.input()) types[v.name()] = &v.type();
  for (const auto& set : sets) {
    std::vector<EvalValue> inputs;
    for (size_t i = 0; i < evaluator.input_names().size(); ++i)
      inputs.push_back(read_value(set / ("input_" + std::to_string(i) + ".pb"), *types[evaluator.input_names()[i]]));
    std::vector<EvalValue> outputs;
    try {
      outputs = evaluator.run(inputs);
    } catch (const std::exception& e) {
      return {"fail", set.filename().string() + ": " + e.what()};
    }
    for (int k = 0; k < graph.output_size(); ++k) {
      const auto expected = read_value(set / ("output_" + std::to_string(k) + ".pb"), graph.output(k).type());
      if (auto d = compare(outputs[k], expected); !d.empty())
        return {"fail", set.filename().string() + " output '" + graph.output(k).name() + "': " + d};
    }
  }
  return {"pass", ""};
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data_dir, json_file, expected_file;
  std::set<std::string> only;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-v") {
      verbose = true;
    } else if ((arg == "--only" || arg == "--json" || arg == "--expected-failures") && i + 1 < argc) {
      const std::string value = argv[++i];
      if (arg == "--json") json_file = value;
      if (arg == "--expected-failures") expected_file = value;
      if (arg == "--only") {
        std::stringstream s(value);
        for (std::string name; std::getline(s, name, ',');) only.insert(name);
      }
    } else if (data_dir.empty() && arg[0] != '-') {
      data_dir = arg;
    } else {
      std::cerr
          << "usage: onnx_node_tests DATA_DIR [--only NAME[,NAME]] [--expected-failures FILE] [--json FILE] [-v]\n";
      return 2;
    }
  }
  if (data_dir.empty() || !fs::is_directory(data_dir)) {
    std::cerr << "onnx_node_tests: '" << data_dir << "' is not a directory (apt-get install libonnx-testdata: "
              << "/usr/share/libonnx-testdata/data/node)\n";
    return 2;
  }
  std::map<std::string, std::string> expected_failures;
  if (!expected_file.empty()) {
    std::ifstream in(expected_file);
    if (!in) {
      std::cerr << "onnx_node_tests: cannot read " << expected_file << "\n";
      return 2;
    }
    // "(ONNX 1.17) ..." marks a case whose 1.17 data fails where 1.12's, of the same name, passes.
    const bool onnx_1_17 = onnxport::core::onnx_release::newest_opset() >= 22;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      const auto space = line.find_first_of(" \t");
      const auto start = space == std::string::npos ? space : line.find_first_not_of(" \t", space);
      const std::string reason = start == std::string::npos ? "" : line.substr(start);
      if (reason.rfind("(ONNX 1.17) ", 0) == 0 && !onnx_1_17) continue;
      expected_failures[line.substr(0, space)] = reason;
    }
  }
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(data_dir))
    if (fs::exists(entry.path() / "model.onnx") && (only.empty() || only.count(entry.path().filename().string())))
      cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());

  std::map<std::string, int> counts;
  int unexpected = 0;
  std::vector<std::pair<std::string, Outcome>> results;
  for (const auto& dir : cases) {
    const std::string name = dir.filename().string();
    Outcome o;
    try {
      o = run_case(dir);
    } catch (const std::exception& e) {
      o = {"fail", e.what()};
    }
    if (o.status == "fail" && expected_failures.count(name)) o.status = "expected failure";
    // Random draws can match numpy's by chance (test_bernoulli_double did, once in a few runs).
    const bool random = expected_failures.count(name) && expected_failures[name].rfind("random values", 0) == 0;
    if (o.status == "pass" && expected_failures.count(name) && !random) {
      o = {"fail", "listed as an expected failure but passes: remove it from the list"};
    }
    ++counts[o.status];
    if (o.status == "fail") {
      ++unexpected;
      std::cout << "FAIL " << name << ": " << o.detail << "\n";
    } else if (verbose) {
      std::cout << o.status << " " << name << (o.detail.empty() ? "" : ": " + o.detail) << "\n";
    }
    results.emplace_back(name, o);
  }
  std::cout << cases.size() << " cases: " << counts["pass"] << " passed, " << counts["fail"] << " failed, "
            << counts["expected failure"] << " expected failures, " << counts["skip"] << " skipped\n";
  if (!json_file.empty()) {
    std::ofstream out(json_file);
    out << "{\n  \"cases\": " << cases.size() << ",\n  \"passed\": " << counts["pass"]
        << ",\n  \"failed\": " << counts["fail"] << ",\n  \"expected_failures\": " << counts["expected failure"]
        << ",\n  \"skipped\": " << counts["skip"] << ",\n  \"results\": [\n";
    for (size_t i = 0; i < results.size(); ++i)
      out << "    {\"name\": \"" << results[i].first << "\", \"status\": \"" << results[i].second.status
          << "\", \"detail\": \"" << json_escape(results[i].second.detail) << "\"}"
          << (i + 1 < results.size() ? ",\n" : "\n");
    out << "  ]\n}\n";
  }
  return unexpected == 0 ? 0 : 1;
}
