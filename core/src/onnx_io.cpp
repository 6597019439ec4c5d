#include "onnx_io.h"

#include <functional>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_set>

#include "onnxport/errors.h"

namespace onnxport::core {

void eliminate_dead_code(OnnxModel& model) {
  std::unordered_set<std::string> live;
  for (const auto& out : model.outputs) live.insert(out.name);
  std::vector<bool> keep(model.nodes.size(), false);
  for (size_t i = model.nodes.size(); i-- > 0;) {
    const auto& p = model.nodes[i].proto;
    bool used = false;
    for (const auto& o : p.output()) used |= live.count(o) > 0;
    if (!used) continue;
    keep[i] = true;
    for (const auto& in : p.input())
      if (!in.empty()) live.insert(in);
    for (const auto& in : captured_names(p)) live.insert(in);
  }
  std::vector<OnnxNode> nodes;
  nodes.reserve(model.nodes.size());
  for (size_t i = 0; i < model.nodes.size(); ++i)
    if (keep[i]) nodes.push_back(std::move(model.nodes[i]));
  model.nodes = std::move(nodes);
  std::vector<Initializer> inits;
  std::unordered_set<std::string> seen;
  for (auto& init : model.initializers)
    if (live.count(init.name) && seen.insert(init.name).second) inits.push_back(std::move(init));
  model.initializers = std::move(inits);
}

namespace {
void set_value_info(onnx::ValueInfoProto& vi, const std::string& name, const TensorType& type) {
  vi.set_name(name);
  *vi.mutable_type() = to_type_proto(type);
}

onnx::TensorProto initializer_header(const Initializer& init) {
  onnx::TensorProto p;
  p.set_name(init.name);
  p.set_data_type(static_cast<int32_t>(init.tensor.dtype()));
  for (int64_t d : init.tensor.shape()) p.add_dims(d);
  return p;
}

TensorType type_of_initializer(const Initializer& init) {
  TensorType t;
  t.dtype = init.tensor.dtype();
  std::vector<Dim> dims;
  for (int64_t d : init.tensor.shape()) dims.push_back(Dim::fixed(d));
  t.shape = dims;
  return t;
}
}  // namespace

onnx::ModelProto build_model_proto(const OnnxModel& model, const ModelMeta& meta, bool with_initializer_headers) {
  onnx::ModelProto m;
  const int opset = model.opset_imports.count("") ? model.opset_imports.at("") : 17;
  m.set_ir_version(ir_version_for_opset(opset));
  m.set_producer_name(meta.producer_name);
  m.set_producer_version(meta.producer_version);
  for (const auto& [domain, version] : model.opset_imports) {
    auto* imp = m.add_opset_import();
    imp->set_domain(domain);
    imp->set_version(version);
  }
  auto* g = m.mutable_graph();
  g->set_name("main_graph");
  for (const auto& node : model.nodes) {
    auto* n = g->add_node();
    *n = node.proto;
    if (meta.provenance_doc_strings && !node.origin.torch_op.empty())
      n->set_doc_string("pack=" + node.origin.pack + " op=" + node.origin.torch_op + " module=" +
                        node.origin.module_path + (node.origin.source.empty() ? "" : " at " + node.origin.source));
  }
  for (const auto& in : model.inputs) set_value_info(*g->add_input(), in.name, in.type);
  // Before IR version 4 every initializer must also be a graph input.
  const bool params_as_inputs = !meta.export_params || meta.keep_initializers_as_inputs || m.ir_version() < 4;
  if (params_as_inputs)
    for (const auto& init : model.initializers) set_value_info(*g->add_input(), init.name, type_of_initializer(init));
  for (const auto& out : model.outputs) set_value_info(*g->add_output(), out.name, out.type);
  // Types of intermediate values (as torch.onnx writes them), for runtimes and viewers.
  std::unordered_set<std::string> io;
  for (const auto& in : model.inputs) io.insert(in.name);
  for (const auto& out : model.outputs) io.insert(out.name);
  for (const auto& node : model.nodes)
    for (const auto& name : node.proto.output()) {
      if (io.count(name)) continue;
      auto t = model.value_types.find(name);
      if (t == model.value_types.end() || !t->second.has_tensor_type() || t->second.tensor_type().elem_type() == 0)
        continue;
      auto* vi = g->add_value_info();
      vi->set_name(name);
      *vi->mutable_type() = t->second;
    }
  if (with_initializer_headers && meta.export_params)
    for (const auto& init : model.initializers) *g->add_initializer() = initializer_header(init);
  return m;
}

void write_model(const OnnxModel& model, const ModelMeta& meta, const std::string& path) {
  using google::protobuf::io::CodedOutputStream;
  using WireFormat = google::protobuf::internal::WireFormatLite;
  onnx::ModelProto m = build_model_proto(model, meta, false);
  onnx::GraphProto graph;
  graph.Swap(m.mutable_graph());
  m.clear_graph();

  // Graph field 5 (initializer) entries: header fields + raw_data (field 9) streamed from memory.
  struct Entry {
    std::string header;
    const Initializer* init;
    size_t size;  // serialized TensorProto size
  };
  std::vector<Entry> entries;
  size_t graph_size = graph.ByteSizeLong();
  if (meta.export_params) {
    for (const auto& init : model.initializers) {
      Entry e{initializer_header(init).SerializeAsString(), &init, 0};
      const size_t n = init.tensor.nbytes();
      e.size = e.header.size() + 1 + CodedOutputStream::VarintSize64(n) + n;
      graph_size += 1 + CodedOutputStream::VarintSize64(e.size) + e.size;
      entries.push_back(std::move(e));
    }
  }
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    if (!file) throw ExportError("cannot write '" + tmp + "'", ErrorContext::with_hint("check the output directory exists and is writable"));
    {
      google::protobuf::io::OstreamOutputStream raw(&file);
      CodedOutputStream out(&raw);
      m.SerializeToCodedStream(&out);
      out.WriteTag(WireFormat::MakeTag(7, WireFormat::WIRETYPE_LENGTH_DELIMITED));
      out.WriteVarint64(graph_size);
      graph.SerializeToCodedStream(&out);
      for (const auto& e : entries) {
        out.WriteTag(WireFormat::MakeTag(5, WireFormat::WIRETYPE_LENGTH_DELIMITED));
        out.WriteVarint64(e.size);
        out.WriteRaw(e.header.data(), static_cast<int>(e.header.size()));
        out.WriteTag(WireFormat::MakeTag(9, WireFormat::WIRETYPE_LENGTH_DELIMITED));
        out.WriteVarint64(e.init->tensor.nbytes());
        // WriteRaw takes an int: write large tensors in chunks.
        const auto* p = static_cast<const uint8_t*>(e.init->tensor.data());
        size_t left = e.init->tensor.nbytes();
        while (left > 0) {
          const size_t chunk = std::min<size_t>(left, 1u << 30);
          out.WriteRaw(p, static_cast<int>(chunk));
          p += chunk;
          left -= chunk;
        }
      }
      if (out.HadError()) {
        std::remove(tmp.c_str());
        throw ExportError("writing '" + tmp + "' failed", ErrorContext::with_hint("is the disk full?"));
      }
    }
    file.flush();
    if (!file) {
      file.close();
      std::remove(tmp.c_str());
      throw ExportError("writing '" + tmp + "' failed", ErrorContext::with_hint("is the disk full?"));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw ExportError("cannot rename '" + tmp + "' to '" + path + "'");
  }
}

onnx::ModelProto read_model_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ExportError("cannot open '" + path + "'");
  google::protobuf::io::IstreamInputStream raw(&in);
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(std::numeric_limits<int>::max());
  onnx::ModelProto m;
  if (!m.ParseFromCodedStream(&coded)) throw ExportError("'" + path + "' is not a valid ONNX model file");
  return m;
}

