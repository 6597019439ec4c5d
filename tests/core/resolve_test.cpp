// The resolve stage (resolve.h) on TorchScript graphs parsed from IR text, against a registry
// filled in-process: one resolution per node kind, the opset picked, core-converted kinds,
// missing ops reported together with counts, and fallback under operator_export_type.
#include "doctest_torch.h"  // before any libtorch header
#include <torch/csrc/jit/ir/irparser.h>

#include "onnxport/errors.h"
#include "3_export/3_convert/resolve.h"

using namespace onnxport;
using namespace onnxport::core;

namespace {

const PackRef kPack{"test_pack", "/opt/packs/libtest_pack.so"};

Value* unused_symbolic(Graph&, const TorchNode&, const Args&) { return nullptr; }

// relu and add from opset 9, add again from 14, an op only a future opset maps.
Registry test_registry() {
  Registrar r;
  r.add("aten::relu", 9, unused_symbolic);
  r.add("aten::add", 9, unused_symbolic);
  r.add("aten::add", 14, unused_symbolic);
  r.add("aten::future_op", 18, unused_symbolic);
  Registry reg;
  reg.add_pack(kPack, r);
  return reg;
}

std::shared_ptr<torch::jit::Graph> parse(const std::string& ir) {
  auto graph = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(ir, graph.get());
  return graph;
}

ExportOptions options_at(int opset, OperatorExportType type = OperatorExportType::Onnx) {
  ExportOptions o;
  o.opset_version = opset;
  o.operator_export_type = type;
  return o;
}

// relu twice, add once, and the constant the core converts.
const char* kMappedGraph = R"IR(
graph(%x : Float(2, 3)):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::relu(%x)
  %b : Tensor = aten::relu(%a)
  %c : Tensor = aten::add(%a, %b, %one)
  return (%c)
)IR";

// Unmapped ops: erfinv twice (once inside a branch), vendor::thing once, future_op once.
const char* kUnmappedGraph = R"IR(
graph(%x : Tensor, %flag : bool):
  %e1 : Tensor = aten::erfinv(%x)
  %y : Tensor = prim::If(%flag)
    block0():
      %e2 : Tensor = aten::erfinv(%e1)
      -> (%e2)
    block1():
      %r : Tensor = aten::relu(%e1)
      -> (%r)
  %v : Tensor = vendor::thing(%y)
  %f : Tensor = aten::future_op(%v)
  return (%f)
)IR";

