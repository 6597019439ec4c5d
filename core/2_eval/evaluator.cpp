#include "2_eval/evaluator.h"

#include <c10/util/Exception.h>

#include <fstream>
#include <unordered_map>

#include "1_base/external_data.h"
#include "2_eval/aten_kernels.h"

namespace onnxport::core::eval {

namespace {

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

std::string node_label(const onnx::NodeProto& node) {
  std::string label = node.name().empty() ? "a " + node.op_type() + " node" : "node '" + node.name() + "'";
  label += " (" + node.op_type();
  if (!is_default_domain(node.domain())) label += ", domain " + node.domain();
  return label + ")";
}

// Every node of a graph and of its sub-graphs, depth first.
void for_each_node(const onnx::GraphProto& graph, const std::function<void(const onnx::NodeProto&)>& fn) {
  for (const auto& node : graph.node()) {
    fn(node);
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) for_each_node(attr.g(), fn);
      for (const auto& g : attr.graphs()) for_each_node(g, fn);
    }
  }
}

}  // namespace

namespace {

at::Tensor read_initializer(const onnx::TensorProto& t, const std::string& base_dir) {
  if (t.data_location() != onnx::TensorProto::EXTERNAL) return tensor_from_proto(t);
  const ExternalDataRef data = resolve_external_data(t, base_dir);
  std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
  const at::ScalarType type = scalar_type_of_onnx(t.data_type());
  if (const std::string why = too_large_for_memory(shape, type); !why.empty())
    throw EvalError("initializer '" + t.name() + "': " + why);
  at::Tensor out = at::empty(shape, at::TensorOptions().dtype(type));
  const auto nbytes = static_cast<int64_t>(out.nbytes());
  if (data.length >= 0 && data.length != nbytes)
    throw EvalError("initializer '" + t.name() + "': its external data is " + std::to_string(data.length) +
                    " bytes, its type needs " + std::to_string(nbytes));
  std::ifstream in(data.path, std::ios::binary);
  if (!in) throw EvalError("initializer '" + t.name() + "': cannot open its external data file '" + data.path + "'");
  in.seekg(data.offset);
  in.read(static_cast<char*>(out.data_ptr()), nbytes);
  if (in.gcount() != nbytes)
    throw EvalError("initializer '" + t.name() + "': external data file '" + data.path + "' ends before offset " +
                    std::to_string(data.offset + nbytes));
  return out;
}

}  // namespace

at::Tensor load_initializer(const onnx::TensorProto& t, const std::string& base_dir) {
  // A corrupt initializer (data of the wrong size, a type ATen lacks) is the file's fault.
  try {
    return read_initializer(t, base_dir);
  } catch (const EvalError&) {
    throw;
  } catch (const KernelError& e) {
    throw EvalError(std::string("initializer '") + t.name() + "': " + e.what());
  } catch (const c10::Error& e) {
    throw EvalError("initializer '" + t.name() + "': ATen: " + e.what_without_backtrace());
  } catch (const std::exception& e) {  // ATen's checks reach here as std::runtime_error under some builds
    const std::string what = e.what();
    throw EvalError("initializer '" + t.name() + "': " + what.substr(0, what.find('\n')));
  }
}

// The values visible while a graph runs: its own, then those of the graphs around it.
struct ModelEvaluator::Scope {
  const Scope* outer = nullptr;
  std::unordered_map<std::string, EvalValue> values;

  const EvalValue* find(const std::string& name) const {
    for (const Scope* s = this; s; s = s->outer)
      if (auto it = s->values.find(name); it != s->values.end()) return &it->second;
    return nullptr;
  }
};

ModelEvaluator::ModelEvaluator(const onnx::ModelProto& model, std::string base_dir, DomainKernelLookup other_domains)
    : model_(model), base_dir_(std::move(base_dir)), other_domains_(std::move(other_domains)) {
  for (const auto& op : model.opset_import()) opsets_[is_default_domain(op.domain()) ? "" : op.domain()] = op.version();
  const auto& graph = model.graph();
  for (const auto& init : graph.initializer()) initializers_[init.name()] = load_initializer(init, base_dir_);
  for (const auto& in : graph.input())
    if (!initializers_.count(in.name())) input_names_.push_back(in.name());
  for (const auto& out : graph.output()) output_names_.push_back(out.name());
}

int ModelEvaluator::opset_of(const std::string& domain) const {
  auto it = opsets_.find(is_default_domain(domain) ? "" : domain);
  return it == opsets_.end() ? 0 : it->second;
}

const Kernel& ModelEvaluator::kernel_for(const onnx::NodeProto& node) const {
  if (is_default_domain(node.domain())) {
    const auto& table = standard_kernels();
    auto it = table.find(node.op_type());
    if (it == table.end())
      throw EvalError(node_label(node) + ": the evaluator has no kernel for ONNX op " + node.op_type());
    const int opset = opset_of("");
    if (opset < it->second.since_opset)
      throw EvalError(node_label(node) + ": the evaluator implements " + node.op_type() + " from opset " +
                      std::to_string(it->second.since_opset) + ", the model uses opset " + std::to_string(opset));
    if (!implements_version_at(node.op_type(), it->second, opset))
      throw EvalError(node_label(node) + ": the evaluator implements " + node.op_type() + " up to version " +
                      std::to_string(it->second.through_version) + "; the model's opset " + std::to_string(opset) +
                      " has " + node.op_type() + "-" + std::to_string(onnx_version_at(node.op_type(), opset)));
    return it->second.run;
  }
  if (node.domain() == kAtenFallbackDomain && node.op_type() == "ATen") return aten_fallback_kernel();
  if (other_domains_)
    if (const Kernel* k = other_domains_(node.domain(), node.op_type())) return *k;
  throw EvalError(node_label(node) + ": no evaluator for op '" + node.op_type() + "' of domain '" + node.domain() +
                  "' (an op pack can register one for its custom ops)");
}

