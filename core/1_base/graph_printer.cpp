#include <functional>
#include <map>
#include <sstream>
#include <unordered_set>

#include "1_base/attribute_text.h"
#include "onnxport/errors.h"
#include "1_base/graph_printer.h"

namespace onnxport::core {

std::string attribute_text(const onnx::AttributeProto& a) {
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
      // The type and shape from the header; the values only of a small tensor (a file may
      // declare dims of any size over no data).
      const onnx::TensorProto& proto = a.t();
      os << "<Tensor " << dtype_name(static_cast<DType>(proto.data_type())) << "[";
      int64_t numel = 1;
      for (int i = 0; i < proto.dims_size(); ++i) {
        os << (i ? "," : "") << proto.dims(i);
        numel = proto.dims(i) < 0 || numel > 8 ? 9 : numel * proto.dims(i);
      }
      os << "]";
      if (numel <= 8 && proto.data_type() != onnx::TensorProto::STRING &&
          proto.data_location() != onnx::TensorProto::EXTERNAL) {
        try {
          const auto v = from_tensor_proto(proto).as_doubles();
          os << " {";
          for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
          os << "}";
        } catch (const Error&) {
          os << " {malformed}";
        }
      }
      os << ">";
      break;
    }
    default: os << "<" << onnx::AttributeProto::AttributeType_Name(a.type()) << ">";
  }
  return os.str();
}

namespace {
std::string type_str(const onnx::TypeProto& t) { return from_type_proto(t).str(); }

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
      for (int k = 0; k < n.attribute_size(); ++k) os << (k ? ", " : "") << attribute_text(n.attribute(k));
      os << "]";
    }
    os << "(";
    for (int k = 0; k < n.input_size(); ++k)
      os << (k ? ", " : "") << (n.input(k).empty() ? "<none>" : "%" + n.input(k));
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
  for (const auto& imp : m.opset_import())
    os << " " << (imp.domain().empty() ? "ai.onnx" : imp.domain()) << "=" << imp.version();
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