CheckResult check_model_file(const std::string& path) {
  onnx::ModelProto m = read_model_file(path);
  try {
    onnx::checker::check_model(m);
    onnx::ShapeInferenceOptions opts(/*check_type=*/true, /*error_mode=*/1, /*data_prop=*/false);
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception& e) {
    throw ExportError("ONNX checker rejects '" + path + "': " + e.what());
  }
  CheckResult r;
  r.nodes = static_cast<size_t>(m.graph().node_size());
  int opset = 0;
  for (const auto& imp : m.opset_import())
    if (imp.domain().empty() || imp.domain() == "ai.onnx") opset = static_cast<int>(imp.version());
  r.summary = "ok: " + std::to_string(r.nodes) + " nodes, " + std::to_string(m.graph().initializer_size()) +
              " initializers, opset " + std::to_string(opset) + ", ir_version " + std::to_string(m.ir_version());
  return r;
}

namespace {
std::string type_str(const onnx::TypeProto& t) { return from_type_proto(t).str(); }

std::string attr_str(const onnx::AttributeProto& a) {
  std::ostringstream os;
  os << a.name() << "=";
  switch (a.type()) {
    case onnx::AttributeProto::INT: os << a.i(); break;
    case onnx::AttributeProto::FLOAT: os << a.f(); break;
    case onnx::AttributeProto::STRING: os << '"' << a.s() << '"'; break;
    case onnx::AttributeProto::INTS:
      os << "[";
      for (int i = 0; i < a.ints_size(); ++i) os << (i ? ", " : "") << a.ints(i);
      os << "]";
      break;
    case onnx::AttributeProto::FLOATS:
      os << "[";
      for (int i = 0; i < a.floats_size(); ++i) os << (i ? ", " : "") << a.floats(i);
      os << "]";
      break;
    case onnx::AttributeProto::TENSOR: {
      Tensor t = from_tensor_proto(a.t());
      os << "<Tensor " << t.describe();
      if (t.numel() <= 8 && t.dtype() != DType::String) {
        os << " {";
        auto v = t.as_doubles();
        for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
        os << "}";
      }
      os << ">";
      break;
    }
    default: os << "<" << onnx::AttributeProto::AttributeType_Name(a.type()) << ">";
  }
  return os.str();
}
}  // namespace

