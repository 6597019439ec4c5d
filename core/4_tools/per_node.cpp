#include "4_tools/per_node.h"

#include "4_tools/tensor_compare.h"

namespace onnxport::core {

namespace {

// The node's module: from its provenance doc_string ("... module=layer1.0 ...") when the file
// has one, else from a name onnxport gave it ("/layer1/layer1.0/Conv").
std::string module_of(const onnx::NodeProto& node) {
  const std::string& doc = node.doc_string();
  if (auto at = doc.find("module="); at != std::string::npos) {
    const auto start = at + 7;
    return doc.substr(start, doc.find(' ', start) - start);
  }
  const std::string& name = node.name();
  const auto last = name.rfind('/');
  if (name.empty() || name[0] != '/' || last == 0 || last == std::string::npos) return "";
  const auto previous = name.rfind('/', last - 1);
  return name.substr(previous + 1, last - previous - 1);
}

// The top-level nodes a value is computed from, back to values that were compared (and agreed),
// graph inputs and initializers: "Add '/blocks/blocks.2/Add' in module 'blocks.2'", in graph order.
std::vector<std::string> uncompared_sources(const onnx::NodeProto& diverging, const onnx::GraphProto& graph,
                                            const std::unordered_map<std::string, bool>& compared) {
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const auto& out : graph.node(i).output()) producer[out] = i;
  std::vector<bool> suspect(graph.node_size(), false);
  std::vector<std::string> pending(diverging.input().begin(), diverging.input().end());
  while (!pending.empty()) {
    const std::string value = pending.back();
    pending.pop_back();
    auto made_by = producer.find(value);
    if (made_by == producer.end() || compared.count(value) || suspect[made_by->second]) continue;
    suspect[made_by->second] = true;
    const auto& node = graph.node(made_by->second);
    pending.insert(pending.end(), node.input().begin(), node.input().end());
  }
  std::vector<std::string> sources;
  for (int i = 0; i < graph.node_size(); ++i) {
    if (!suspect[i]) continue;
    const auto& node = graph.node(i);
    if (node.op_type() == "Constant") continue;
    const std::string module = module_of(node);
    sources.push_back(node.op_type() + " '" + node.name() + "'" +
                      (module.empty() ? "" : " in module '" + module + "'"));
  }
  return sources;
}

}  // namespace

TorchReference record_torch_reference(const PreparedGraph& prepared,
                                      const std::vector<std::pair<const torch::jit::Value*, std::string>>& value_names,
                                      const OnnxModel& model) {
  std::unordered_map<std::string, const OnnxNode*> origin_of;
  for (const auto& node : model.nodes)
    for (const auto& out : node.proto.output()) origin_of[out] = &node;
  std::unordered_map<const torch::jit::Value*, std::string> onnx_name_of;
  for (const auto& [value, name] : value_names)
    if (origin_of.count(name)) onnx_name_of[value] = name;  // a node's output, not a constant or input

  std::vector<c10::IValue> inputs;
  if (prepared.self) inputs.push_back(prepared.self->_ivalue());
  inputs.insert(inputs.end(), prepared.example_tensors.begin(), prepared.example_tensors.end());
  TorchReference reference;
  for (auto& [value, tensor] : run_and_collect(*prepared.graph, inputs, /*copy_values=*/true)) {
    auto name = onnx_name_of.find(value);
    if (name == onnx_name_of.end()) continue;
    // A later TorchScript value converted to the same ONNX value (an in-place op's output) wins.
    const OnnxNode& node = *origin_of.at(name->second);
    reference[name->second] = ReferenceValue{tensor, node.origin, node.proto.op_type()};
  }
  return reference;
}

std::vector<NodeCheck> compare_per_node(const eval::ModelEvaluator& evaluator, const onnx::GraphProto& graph,
                                        const std::vector<eval::EvalValue>& inputs, const TorchReference& reference,
                                        double rtol, double atol) {
  std::vector<NodeCheck> checks;
  std::unordered_map<std::string, bool> compared;  // value -> agreed
  bool diverged = false;
  evaluator.run(inputs, [&](const onnx::NodeProto& node, const std::vector<eval::EvalValue>& outputs) {
    for (int i = 0; i < node.output_size() && i < static_cast<int>(outputs.size()); ++i) {
      auto expected = reference.find(node.output(i));
      if (expected == reference.end() || outputs[i].is_sequence() || !outputs[i].tensor.defined()) continue;
      const TensorDifference d = compare_tensors(outputs[i].tensor, expected->second.value, rtol, atol);
      const NodeOrigin& origin = expected->second.origin;
      const std::string pack = node.op_type() == expected->second.op_type ? origin.pack : "";
      checks.push_back(NodeCheck{node.name(), node.op_type(), node.output(i), d.type, origin.torch_op, pack,
                                 origin.module_path, origin.source, d.max_abs_error, d.max_rel_error, d.ok, d.problem});
      if (!d.ok && !diverged) checks.back().uncompared_sources = uncompared_sources(node, graph, compared);
      diverged = diverged || !d.ok;
      compared[node.output(i)] = d.ok;
    }
  });
  return checks;
}

}  // namespace onnxport::core