std::string unsupported_message(const torch::jit::Graph& g, const Registry& reg, const ExportOptions& o) {
  try {
    resolve_ops(g, reg, o, "model.pt");
  } catch (const UnsupportedOpError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The first node of `kind` in the block or its nested blocks (nullptr if none).
const torch::jit::Node* find_node(const torch::jit::Block* block, const std::string& kind) {
  for (const torch::jit::Node* n : block->nodes()) {
    if (n->kind().toQualString() == kind) return n;
    for (const torch::jit::Block* b : n->blocks())
      if (const torch::jit::Node* inner = find_node(b, kind)) return inner;
  }
  return nullptr;
}

// How the first node of `kind` in the graph resolved.
const ResolvedOp& resolved(const Resolution& res, const torch::jit::Graph& g, const std::string& kind) {
  const torch::jit::Node* n = find_node(g.block(), kind);
  REQUIRE_MESSAGE(n != nullptr, "no " << kind << " node in the graph");
  return res.of(n);
}

std::vector<std::string> keys_of(const Resolution& res) {
  std::vector<std::string> keys;
  for (const auto& [key, op] : res.ops()) keys.push_back(key);
  return keys;
}

}  // namespace

TEST_CASE("resolve_ops records each node kind once, with the pack entry for the target opset") {
  const Registry reg = test_registry();
  auto graph = parse(kMappedGraph);

  const Resolution at13 = resolve_ops(*graph, reg, options_at(13), "model.pt");
  CHECK(at13.opset() == 13);
  // relu appears twice and is resolved once; add is recorded under its schema's overload.
  CHECK(keys_of(at13) == std::vector<std::string>{"aten::add.Tensor", "aten::relu", "prim::Constant"});
  const ResolvedOp& relu = resolved(at13, *graph, "aten::relu");
  REQUIRE(relu.entry != nullptr);
  CHECK(relu.entry->torch_op == "aten::relu");
  CHECK(relu.entry->pack.id == "test_pack");
  CHECK_FALSE(relu.fallback);
  CHECK_FALSE(relu.core);
  REQUIRE(resolved(at13, *graph, "aten::add").entry != nullptr);
  CHECK(resolved(at13, *graph, "aten::add").entry->since_opset == 9);

  const Resolution at17 = resolve_ops(*graph, reg, options_at(17), "model.pt");
  REQUIRE(resolved(at17, *graph, "aten::add").entry != nullptr);
  CHECK(resolved(at17, *graph, "aten::add").entry->since_opset == 14);
}

TEST_CASE("prim::Constant is converted by the core, without a registry entry") {
  const Registry reg = test_registry();
  auto graph = parse(kMappedGraph);
  const Resolution res = resolve_ops(*graph, reg, options_at(17), "model.pt");
  const ResolvedOp& constant = resolved(res, *graph, "prim::Constant");
  CHECK(constant.core);
  CHECK(constant.entry == nullptr);
  CHECK_FALSE(constant.fallback);
}

TEST_CASE("Resolution::of a node whose kind was not resolved is an internal ExportError; helper looks up on demand") {
  const Registry reg = test_registry();
  auto graph = parse(kMappedGraph);
  const Resolution res = resolve_ops(*graph, reg, options_at(17), "model.pt");
  auto other = parse(R"IR(
graph(%x : Tensor):
  %s : Tensor = aten::sigmoid(%x)
  return (%s)
)IR");
  std::string msg;
  try {
    resolved(res, *other, "aten::sigmoid");
  } catch (const ExportError& e) {
    msg = e.what();
  }
  CHECK(contains(msg, "internal: aten::sigmoid was not resolved"));
  const RegistryEntry* helper = res.helper("aten::add");
  REQUIRE(helper != nullptr);
  CHECK(helper->since_opset == 14);
  CHECK(res.helper("aten::slice_scatter") == nullptr);
  CHECK(res.ops().count("aten::slice_scatter") == 0);  // helpers are not graph ops
}

TEST_CASE("every unmapped op is reported in one UnsupportedOpError with its count, including ops inside blocks") {
  const Registry reg = test_registry();
  auto graph = parse(kUnmappedGraph);
  const std::string msg = unsupported_message(*graph, reg, options_at(17));
  CHECK(contains(msg, "3 operators have no mapping at opset 17:"));
  CHECK(contains(msg, "aten::erfinv x2 in <top>"));
  CHECK(contains(msg, "vendor::thing x1 in <top>"));
  CHECK(contains(msg, "aten::future_op x1 in <top> (supported from opset 18)"));
  CHECK(contains(msg, "raise --opset"));
  CHECK(contains(msg, "model.pt"));
  CHECK_FALSE(contains(msg, "aten::relu"));
}

TEST_CASE("a single unmapped op is reported in the singular with the op-pack hint") {
  const Registry reg = test_registry();
  auto graph = parse(R"IR(
graph(%x : Tensor):
  %e : Tensor = aten::erfinv(%x)
  return (%e)
)IR");
  const std::string msg = unsupported_message(*graph, reg, options_at(17));
  CHECK(contains(msg, "1 operator has no mapping at opset 17:"));
  CHECK(contains(msg, "aten::erfinv x1 in <top>"));
  CHECK(contains(msg, "--plugin-dir"));
}

TEST_CASE("under onnx_aten_fallback unmapped ops become fallback nodes and mapped ones keep their entry") {
  const Registry reg = test_registry();
  auto graph = parse(kUnmappedGraph);
  const Resolution res = resolve_ops(*graph, reg, options_at(17, OperatorExportType::OnnxAtenFallback), "model.pt");
  CHECK(resolved(res, *graph, "aten::erfinv").fallback);
  CHECK(resolved(res, *graph, "aten::erfinv").entry == nullptr);
  CHECK(resolved(res, *graph, "vendor::thing").fallback);
  CHECK(resolved(res, *graph, "aten::future_op").fallback);
  CHECK_FALSE(resolved(res, *graph, "aten::relu").fallback);
  CHECK(resolved(res, *graph, "aten::relu").entry != nullptr);
  CHECK(resolved(res, *graph, "prim::If").core);
  CHECK(res.fallthrough_domains(OperatorExportType::OnnxAtenFallback).empty());
}

TEST_CASE("under onnx_aten every aten op falls back, mapped or not, and other namespaces only when unmapped") {
  const Registry reg = test_registry();
  auto graph = parse(kUnmappedGraph);
  const Resolution res = resolve_ops(*graph, reg, options_at(17, OperatorExportType::OnnxAten), "model.pt");
  CHECK(resolved(res, *graph, "aten::relu").fallback);
  CHECK(resolved(res, *graph, "aten::relu").entry != nullptr);
  CHECK(resolved(res, *graph, "aten::erfinv").fallback);
  CHECK(resolved(res, *graph, "vendor::thing").fallback);
  CHECK_FALSE(resolved(res, *graph, "prim::If").fallback);
}

TEST_CASE("under onnx_fallthrough the fallback ops' namespaces are the domains they are kept in") {
  const Registry reg = test_registry();
  auto graph = parse(kUnmappedGraph);
  const Resolution res = resolve_ops(*graph, reg, options_at(17, OperatorExportType::OnnxFallthrough), "model.pt");
  CHECK(res.fallthrough_domains(OperatorExportType::OnnxFallthrough) == std::set<std::string>{"aten", "vendor"});
  CHECK_FALSE(resolved(res, *graph, "aten::relu").fallback);
}

TEST_CASE("a mapping registered for a node's schema overload is preferred over the mapping of the op name") {
  Registrar r;
  r.add("aten::add", 9, unused_symbolic);
  r.add("aten::add.Tensor", 11, unused_symbolic);
  r.add("aten::relu", 9, unused_symbolic);
  Registry reg;
  reg.add_pack(kPack, r);
  auto graph = parse(kMappedGraph);

  const Resolution at17 = resolve_ops(*graph, reg, options_at(17), "model.pt");
  const ResolvedOp& add = resolved(at17, *graph, "aten::add");
  REQUIRE(add.entry != nullptr);
  CHECK(add.entry->torch_op == "aten::add.Tensor");
  CHECK(dispatch_key(find_node(graph->block(), "aten::add")) == "aten::add.Tensor");
  CHECK(dispatch_key(find_node(graph->block(), "aten::relu")) == "aten::relu");

  // Below the overload's since-opset the name's mapping serves it.
  const Resolution at9 = resolve_ops(*graph, reg, options_at(9), "model.pt");
  REQUIRE(resolved(at9, *graph, "aten::add").entry != nullptr);
  CHECK(resolved(at9, *graph, "aten::add").entry->torch_op == "aten::add");
}
