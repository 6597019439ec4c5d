#include "3_export/3_convert/extra_outputs.h"

#include <cctype>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "1_base/close_matches.h"
#include "onnxport/errors.h"

namespace onnxport::core {

namespace {

const char* const kSpecHint =
    "give a module path as `onnxport export --verbose` shows it after the pack name (e.g. 'layer1.0'), a "
    "TorchScript value name of the model's graph, or an ONNX value name from --verbose";

ConfigError spec_error(const std::string& spec, const std::string& what, const std::string& hint) {
  return ConfigError("--extra-outputs '" + spec + "': " + what, ErrorContext::with_hint(hint));
}

bool in_module(const std::string& node_path, const std::string& module) {
  return node_path.size() >= module.size() && node_path.compare(0, module.size(), module) == 0 &&
         (node_path.size() == module.size() || node_path[module.size()] == '.');
}

// "hidden" for "hidden.3"; a name without a numeric suffix is its own base.
std::string base_name(const std::string& debug_name) {
  const auto dot = debug_name.rfind('.');
  if (dot == std::string::npos || dot + 1 == debug_name.size()) return debug_name;
  for (size_t i = dot + 1; i < debug_name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(debug_name[i]))) return debug_name;
  return debug_name.substr(0, dot);
}

struct Resolved {
  std::string kind;                 // "module", "torchscript value", "onnx value"
  std::vector<std::string> values;  // ONNX value names, in the order the graph computes them
};

// What the top level of the graph holds, for reading specs against it.
class SpecResolver {
 public:
  SpecResolver(const OnnxModel& model, const TorchValueNames& torch_values) : model_(model) {
    for (const auto& in : model.inputs) inputs_.insert(in.name);
    for (const auto& init : model.initializers) initializers_.insert(init.name);
    for (size_t i = 0; i < model.nodes.size(); ++i) {
      const auto& p = model.nodes[i].proto;
      for (const auto& in : p.input()) readers_[in].push_back(i);
      for (const auto& in : captured_names(p)) readers_[in].push_back(i);
      for (const auto& out : p.output())
        if (!out.empty()) producer_[out] = i;
    }
    for (const auto& [value, name] : torch_values) torch_names_.emplace(value->debugName(), name);
  }

  Resolved resolve(const std::string& spec) const {
    if (producer_.count(spec) || inputs_.count(spec) || initializers_.count(spec)) return {"onnx value", {spec}};
    if (auto values = module_outputs(spec); !values.empty()) return {"module", values};
    if (auto it = torch_names_.find(spec); it != torch_names_.end()) return {"torchscript value", {it->second}};
    // TorchScript numbers a Python variable's values: `hidden` is `hidden.1` (and `hidden.3` if reassigned).
    std::vector<std::string> numbered;
    for (const auto& [name, value] : torch_names_)
      if (base_name(name) == spec) numbered.push_back(name);
    if (numbered.size() == 1) return {"torchscript value", {torch_names_.at(numbered[0])}};
    if (numbered.size() > 1)
      throw spec_error(spec,
                       "the model's variable '" + spec + "' holds several TorchScript values (" +
                           quoted_alternatives(numbered) + ")",
                       "name one of them");
    fail_unknown(spec);
  }

  bool is_input(const std::string& value) const { return inputs_.count(value) > 0; }
  bool is_parameter(const std::string& value) const { return initializers_.count(value) > 0; }
  bool is_used(const std::string& name) const {
    return producer_.count(name) || inputs_.count(name) || initializers_.count(name) || readers_.count(name);
  }

 private:
  // Values the module's nodes compute that a node outside it reads, or that the model returns.
  std::vector<std::string> module_outputs(const std::string& path) const {
    std::vector<std::string> values;
    for (size_t i = 0; i < model_.nodes.size(); ++i) {
      if (!in_module(model_.nodes[i].origin.module_path, path)) continue;
      for (const auto& out : model_.nodes[i].proto.output()) {
        if (out.empty()) continue;
        bool leaves = false;
        if (auto it = readers_.find(out); it != readers_.end())
          for (size_t reader : it->second) leaves |= !in_module(model_.nodes[reader].origin.module_path, path);
        for (const auto& graph_out : model_.outputs) leaves |= graph_out.name == out;
        if (leaves) values.push_back(out);
      }
    }
    return values;
  }

  [[noreturn]] void fail_unknown(const std::string& spec) const {
    std::vector<std::string> candidates;  // module paths first: the most likely meaning
    std::unordered_set<std::string> paths;
    for (const auto& node : model_.nodes)
      for (size_t end = 0; end != std::string::npos;) {
        end = node.origin.module_path.find('.', end + 1);
        const std::string path = node.origin.module_path.substr(0, end);
        if (!path.empty() && paths.insert(path).second) candidates.push_back(path);
      }
    for (const auto& [name, value] : torch_names_) candidates.push_back(name);
    for (const auto& node : model_.nodes)
      for (const auto& out : node.proto.output()) candidates.push_back(out);
    const auto near = close_matches(spec, candidates);
    throw spec_error(spec,
                     "no module path, TorchScript value or ONNX value of the graph has this name" +
                         (near.empty() ? std::string() : "; did you mean " + quoted_alternatives(near) + "?"),
                     kSpecHint);
  }

