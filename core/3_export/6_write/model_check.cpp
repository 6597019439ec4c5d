// The check stage: ONNX's checker and strict shape inference on a written file.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <fstream>
#include <map>
#include <initializer_list>
#include <stdexcept>
#include <unordered_map>

#include "3_export/6_write/model_check.h"
#include "1_base/external_data.h"
#include "1_base/input_file.h"
#include "1_base/output_file.h"
#include "onnxport/errors.h"

// libonnx exports the checker entry that takes a context (which carries the directory external
// data is resolved against) but its header does not declare it.
namespace onnx::checker {
void check_model(const ModelProto& model, CheckerContext& ctx);
}  // namespace onnx::checker

namespace onnxport::core {

namespace {

// libonnx 1.12's shape-inference functions divide by some attributes without checking them: a
// Conv or pool with a zero stride kills the process with SIGFPE (found by fuzz_onnx_file). The
// checker does not look at values, so a file can pass it and still crash inference. These are
// refused first, by node and attribute.
struct PositiveAttribute {
  std::initializer_list<const char*> ops;
  const char* attribute;
};
const PositiveAttribute kMustBePositive[] = {
    {{"Conv", "ConvInteger", "QLinearConv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool", "MaxUnpool",
      "MaxRoiPool"},
     "strides"},
    {{"Conv", "ConvInteger", "QLinearConv", "ConvTranspose", "MaxPool"}, "dilations"},
    {{"DepthToSpace", "SpaceToDepth"}, "blocksize"},
};

std::string ints_text(const onnx::AttributeProto& a) {
  if (a.type() == onnx::AttributeProto::INT) return std::to_string(a.i());
  std::string text = "[";
  for (int i = 0; i < a.ints_size(); ++i) text += (i ? ", " : "") + std::to_string(a.ints(i));
  return text + "]";
}

bool has_non_positive(const onnx::AttributeProto& a) {
  if (a.type() == onnx::AttributeProto::INT) return a.i() <= 0;
  for (int64_t v : a.ints())
    if (v <= 0) return true;
  return false;
}

using DeclaredRanks = std::unordered_map<std::string, int>;

// The ranks the graph declares: its inputs, outputs, value_info and initializers, on top of
// those of the graphs around it.
DeclaredRanks declared_ranks(const onnx::GraphProto& graph, DeclaredRanks ranks) {
  auto add = [&](const onnx::ValueInfoProto& v) {
    if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
      ranks[v.name()] = v.type().tensor_type().shape().dim_size();
  };
  for (const auto& v : graph.input()) add(v);
  for (const auto& v : graph.output()) add(v);
  for (const auto& v : graph.value_info()) add(v);
  for (const auto& t : graph.initializer()) ranks[t.name()] = t.dims_size();
  return ranks;
}

std::string node_text(const onnx::NodeProto& node) {
  return node.name().empty() ? "a " + node.op_type() + " node" : "node '" + node.name() + "' (" + node.op_type() + ")";
}

// libonnx's Conv inference reads the weight's kernel dims past the input's rank (SIGSEGV) when
// the input has fewer dims than the weight; ONNX asks for equal ranks.
void refuse_conv_rank_mismatch(const onnx::NodeProto& node, const DeclaredRanks& ranks) {
  int weight_index = -1;
  if (node.op_type() == "Conv" || node.op_type() == "ConvInteger") weight_index = 1;
  if (node.op_type() == "QLinearConv") weight_index = 3;
  if (weight_index < 0 || node.input_size() <= weight_index) return;
  const auto x = ranks.find(node.input(0));
  const auto w = ranks.find(node.input(weight_index));
  if (x == ranks.end() || w == ranks.end() || x->second == w->second) return;
  throw std::invalid_argument(node_text(node) + ": input '" + node.input(0) + "' has rank " +
                              std::to_string(x->second) + " but weight '" + node.input(weight_index) + "' has rank " +
                              std::to_string(w->second) + "; they must be equal");
}

void refuse_inputs_inference_cannot_take(const onnx::GraphProto& graph, const DeclaredRanks& outer) {
  const DeclaredRanks ranks = declared_ranks(graph, outer);
  for (const auto& node : graph.node()) {
    if (is_standard_domain(node)) refuse_conv_rank_mismatch(node, ranks);
    for (const auto& a : node.attribute()) {
      if (a.has_g()) refuse_inputs_inference_cannot_take(a.g(), ranks);
      for (const auto& g : a.graphs()) refuse_inputs_inference_cannot_take(g, ranks);
    }
  }
}

}  // namespace

void refuse_attributes_inference_cannot_take(const onnx::GraphProto& graph) {
  refuse_inputs_inference_cannot_take(graph, {});
  for (const auto& node : graph.node()) {
    const bool standard = is_standard_domain(node);
    for (const auto& a : node.attribute()) {
      if (a.has_g()) refuse_attributes_inference_cannot_take(a.g());
      for (const auto& g : a.graphs()) refuse_attributes_inference_cannot_take(g);
      if (!standard) continue;
      for (const auto& rule : kMustBePositive) {
        if (a.name() != rule.attribute || !has_non_positive(a)) continue;
        for (const char* op : rule.ops)
          if (node.op_type() == op)
            throw std::invalid_argument(node_text(node) + ": attribute " + a.name() + " must be positive, got " + ints_text(a));
      }
    }
  }
}

// protobuf's CodedInputStream refuses messages nested deeper than this (its default); every
// walk over a parsed model's sub-graphs is bounded by it.
constexpr int kProtobufNestingLimit = 100;

onnx::ModelProto read_model_file(const std::string& path) {
  require_regular_file(path, "the ONNX file", "give the path of an .onnx file", /*allow_empty=*/false);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError("cannot open '" + path + "'");
  google::protobuf::io::IstreamInputStream raw(&in);
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(std::numeric_limits<int>::max());
  coded.SetRecursionLimit(kProtobufNestingLimit);
  onnx::ModelProto m;
  if (!m.ParseFromCodedStream(&coded))
    throw ModelError("'" + path + "' is not a valid ONNX model file (protobuf cannot parse it, or it nests deeper than " +
                         std::to_string(kProtobufNestingLimit) + " messages)",
                     ErrorContext::with_hint("give the path of an .onnx file written by an ONNX exporter"));
  // Most bytes parse as some protobuf message (a text file does): a model has a version and a graph.
  if (m.ir_version() <= 0 || !m.has_graph())
    throw ModelError("'" + path + "' is not an ONNX model: it has no " + (m.ir_version() <= 0 ? "ir_version" : "graph"),
                     ErrorContext::with_hint("give the path of an .onnx file written by an ONNX exporter"));
  try {
    refuse_external_data_outside(m, directory_of(path));
  } catch (Error& e) {
    e.add_context(ErrorContext::for_file(path));
    throw;
  }
  return m;
}

namespace {

// Nodes of the default domain whose op ONNX does not define move to a domain of their own, which the
// checker and shape inference pass over as they pass over any custom op without a schema.
constexpr const char* kUncheckedDomain = "onnxport.unchecked";

// Counts them by op type.
void set_aside_undefined_ops(onnx::GraphProto& graph, std::map<std::string, size_t>& moved) {
  for (auto& node : *graph.mutable_node()) {
    if (is_standard_domain(node) && !onnx_defines(node.op_type())) {
      node.set_domain(kUncheckedDomain);
      ++moved[node.op_type()];
    }
    for (auto& a : *node.mutable_attribute()) {
      if (a.has_g()) set_aside_undefined_ops(*a.mutable_g(), moved);
      for (auto& g : *a.mutable_graphs()) set_aside_undefined_ops(g, moved);
    }
  }
}

}  // namespace

CheckResult check_model_structure(onnx::ModelProto m, const std::string& model_dir, const std::string& what) {
  std::map<std::string, size_t> unchecked;
  set_aside_undefined_ops(*m.mutable_graph(), unchecked);
  if (!unchecked.empty()) {
    auto* opset = m.add_opset_import();
    opset->set_domain(kUncheckedDomain);
    opset->set_version(1);
  }
  try {
    refuse_external_data_outside(m, model_dir, DataFile::MustExist);
  } catch (Error& e) {
    e.add_context(ErrorContext::for_file(what));
    throw;
  }
  try {
    onnx::checker::CheckerContext ctx;
    ctx.set_model_dir(model_dir);
    onnx::checker::check_model(m, ctx);
    refuse_attributes_inference_cannot_take(m.graph());
    onnx::ShapeInferenceOptions opts(/*check_type=*/true, /*error_mode=*/1, /*data_prop=*/false);
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception& e) {
    throw ExportError("ONNX checker rejects '" + what + "': " + e.what());
  }
  CheckResult r;
  r.nodes = static_cast<size_t>(m.graph().node_size());
  int opset = 0;
  for (const auto& imp : m.opset_import())
    if (imp.domain().empty() || imp.domain() == "ai.onnx") opset = static_cast<int>(imp.version());
  r.summary = "ok: " + std::to_string(r.nodes) + " nodes, " + std::to_string(m.graph().initializer_size()) +
              " initializers, opset " + std::to_string(opset) + ", ir_version " + std::to_string(m.ir_version());
  if (!unchecked.empty()) {
    std::string ops;
    for (const auto& [op, n] : unchecked) ops += (ops.empty() ? "" : ", ") + op + " x" + std::to_string(n);
    r.summary += "; not checked, ops ONNX does not define: " + ops;
  }
  return r;
}

CheckResult check_model_file(const std::string& path) {
  return check_model_structure(read_model_file(path), directory_of(path), path);
}

}  // namespace onnxport::core