void ModelEvaluator::check_supported() const {
  const auto missing = unsupported_nodes();
  if (missing.empty()) return;
  std::string list;
  bool custom = false;
  for (const auto& m : missing) {
    list += (list.empty() ? "" : "; ") + m;
    custom = custom || m.find(" (") != std::string::npos;
  }
  throw EvalError("no kernel for " + list +
                  (custom ? " (the op pack that emits a custom-domain op can register an evaluator for it: give its "
                            "--plugin-dir)"
                          : ""));
}

std::vector<std::string> ModelEvaluator::unsupported_nodes() const {
  std::vector<std::string> missing;
  for_each_node(model_.graph(), [&](const onnx::NodeProto& node) {
    try {
      kernel_for(node);
    } catch (const EvalError&) {
      const std::string entry = node.op_type() + (is_default_domain(node.domain()) ? "" : " (" + node.domain() + ")") +
                                " at opset " + std::to_string(opset_of(node.domain()));
      if (std::find(missing.begin(), missing.end(), entry) == missing.end()) missing.push_back(entry);
    }
  });
  return missing;
}

std::vector<EvalValue> ModelEvaluator::run(const std::vector<EvalValue>& inputs, const NodeObserver& observer) const {
  if (inputs.size() != input_names_.size())
    throw EvalError("the model has " + std::to_string(input_names_.size()) + " inputs, " +
                    std::to_string(inputs.size()) + " were given");
  std::map<std::string, EvalValue> bound;
  for (size_t i = 0; i < inputs.size(); ++i) bound[input_names_[i]] = inputs[i];
  Scope root;
  for (const auto& [name, value] : initializers_) root.values.emplace(name, value);
  return run_graph(model_.graph(), &root, bound, observer ? &observer : nullptr);
}

std::vector<EvalValue> ModelEvaluator::run_graph(const onnx::GraphProto& graph, const Scope* outer,
                                                 const std::map<std::string, EvalValue>& bound,
                                                 const NodeObserver* observer) const {
  Scope scope;
  scope.outer = outer;
  if (&graph != &model_.graph())  // the model's own initializers were loaded once, into the root scope
    for (const auto& init : graph.initializer()) scope.values[init.name()] = load_initializer(init, base_dir_);
  for (const auto& [name, value] : bound) scope.values[name] = value;
  auto run_subgraph = [&](const onnx::GraphProto& body, const std::vector<EvalValue>& args) {
    if (static_cast<int>(args.size()) != body.input_size())
      throw KernelError("sub-graph '" + body.name() + "' takes " + std::to_string(body.input_size()) + " inputs, " +
                        std::to_string(args.size()) + " were given");
    std::map<std::string, EvalValue> args_bound;
    for (size_t i = 0; i < args.size(); ++i) args_bound[body.input(static_cast<int>(i)).name()] = args[i];
    return run_graph(body, &scope, args_bound, nullptr);
  };
  const int opset = opset_of("");
  for (const auto& node : graph.node()) {
    std::vector<EvalValue> inputs;
    inputs.reserve(node.input_size());
    for (const auto& name : node.input()) {
      if (name.empty()) {
        inputs.emplace_back();
        continue;
      }
      const EvalValue* v = scope.find(name);
      if (!v) throw EvalError(node_label(node) + ": input '" + name + "' is not computed before it");
      inputs.push_back(*v);
    }
    const Kernel& kernel = kernel_for(node);
    std::vector<EvalValue> outputs;
    try {
      outputs = kernel(KernelContext(node, is_default_domain(node.domain()) ? opset : opset_of(node.domain()), inputs,
                                     run_subgraph));
    } catch (const KernelError& e) {
      throw EvalError(node_label(node) + ": " + e.what());
    } catch (const EvalError&) {
      throw;
    } catch (const c10::Error& e) {
      throw EvalError(node_label(node) + ": ATen: " + e.what_without_backtrace());
    } catch (const std::exception& e) {
      throw EvalError(node_label(node) + ": " + e.what());
    }
    for (int i = 0; i < node.output_size(); ++i) {
      if (node.output(i).empty()) continue;
      if (static_cast<size_t>(i) >= outputs.size())
        throw EvalError(node_label(node) + ": the kernel computed " + std::to_string(outputs.size()) +
                        " outputs, the node names " + std::to_string(node.output_size()));
      scope.values[node.output(i)] = outputs[i];
    }
    if (observer) (*observer)(node, outputs);
  }
  std::vector<EvalValue> results;
  for (const auto& out : graph.output()) {
    const EvalValue* v = scope.find(out.name());
    if (!v) throw EvalError("graph output '" + out.name() + "' is never computed");
    results.push_back(*v);
  }
  return results;
}

}  // namespace onnxport::core::eval
