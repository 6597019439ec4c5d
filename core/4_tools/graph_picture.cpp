// onnxport inspect --dot / --html: a picture of an ONNX file's graph. Nodes sit in nested
// clusters by module path, edges carry their value's type, initializers and Constant nodes are
// listed on the nodes that read them, and If/Loop/Scan bodies are drawn as dashed clusters beside
// their node. Graphviz's dot, run as a subprocess, turns the DOT text into the page's SVG.
#include "onnxport/graph_picture.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "1_base/attribute_text.h"
#include "1_base/input_file.h"
#include "3_export/6_write/model_check.h"
#include "onnxport/errors.h"
#include "1_base/output_file.h"

extern char** environ;

namespace onnxport::core {

namespace {

// ---------------------------------------------------------------------------------------------
// Text for DOT and HTML

// Graphviz refuses input that is not UTF-8 (and ONNX's proto2 strings may hold any bytes).
std::string valid_utf8(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t length = lead < 0x80                    ? 1
                          : lead >= 0xC2 && lead <= 0xDF ? 2
                          : lead >= 0xE0 && lead <= 0xEF ? 3
                          : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                         : 0;
    bool valid = length > 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    if (valid) {
      out.append(text, i, length);
      i += length;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

// A DOT double-quoted string. Newlines become "\n" (a centred line break in labels, a line break
// in tooltips); backslashes are doubled so that a name never reads as an escape such as \N.
std::string dot_string(const std::string& text) {
  std::string out = "\"";
  for (char c : valid_utf8(text)) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
  }
  return out + "\"";
}

std::string html_escaped(const std::string& text) {
  std::string out;
  for (char c : valid_utf8(text)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string count_text(size_t count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

std::string joined(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

// ---------------------------------------------------------------------------------------------
// Where a node came from

// An exported node's doc_string (model_writer.cpp, --provenance):
// "pack=nn op=aten::_convolution module=layer1.0.conv1 at conv.py:459", " at ..." optional.
struct Provenance {
  std::string pack, torch_op, module_path, source;
};

std::optional<Provenance> parse_provenance(const std::string& doc) {
  if (doc.rfind("pack=", 0) != 0) return std::nullopt;
  const auto op = doc.find(" op=");
  const auto module = op == std::string::npos ? op : doc.find(" module=", op);
  if (module == std::string::npos) return std::nullopt;
  Provenance p;
  p.pack = doc.substr(5, op - 5);
  p.torch_op = doc.substr(op + 4, module - op - 4);
  const auto path = module + 8;
  const auto at = doc.find(" at ", path);  // module paths have no spaces; source paths may
  p.module_path = doc.substr(path, at == std::string::npos ? std::string::npos : at - path);
  if (at != std::string::npos) p.source = doc.substr(at + 4);
  return p;
}

// The clusters a node sits in, outermost first: "layer1.0.conv1" -> layer1, layer1.0, layer1.0.conv1.
std::vector<std::string> module_chain_of_path(const std::string& path) {
  std::vector<std::string> chain;
  if (path.empty()) return chain;
  for (auto dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1))
    chain.push_back(path.substr(0, dot));
  chain.push_back(path);
  return chain;
}

// Files without provenance: a torch.onnx-style node name "/layer1/layer1.0/layer1.0.conv1/Conv"
// names its scopes between the first and the last '/'.
std::vector<std::string> module_chain_of_name(const std::string& name) {
  std::vector<std::string> chain;
  const auto first = name.find('/'), last = name.rfind('/');
  if (first == std::string::npos || last == first) return chain;
  std::istringstream scopes(name.substr(first + 1, last - first - 1));
  for (std::string scope; std::getline(scopes, scope, '/');)
    if (!scope.empty()) chain.push_back(scope);
  return chain;
}

// ---------------------------------------------------------------------------------------------
// Value types, as edge labels

using TypeTexts = std::unordered_map<std::string, std::string>;  // value name -> "float32[1,64,56,56]"

std::string type_text(const onnx::TypeProto& t) {
  if (t.has_tensor_type()) return t.tensor_type().elem_type() == 0 ? "" : from_type_proto(t).str();
  if (t.has_sequence_type()) {
    const auto element = type_text(t.sequence_type().elem_type());
    return "sequence<" + (element.empty() ? "?" : element) + ">";
  }
  return "";
}

// Declared types of every graph and sub-graph: inputs, outputs, value_info, initializer dims.
// Types already known are kept.
void collect_declared_types(const onnx::GraphProto& g, TypeTexts& types) {
  for (const auto& init : g.initializer()) {
    std::vector<Dim> dims;
    for (auto d : init.dims()) dims.push_back(Dim::fixed(d));
    types.emplace(init.name(), TensorType{static_cast<DType>(init.data_type()), dims}.str());
  }
  for (const auto* infos : {&g.input(), &g.output(), &g.value_info()})
    for (const auto& vi : *infos) {
      auto text = type_text(vi.type());
      if (!text.empty()) types.emplace(vi.name(), std::move(text));
    }
  for (const auto& n : g.node())
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_declared_types(a.g(), types);
      for (const auto& body : a.graphs()) collect_declared_types(body, types);
    }
}

bool lacks_output_types(const onnx::GraphProto& g, const TypeTexts& types) {
  for (const auto& n : g.node()) {
    for (const auto& out : n.output())
      if (!out.empty() && !types.count(out)) return true;
    for (const auto& a : n.attribute()) {
      if (a.has_g() && lacks_output_types(a.g(), types)) return true;
      for (const auto& body : a.graphs())
        if (lacks_output_types(body, types)) return true;
    }
  }
  return false;
}

// Files from other tools may carry little value_info: ONNX shape inference (on a copy) fills in
// what it can. A model it cannot take keeps those edges unlabelled rather than failing the picture.
void add_inferred_types(const onnx::ModelProto& model, TypeTexts& types) {
  onnx::ModelProto copy = model;
  try {
    refuse_attributes_inference_cannot_take(copy.graph());
    onnx::shape_inference::InferShapes(copy);
  } catch (const std::exception&) {
    return;
  }
  collect_declared_types(copy.graph(), types);
}

TypeTexts value_types(const onnx::ModelProto& model) {
  TypeTexts types;
  collect_declared_types(model.graph(), types);
  if (lacks_output_types(model.graph(), types)) add_inferred_types(model, types);
  return types;
}

// ---------------------------------------------------------------------------------------------
// Schemas: the names of a node's inputs ("W", "B" for Conv) for the weights listed on it

using Opsets = std::map<std::string, int>;  // domain ("" for ai.onnx) -> version

std::string schema_domain(const std::string& domain) { return domain == "ai.onnx" ? "" : domain; }

Opsets opsets_of(const onnx::ModelProto& model) {
  Opsets opsets;
  for (const auto& imp : model.opset_import()) opsets[schema_domain(imp.domain())] = static_cast<int>(imp.version());
  return opsets;
}

const onnx::OpSchema* schema_of(const onnx::NodeProto& n, const Opsets& opsets) {
  const auto domain = schema_domain(n.domain());
  const auto version = opsets.find(domain);
  if (version == opsets.end()) return nullptr;
  return onnx::OpSchemaRegistry::Schema(n.op_type(), version->second, domain);
}

// A node's k-th input or output by its schema's name; a variadic last parameter names the rest.
std::string slot_name(const onnx::OpSchema* schema, bool input, int k) {
  const std::string fallback = (input ? "in" : "out") + std::to_string(k);
  if (!schema) return fallback;
  const auto& params = input ? schema->inputs() : schema->outputs();
  if (params.empty()) return fallback;
  if (static_cast<size_t>(k) < params.size()) return params[static_cast<size_t>(k)].GetName();
  return params.back().GetOption() == onnx::OpSchema::Variadic ? params.back().GetName() : fallback;
}

std::string op_text(const onnx::NodeProto& n) { return (is_standard_domain(n) ? "" : n.domain() + "::") + n.op_type(); }

// Sub-graph attributes: (name, body); a GRAPHS attribute gives "name[k]" for each body.
std::vector<std::pair<std::string, const onnx::GraphProto*>> bodies_of(const onnx::NodeProto& n) {
  std::vector<std::pair<std::string, const onnx::GraphProto*>> bodies;
  for (const auto& a : n.attribute()) {
    if (a.has_g()) bodies.emplace_back(a.name(), &a.g());
    for (int k = 0; k < a.graphs_size(); ++k)
      bodies.emplace_back(a.name() + "[" + std::to_string(k) + "]", &a.graphs(k));
  }
  return bodies;
}

size_t count_nodes(const onnx::GraphProto& g) {
  size_t count = static_cast<size_t>(g.node_size());
  for (const auto& n : g.node())
    for (const auto& body : bodies_of(n)) count += count_nodes(*body.second);
  return count;
}

// ---------------------------------------------------------------------------------------------
// The DOT text

// One call of a module (or a sub-graph body) and what is drawn inside it.
struct Cluster {
  std::string label, tooltip;
  bool body = false;
  int call = 1;           // a module's clusters are numbered by call
  size_t onnx_nodes = 0;  // directly inside
  std::vector<std::string> statements;
  std::vector<std::unique_ptr<Cluster>> children;
  // In the cluster of a whole graph: the module calls its last node was in, outermost first.
  std::vector<Cluster*> open_calls;

  Cluster& add_child() {
    children.push_back(std::make_unique<Cluster>());
    return *children.back();
  }
  size_t total_onnx_nodes() const {
    size_t total = onnx_nodes;
    for (const auto& child : children) total += child->total_onnx_nodes();
    return total;
  }
};

// Constant nodes are listed on the nodes reading them, as initializers are, instead of drawn:
// exports share scalars and shape vectors as Constants, and one read all over the graph (swin_t
// has one with 284 readers) drawn as a node has dot route edges through every rank of the
// picture: with its 55 Constants drawn, dot did not finish swin_t in 15 minutes.
bool listed_not_drawn(const onnx::NodeProto& n) {
  return n.op_type() == "Constant" && is_standard_domain(n) && n.input_size() == 0 && n.output_size() == 1;
}

// The values one graph sees by name: what its nodes and inputs make, its initializers and
// Constants, then those of the graphs around it (a body reads outer values by name).
struct Scope {
  const Scope* outer = nullptr;
  std::unordered_map<std::string, std::string> producers;  // value -> id of the drawn node making it
  std::unordered_set<std::string> initializers;
  std::unordered_map<std::string, const onnx::NodeProto*> constants;

  struct Source {
    const std::string* producer = nullptr;
    bool initializer = false;
    const onnx::NodeProto* constant = nullptr;
    bool listed() const { return initializer || constant; }
  };
  Source source(const std::string& value) const {
    for (const Scope* s = this; s; s = s->outer) {
      if (auto p = s->producers.find(value); p != s->producers.end()) return {&p->second, false, nullptr};
      if (s->initializers.count(value)) return {nullptr, true, nullptr};
      if (auto c = s->constants.find(value); c != s->constants.end()) return {nullptr, false, c->second};
    }
    return {};
  }
};

// Past this many drawn nodes dot's layout time explodes, mostly in network simplex positioning
// over the virtual nodes of edges that cross many ranks. Edge types then become xlabels (placed
// after layout; a label is a node of its own and doubles the ranks) and positioning stops after
// nslimit x nodes iterations. swin_t, 2319 nodes drawn: 329 s as dot's defaults, 90 s with
// xlabels, 9 s with both; DenseNet-121 (368): 6.5 s, 0.6 s with both.
constexpr size_t kLargeGraphNodes = 200;

const char* const kModuleFills[] = {"#f2f5fa", "#e6edf6", "#dae4f1", "#cedbec"};

class Picture {
 public:
  Picture(const onnx::ModelProto& model, const TypeTexts& types) : types_(types), opsets_(opsets_of(model)) {
    draw_main_graph(model.graph());
  }

  std::string dot(const std::string& comment) const {
    const bool large = drawn_nodes_ > kLargeGraphNodes;
    std::ostringstream os;
    os << "// " << valid_utf8(comment) << "\n";
    if (large)
      os << "// " << drawn_nodes_ << " nodes drawn: edge types as xlabels and nslimit=1, so that dot takes seconds\n";
    os << "digraph onnx {\n"
       << "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=10, nodesep=0.25, ranksep=0.3, labeljust=l"
       << (large ? ", nslimit=1" : "") << "]\n"
       << "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", color=\"#4a6fa5\", "
          "fontname=\"Helvetica\", fontsize=10, height=0.3, margin=\"0.1,0.03\"]\n"
       << "  edge [fontname=\"Helvetica\", fontsize=8, fontcolor=\"#555555\", color=\"#7a7a7a\", arrowsize=0.6]\n";
    int clusters = 0;
    write_cluster_contents(os, root_, "  ", 0, clusters);
    for (const auto& [from, to, value] : value_edges_) os << "  " << value_edge(from, to, value, large) << "\n";
    for (const auto& edge : link_edges_) os << "  " << edge << "\n";
    os << "}\n";
    return os.str();
  }

 private:
  void draw_main_graph(const onnx::GraphProto& g) {
    Scope scope;
    for (const auto& init : g.initializer()) scope.initializers.insert(init.name());
    int k = 0;
    for (const auto& in : g.input()) {
      if (scope.initializers.count(in.name())) continue;  // initializers listed as inputs too
      const std::string id = "graph-input-" + std::to_string(k++);
      root_.statements.push_back(value_node(id, "graph-input", "#dff0d8", with_type("input " + in.name(), in.name())));
      scope.producers[in.name()] = id;
    }
    draw_nodes(g, "onnx-node-", root_, scope);
    for (int i = 0; i < g.output_size(); ++i) {
      const std::string id = "graph-output-" + std::to_string(i), &name = g.output(i).name();
      root_.statements.push_back(value_node(id, "graph-output", "#fbe3c8", with_type("output " + name, name)));
      connect(scope, name, id);
    }
  }

  // Registers every node's outputs before drawing, so that edges do not depend on node order.
  void draw_nodes(const onnx::GraphProto& g, const std::string& id_prefix, Cluster& where, Scope& scope) {
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      if (listed_not_drawn(n)) {
        scope.constants[n.output(0)] = &n;
        continue;
      }
      for (const auto& out : n.output())
        if (!out.empty()) scope.producers[out] = id_prefix + std::to_string(i);
    }
    for (int i = 0; i < g.node_size(); ++i)
      if (!listed_not_drawn(g.node(i))) draw_node(g.node(i), id_prefix + std::to_string(i), where, scope);
  }

  void draw_node(const onnx::NodeProto& n, const std::string& id, Cluster& where, const Scope& scope) {
    const auto provenance = parse_provenance(n.doc_string());
    const auto chain = provenance ? module_chain_of_path(provenance->module_path) : module_chain_of_name(n.name());
    Cluster& cluster = call_cluster(where, chain);
    const auto bodies = bodies_of(n);
    cluster.statements.push_back(dot_string(id) + " [id=" + dot_string(id) + ", class=\"onnx-node" +
                                 (bodies.empty() ? "" : " has-subgraph") +
                                 "\", label=" + dot_string(node_label(n, scope, bodies)) +
                                 ", tooltip=" + dot_string(node_tooltip(n, scope, provenance, chain)) +
                                 (bodies.empty() ? "" : ", peripheries=2") + "]");
    ++cluster.onnx_nodes;
    ++drawn_nodes_;
    for (const auto& in : n.input())
      if (!in.empty()) connect(scope, in, id);
    for (const auto& [name, body] : bodies) draw_body(n, id, name, *body, cluster, scope);
  }

  // Nodes go into one cluster per module *call*: a run of consecutive nodes (in the file's order,
  // the order they ran in for an export) inside that module. A module called twice (torchvision's
  // ResNet blocks call self.relu twice) gets two clusters: one cluster holding both calls would
  // make dot put them on adjacent ranks and route the edges between them upward around it.
  Cluster& call_cluster(Cluster& graph_cluster, const std::vector<std::string>& chain) {
    auto& open = graph_cluster.open_calls;
    size_t shared = 0;
    while (shared < open.size() && shared < chain.size() && open[shared]->label == chain[shared]) ++shared;
    open.resize(shared);
    while (open.size() < chain.size()) {
      Cluster& call = (open.empty() ? graph_cluster : *open.back()).add_child();
      call.label = chain[open.size()];
      call.call = ++calls_[call.label];
      open.push_back(&call);
    }
    return open.empty() ? graph_cluster : *open.back();
  }

  // A body as a dashed cluster next to its node: a note node standing for the body's inputs
  // (linked to the node by a dashed edge), its nodes, and a "return" node taking its outputs.
  void draw_body(const onnx::NodeProto& owner, const std::string& owner_id, const std::string& attribute,
                 const onnx::GraphProto& g, Cluster& where, const Scope& outer) {
    Cluster& cluster = where.add_child();
    cluster.body = true;
    cluster.label = attribute + " of " + op_text(owner) + (owner.name().empty() ? "" : " " + owner.name());
    cluster.tooltip = "sub-graph " + cluster.label + ": " + count_text(count_nodes(g), "node");
    Scope scope;
    scope.outer = &outer;
    for (const auto& init : g.initializer()) scope.initializers.insert(init.name());
    const std::string prefix = owner_id + "/" + attribute + "/", inputs_id = prefix + "inputs",
                      return_id = prefix + "return";
    std::vector<std::string> inputs;
    for (const auto& in : g.input()) {
      inputs.push_back(in.name() + ": " + type_or_unknown(in.name()));
      scope.producers[in.name()] = inputs_id;
    }
    cluster.statements.push_back(dot_string(inputs_id) + " [id=" + dot_string(inputs_id) +
                                 ", class=\"subgraph-inputs\", shape=note, fillcolor=\"#fff3cd\", label=" +
                                 dot_string(attribute + (inputs.empty() ? "" : "\n" + joined(inputs, "\n"))) +
                                 ", tooltip=" + dot_string(cluster.tooltip) + "]");
    link_edges_.push_back(dot_string(owner_id) + " -> " + dot_string(inputs_id) +
                          " [class=\"subgraph-link\", style=dashed, label=" + dot_string(attribute) +
                          ", tooltip=" + dot_string(cluster.tooltip) + "]");
    draw_nodes(g, prefix, cluster, scope);
    std::vector<std::string> outputs;
    for (const auto& out : g.output()) outputs.push_back(out.name());
    cluster.statements.push_back(
        value_node(return_id, "subgraph-return", "#fff3cd", "return", "returns " + joined(outputs, ", ")));
    for (const auto& out : outputs) connect(scope, out, return_id);
  }

  // A graph's input or output, or a body's return.
  static std::string value_node(const std::string& id, const std::string& css_class, const std::string& fill,
                                const std::string& label, const std::string& tooltip = {}) {
    return dot_string(id) + " [id=" + dot_string(id) + ", class=" + dot_string(css_class) + ", shape=ellipse" +
           ", fillcolor=" + dot_string(fill) + ", label=" + dot_string(label) +
           ", tooltip=" + dot_string(tooltip.empty() ? label : tooltip) + "]";
  }

  std::string with_type(const std::string& title, const std::string& value) const {
    const auto type = types_.find(value);
    return title + (type == types_.end() ? "" : "\n" + type->second);
  }

  // One edge per value and consumer; listed values (initializers, Constants) get none.
  void connect(const Scope& scope, const std::string& value, const std::string& to) {
    const auto source = scope.source(value);
    if (source.producer && edges_seen_.emplace(*source.producer, to, value).second)
      value_edges_.emplace_back(*source.producer, to, value);
  }

  // Labelled with the value's type: on the edge, or for a large graph as an xlabel placed after
  // layout (see kLargeGraphNodes).
  std::string value_edge(const std::string& from, const std::string& to, const std::string& value, bool large) const {
    const auto type = types_.find(value);
    std::string edge = dot_string(from) + " -> " + dot_string(to) + " [class=\"value\"";
    if (type != types_.end()) edge += std::string(large ? ", xlabel=" : ", label=") + dot_string(type->second);
    return edge + ", tooltip=" + dot_string(value + (type == types_.end() ? "" : " : " + type->second)) + "]";
  }

  static std::string listing_note(const Scope::Source& source) {
    if (source.initializer) return "  (initializer)";
    if (!source.constant) return "";
    std::vector<std::string> attributes;
    for (const auto& a : source.constant->attribute()) attributes.push_back(attribute_text(a));
    return "  (Constant" + (source.constant->name().empty() ? "" : " " + source.constant->name()) + ": " +
           joined(attributes, ", ") + ")";
  }

  std::string type_or_unknown(const std::string& value) const {
    const auto type = types_.find(value);
    return type == types_.end() ? "?" : type->second;
  }

  // The op, then the weights and Constants it reads ("W: float32[64,3,7,7]"), then its sub-graphs.
  std::string node_label(const onnx::NodeProto& n, const Scope& scope,
                         const std::vector<std::pair<std::string, const onnx::GraphProto*>>& bodies) const {
    std::vector<std::string> lines{op_text(n)};
    const auto* schema = schema_of(n, opsets_);
    for (int k = 0; k < n.input_size(); ++k) {
      const auto source = n.input(k).empty() ? Scope::Source{} : scope.source(n.input(k));
      if (source.listed())
        lines.push_back(slot_name(schema, true, k) + ": " + type_or_unknown(n.input(k)) +
                        (source.constant ? " const" : ""));
    }
    if (!bodies.empty()) {
      std::vector<std::string> names;
      for (const auto& body : bodies) names.push_back(body.first);
      lines.push_back("sub-graphs: " + joined(names, ", "));
    }
    return joined(lines, "\n");
  }

  std::string node_tooltip(const onnx::NodeProto& n, const Scope& scope, const std::optional<Provenance>& provenance,
                           const std::vector<std::string>& chain) const {
    std::vector<std::string> lines{"op: " + op_text(n)};
    if (!n.name().empty()) lines.push_back("name: " + n.name());
    if (n.attribute_size()) lines.push_back("attributes:");
    for (const auto& a : n.attribute()) lines.push_back("  " + attribute_text(a));
    const auto* schema = schema_of(n, opsets_);
    lines.push_back("inputs:");
    for (int k = 0; k < n.input_size(); ++k) {
      const auto& value = n.input(k);
      const auto source = scope.source(value);
      lines.push_back("  " + slot_name(schema, true, k) + ": " +
                      (value.empty() ? "<none>" : value + "  " + type_or_unknown(value) + listing_note(source)));
    }
    lines.push_back("outputs:");
    for (int k = 0; k < n.output_size(); ++k)
      lines.push_back("  " + slot_name(schema, false, k) + ": " + n.output(k) + "  " + type_or_unknown(n.output(k)));
    if (provenance) {
      lines.push_back("pack: " + provenance->pack);
      lines.push_back("torch op: " + provenance->torch_op);
      lines.push_back("module: " + (provenance->module_path.empty() ? "(top level)" : provenance->module_path));
      if (!provenance->source.empty()) lines.push_back("source: " + provenance->source);
    } else {
      if (!chain.empty()) lines.push_back("module (from the node name): " + joined(chain, "/"));
      if (!n.doc_string().empty()) lines.push_back("doc: " + n.doc_string());
    }
    return joined(lines, "\n");
  }

  std::string module_tooltip(const Cluster& c) const {
    const int calls = calls_.at(c.label);
    return "module " + c.label +
           (calls > 1 ? " (call " + std::to_string(c.call) + " of " + std::to_string(calls) + ")" : "") + ": " +
           count_text(c.total_onnx_nodes(), "node");
  }

  void write_cluster_contents(std::ostringstream& os, const Cluster& c, const std::string& indent, int depth,
                              int& clusters) const {
    for (const auto& statement : c.statements) os << indent << statement << "\n";
    for (const auto& child : c.children) {
      const int number = clusters++;
      os << indent << "subgraph \"cluster_" << number << "\" {\n"
         << indent << "  graph [id=\"cluster-" << number << "\", ";
      if (child->body) {
        os << "class=\"subgraph\", style=\"dashed,rounded,filled\", fillcolor=\"#fffaf0\", color=\"#b08d3c\", label="
           << dot_string(child->label) << ", tooltip=" << dot_string(child->tooltip);
      } else {
        os << "class=\"module\", style=\"rounded,filled\", color=\"#9fb3cf\", fillcolor=\""
           << kModuleFills[depth % std::size(kModuleFills)] << "\", label=" << dot_string(child->label)
           << ", tooltip=" << dot_string(module_tooltip(*child));
      }
      os << "]\n";
      write_cluster_contents(os, *child, indent + "  ", child->body ? depth : depth + 1, clusters);
      os << indent << "}\n";
    }
  }

  const TypeTexts& types_;
  const Opsets opsets_;
  Cluster root_;
  std::map<std::string, int> calls_;  // module path -> clusters drawn for it
  size_t drawn_nodes_ = 0;
  std::vector<std::tuple<std::string, std::string, std::string>> value_edges_;  // from, to, value
  std::set<std::tuple<std::string, std::string, std::string>> edges_seen_;
  std::vector<std::string> link_edges_;  // a node to its sub-graphs
};

std::string opsets_text(const onnx::ModelProto& model) {
  std::vector<std::string> parts;
  for (const auto& imp : model.opset_import())
    parts.push_back((schema_domain(imp.domain()).empty() ? "" : imp.domain() + " ") + std::to_string(imp.version()));
  return parts.empty() ? "?" : joined(parts, ", ");
}

std::string dot_of(const onnx::ModelProto& model, const TypeTexts& types, const std::string& file_name) {
  return Picture(model, types)
      .dot(file_name + ": opset " + opsets_text(model) + ", " + count_text(count_nodes(model.graph()), "node"));
}

// ---------------------------------------------------------------------------------------------
// Running dot

// A file without a name (memfd): the DOT text goes to dot's stdin and its SVG and messages come
// back through these rather than pipes, so neither process can block on the other.
class MemoryFile {
 public:
  MemoryFile() : fd_(::memfd_create("onnxport-graph", MFD_CLOEXEC)) {
    if (fd_ < 0) throw ExportError(std::string("cannot create a memory file for Graphviz: ") + std::strerror(errno));
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  int fd() const { return fd_; }

  // Writes `text` and rewinds, for a reader starting at its beginning.
  void fill(const std::string& text) {
    for (size_t done = 0; done < text.size();) {
      const auto n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw ExportError(std::string("cannot write a memory file for Graphviz: ") + std::strerror(errno));
      done += static_cast<size_t>(n);
    }
    ::lseek(fd_, 0, SEEK_SET);
  }

  std::string contents() const {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return {};
    std::string text(static_cast<size_t>(st.st_size), '\0');
    size_t done = 0;
    while (done < text.size()) {
      const auto n = ::pread(fd_, text.data() + done, text.size() - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    text.resize(done);
    return text;
  }

 private:
  int fd_;
};

std::string first_line(const std::string& text) {
  const auto start = text.find_first_not_of(" \n");
  if (start == std::string::npos) return "no message";
  return text.substr(start, text.find('\n', start) - start);
}

// Exit status of `dot -Tsvg` (found on PATH) run on `input`; its stdout and stderr.
struct DotRun {
  int status = 0;
  std::string out, err;
};

DotRun run_dot(const std::string& input, const std::string& onnx_path) {
  MemoryFile in, out, err;
  in.fill(input);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd(), 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd(), 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd(), 2);
  std::string program = "dot", format = "-Tsvg";
  char* argv[] = {program.data(), format.data(), nullptr};
  pid_t pid = 0;
  const int spawn_error = ::posix_spawnp(&pid, "dot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error == ENOENT)
    throw ExportError("cannot draw '" + onnx_path + "': Graphviz's dot is not on PATH",
                      ErrorContext::with_hint("install Graphviz (apt-get install graphviz)"));
  if (spawn_error)
    throw ExportError("cannot run Graphviz's dot for '" + onnx_path + "': " + std::strerror(spawn_error),
                      ErrorContext::with_hint("check the dot found on PATH (apt-get install graphviz)"));
  DotRun run;
  while (::waitpid(pid, &run.status, 0) < 0 && errno == EINTR) {
  }
  run.out = out.contents();
  run.err = err.contents();
  return run;
}

std::string svg_of(const std::string& dot_text, const std::string& onnx_path) {
  const auto run = run_dot(dot_text, onnx_path);
  if (WIFSIGNALED(run.status))
    throw ExportError("Graphviz's dot was killed by signal " + std::to_string(WTERMSIG(run.status)) + " drawing '" +
                      onnx_path + "'");
  if (!WIFEXITED(run.status) || WEXITSTATUS(run.status) != 0 || run.out.find("<svg") == std::string::npos)
    throw ExportError("Graphviz's dot failed to draw '" + onnx_path + "': " + first_line(run.err),
                      ErrorContext::with_hint("onnxport inspect --dot shows the text dot was given"));
  return run.out;
}

// dot's SVG inlined in the page: without what precedes <svg> (XML prolog, doctype, comment) and
// without its namespace declarations, which HTML implies for inline <svg> and xlink:
// attributes, so that the page names no URL at all.
std::string inline_svg(const std::string& svg) {
  std::string out = svg.substr(svg.find("<svg"));
  const auto tag_end = out.find('>');
  for (const std::string declaration :
       {" xmlns=\"http://www.w3.org/2000/svg\"", " xmlns:xlink=\"http://www.w3.org/1999/xlink\""}) {
    const auto at = out.find(declaration);
    if (at < tag_end) out.erase(at, declaration.size());
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The HTML page

const char* const kPageStyle = R"(
body { margin: 0; font: 14px/1.4 Helvetica, Arial, sans-serif; color: #222; background: #fff; }
header { padding: 10px 16px; border-bottom: 1px solid #ccd; background: #f7f8fb; }
header h1 { margin: 0 0 4px; font-size: 18px; }
header p { margin: 2px 0; }
header .help { color: #666; font-size: 12px; }
header button { margin-top: 4px; }
#graph { overflow: auto; padding: 8px; }
#graph.fit svg { width: 100%; height: auto; }
#graph g.node { cursor: pointer; }
#graph g.node:hover > g > a > :is(polygon, ellipse, path) { stroke-width: 2.5; }
#graph g.node.selected :is(polygon, ellipse, path) { stroke: #d9534f; stroke-width: 3; }
#details { position: fixed; right: 12px; bottom: 12px; max-width: 46em; max-height: 45vh; overflow: auto;
  background: #fffffb; border: 1px solid #bbb; border-radius: 4px; box-shadow: 0 2px 8px rgba(0,0,0,.2); }
#details pre { margin: 0; padding: 8px 10px; font-size: 12px; white-space: pre-wrap; }
)";

// Each node's tooltip (dot writes it as xlink:title on an <a>) moves to the node's <title>, which
// every browser shows on hover; a click shows it in a panel, where it can be copied.
const char* const kPageScript = R"(
(function () {
  var details = document.getElementById('details');
  var text = details.querySelector('pre');
  var selected = null;
  document.querySelectorAll('#graph g.node, #graph g.cluster, #graph g.edge').forEach(function (g) {
    var a = g.querySelector('a');
    var tip = a && a.getAttribute('xlink:title');
    if (!tip) return;
    a.removeAttribute('xlink:title');
    var title = g.querySelector('title');
    if (title) title.textContent = tip;
    if (!g.classList.contains('node')) return;
    g.addEventListener('click', function () {
      if (selected) selected.classList.remove('selected');
      selected = g;
      g.classList.add('selected');
      text.textContent = tip;
      details.hidden = false;
    });
  });
  document.getElementById('fit').addEventListener('click', function () {
    document.getElementById('graph').classList.toggle('fit');
  });
})();
)";

std::string values_text(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values,
                        const std::unordered_set<std::string>& skip, const TypeTexts& types) {
  std::vector<std::string> parts;
  for (const auto& vi : values) {
    if (skip.count(vi.name())) continue;
    const auto type = types.find(vi.name());
    parts.push_back(vi.name() + (type == types.end() ? "" : ": " + type->second));
  }
  return parts.empty() ? "none" : joined(parts, ", ");
}

std::string page_header(const onnx::ModelProto& model, const TypeTexts& types, const std::string& file_name) {
  const auto& g = model.graph();
  std::unordered_set<std::string> initializers;
  for (const auto& init : g.initializer()) initializers.insert(init.name());
  const size_t nodes = count_nodes(g);
  std::string facts = "opset " + opsets_text(model) + " · ir_version " + std::to_string(model.ir_version());
  if (!model.producer_name().empty())
    facts += " · producer " + model.producer_name() +
             (model.producer_version().empty() ? "" : " " + model.producer_version());
  facts += " · " + count_text(static_cast<size_t>(g.node_size()), "node");
  if (nodes > static_cast<size_t>(g.node_size()))
    facts += " (+" + std::to_string(nodes - static_cast<size_t>(g.node_size())) + " in sub-graphs)";
  facts += " · " + count_text(static_cast<size_t>(g.initializer_size()), "initializer");
  return "<header>\n<h1>" + html_escaped(file_name) + "</h1>\n<p class=\"facts\">" + html_escaped(facts) +
         "</p>\n<p class=\"inputs\"><b>inputs</b> " + html_escaped(values_text(g.input(), initializers, types)) +
         "</p>\n<p class=\"outputs\"><b>outputs</b> " + html_escaped(values_text(g.output(), {}, types)) +
         "</p>\n<p class=\"help\">Boxes are ONNX nodes, listing the weights and Constants they read; clusters are "
         "the modules they came from; edges carry their value's type. Hover or click a node for its attributes "
         "and provenance.</p>\n"
         "<button id=\"fit\" type=\"button\">fit to width / actual size</button>\n</header>\n";
}

std::string html_page(const onnx::ModelProto& model, const TypeTexts& types, const std::string& file_name,
                      const std::string& svg) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + html_escaped(file_name) +
         " — onnxport</title>\n<style>" + kPageStyle + "</style>\n</head>\n<body>\n" +
         page_header(model, types, file_name) + "<main id=\"graph\">\n" + inline_svg(svg) +
         "</main>\n<aside id=\"details\" hidden><pre></pre></aside>\n<script>" + kPageScript +
         "</script>\n</body>\n</html>\n";
}

// check_output_path's checks, with hints that speak of an HTML page rather than an export.
void check_html_path(const std::string& html_path, const std::string& onnx_path) {
  const auto refuse = [&](const std::string& problem, const std::string& hint) {
    throw ConfigError("the HTML file '" + html_path + "' " + problem, ErrorContext::with_hint(hint));
  };
  if (html_path.empty()) refuse("is empty", "give a file name such as graph.html");
  struct stat st {};
  if (::stat(html_path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    refuse("is a directory", "give a file name, e.g. " + html_path + "/graph.html");
  if (same_file(html_path, onnx_path)) refuse("is the ONNX file itself", "give another file name, e.g. graph.html");
  check_output_path(html_path, {}, "the HTML file");
}

}  // namespace

}  // namespace onnxport::core

namespace onnxport {

std::string graph_dot(const std::string& onnx_path) {
  const auto model = core::read_model_file(onnx_path);
  return core::dot_of(model, core::value_types(model), core::file_name_of(onnx_path));
}

void write_graph_html(const std::string& onnx_path, const std::string& html_path) {
  core::check_html_path(html_path, onnx_path);
  const auto model = core::read_model_file(onnx_path);
  const auto types = core::value_types(model);
  const auto file_name = core::file_name_of(onnx_path);
  const auto svg = core::svg_of(core::dot_of(model, types, file_name), onnx_path);
  core::OutputFile out(html_path);
  out.stream() << core::html_page(model, types, file_name, svg);
  out.finish();
  core::OutputFile::commit_all({&out});
}

}  // namespace onnxport