  const OnnxModel& model_;
  std::unordered_set<std::string> inputs_, initializers_;
  std::unordered_map<std::string, std::vector<size_t>> readers_;
  std::unordered_map<std::string, size_t> producer_;
  std::map<std::string, std::string> torch_names_;  // debug name -> ONNX value
};

struct Planned {
  std::string spec, kind, value, output;
};

// Every spec read and checked before the graph changes, so that a failing spec leaves it as it was.
std::vector<Planned> plan(const std::vector<std::string>& specs, const SpecResolver& resolver, const OnnxModel& model) {
  std::map<std::string, std::string> output_of_value;  // value -> the graph output it already is
  for (const auto& out : model.outputs) output_of_value[out.name] = out.name;
  std::map<std::string, std::string> spec_of_value, spec_of_output;
  std::vector<Planned> planned;
  for (const auto& spec : specs) {
    // `--verbose` prints values as %name; a spec copied from it keeps the %.
    const std::string name = spec.size() > 1 && spec[0] == '%' ? spec.substr(1) : spec;
    const Resolved r = resolver.resolve(name);
    for (size_t k = 0; k < r.values.size(); ++k) {
      const std::string& value = r.values[k];
      if (resolver.is_input(value))
        throw spec_error(spec, "'" + value + "' is a graph input; an extra output must be computed by the graph",
                         "name a value the model computes from its inputs");
      if (resolver.is_parameter(value))
        throw spec_error(spec, "'" + value + "' is a parameter (an initializer), not a computed value",
                         "name the module or value that reads it");
      if (auto it = spec_of_value.find(value); it != spec_of_value.end())
        throw spec_error(spec, "names the same value as --extra-outputs '" + it->second + "' ('" + value + "')",
                         "give each value once");
      if (auto it = output_of_value.find(value); it != output_of_value.end())
        throw spec_error(spec, "its value is already graph output '" + it->second + "'",
                         "leave it out: the model returns it already");
      std::string output = r.kind == "onnx value" ? value
                           : r.values.size() == 1 ? name
                                                  : name + ":" + std::to_string(k);
      if (output != value && resolver.is_used(output))
        throw spec_error(spec, "the output would be named '" + output + "', which another value of the graph has",
                         "name the ONNX value itself ('" + value + "')");
      if (auto it = spec_of_output.find(output); it != spec_of_output.end())
        throw spec_error(spec, "gives output '" + output + "', as --extra-outputs '" + it->second + "' does",
                         "give each output once");
      spec_of_value[value] = spec;
      spec_of_output[output] = spec;
      output_of_value[value] = output;
      planned.push_back({spec, r.kind, value, output});
    }
  }
  return planned;
}

// The output's type: ONNX inference's, else the type TorchScript recorded for the value.
GraphIO typed_output(const Planned& p, const OnnxModel& model, const TorchValueNames& torch_values) {
  if (auto it = model.value_types.find(p.output); it != model.value_types.end()) {
    const onnx::TypeProto& t = it->second;
    if (t.has_sequence_type() && t.sequence_type().elem_type().has_tensor_type())
      return GraphIO{p.output, from_type_proto(t.sequence_type().elem_type()), true};
    if (t.has_optional_type() && t.optional_type().elem_type().has_tensor_type()) {
      GraphIO io{p.output, from_type_proto(t.optional_type().elem_type())};
      io.optional = true;
      return io;
    }
    if (t.has_tensor_type() && t.tensor_type().elem_type() != 0) return GraphIO{p.output, from_type_proto(t)};
  }
  for (const auto& [value, name] : torch_values)
    if (name == p.output) {
      TensorType recorded = tensor_type_of(value, false);
      if (recorded.dtype != DType::Undefined) return GraphIO{p.output, recorded};
    }
  throw spec_error(p.spec, "the type of '" + p.value + "' is unknown (ONNX inference could not type it)",
                   "name a value next to it, e.g. the module's input or the next module");
}

}  // namespace

void rename_onnx_value(TorchValueNames& torch_values, const std::string& from, const std::string& to) {
  for (auto& [torch_value, name] : torch_values)
    if (name == from) name = to;
}

std::vector<ExtraOutputReport> add_extra_outputs(const std::vector<std::string>& specs, TorchValueNames& torch_values,
                                                 GraphBuilder& builder, OnnxModel& model) {
  if (specs.empty()) return {};
  const std::vector<Planned> planned = plan(specs, SpecResolver(model, torch_values), model);
  std::vector<ExtraOutputReport> reports;
  for (const auto& p : planned) {
    const auto type = model.value_types.find(p.value);
    CoreValue* value = builder.own(CoreValue::make_tensor(
        p.value, type != model.value_types.end() && type->second.has_tensor_type() ? from_type_proto(type->second)
                                                                                   : TensorType{}));
    builder.name_output(value, p.output);
    rename_onnx_value(torch_values, p.value, p.output);
    GraphIO io = typed_output(p, model, torch_values);
    reports.push_back({p.spec, p.kind, io.name, io.sequence   ? "sequence of " + io.type.str()
                                                       : io.optional ? "optional " + io.type.str()
                                                                     : io.type.str()});
    model.outputs.push_back(std::move(io));
  }
  return reports;
}

}  // namespace onnxport::core