namespace {
void collect_types(const onnx::GraphProto& g, std::map<std::string, std::string>& types) {
  for (const auto& vi : g.input()) types[vi.name()] = type_str(vi.type());
  for (const auto& vi : g.output()) types[vi.name()] = type_str(vi.type());
  for (const auto& vi : g.value_info()) types[vi.name()] = type_str(vi.type());
  for (const auto& n : g.node())
    for (const auto& a : n.attribute())
      if (a.has_g()) collect_types(a.g(), types);
}

// Nodes one per line; a node's sub-graphs (If branches, Loop bodies) follow it, indented.
void print_nodes(std::ostringstream& os, const onnx::GraphProto& g, const std::string& indent,
                 const std::function<std::string(const std::string&)>& typed, const OnnxModel* provenance) {
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    os << indent;
    for (int k = 0; k < n.output_size(); ++k) os << (k ? ", " : "") << typed(n.output(k));
    os << " = " << (n.domain().empty() ? "" : n.domain() + "::") << n.op_type();
    if (n.attribute_size()) {
      os << "[";
      for (int k = 0; k < n.attribute_size(); ++k) os << (k ? ", " : "") << attr_str(n.attribute(k));
      os << "]";
    }
    os << "(";
    for (int k = 0; k < n.input_size(); ++k) os << (k ? ", " : "") << (n.input(k).empty() ? "<none>" : "%" + n.input(k));
    os << ")";
    if (provenance && static_cast<size_t>(i) < provenance->nodes.size()) {
      const auto& o = provenance->nodes[static_cast<size_t>(i)].origin;
      if (!o.torch_op.empty())
        os << "  # " << o.torch_op << " [" << o.pack << "]" << (o.module_path.empty() ? "" : " " + o.module_path);
    } else if (!n.doc_string().empty()) {
      os << "  # " << n.doc_string();
    }
    os << "\n";
    for (const auto& a : n.attribute()) {
      if (!a.has_g()) continue;
      os << indent << "  " << a.name() << " (";
      for (int k = 0; k < a.g().input_size(); ++k) os << (k ? ", " : "") << typed(a.g().input(k).name());
      os << "):\n";
      print_nodes(os, a.g(), indent + "    ", typed, nullptr);
      os << indent << "    return ";
      for (int k = 0; k < a.g().output_size(); ++k) os << (k ? ", " : "") << "%" << a.g().output(k).name();
      os << "\n";
    }
  }
}
}  // namespace

std::string print_graph(const onnx::ModelProto& m, const OnnxModel* provenance) {
  std::ostringstream os;
  const auto& g = m.graph();
  std::map<std::string, std::string> types;
  collect_types(g, types);
  std::unordered_set<std::string> init_names;
  for (const auto& init : g.initializer()) {
    init_names.insert(init.name());
    std::vector<Dim> dims;
    for (auto d : init.dims()) dims.push_back(Dim::fixed(d));
    types[init.name()] = TensorType{static_cast<DType>(init.data_type()), dims}.str();
  }
  if (provenance)
    for (const auto& [name, t] : provenance->value_types) types.emplace(name, type_str(t));
  auto typed = [&](const std::string& name) {
    auto it = types.find(name);
    return "%" + name + (it != types.end() ? " : " + it->second : "");
  };
  os << "graph " << g.name() << " (ir_version " << m.ir_version() << ", opsets:";
  for (const auto& imp : m.opset_import()) os << " " << (imp.domain().empty() ? "ai.onnx" : imp.domain()) << "=" << imp.version();
  os << ")\n  inputs:\n";
  for (const auto& vi : g.input())
    if (!init_names.count(vi.name())) os << "    " << typed(vi.name()) << "\n";
  os << "  initializers: " << g.initializer_size() << "\n";
  for (const auto& init : g.initializer()) os << "    " << typed(init.name()) << "\n";
  os << "  nodes: " << g.node_size() << "\n";
  print_nodes(os, g, "    ", typed, provenance);
  os << "  outputs:\n";
  for (const auto& vi : g.output()) os << "    " << typed(vi.name()) << "\n";
  return os.str();
}

}  // namespace onnxport::core
