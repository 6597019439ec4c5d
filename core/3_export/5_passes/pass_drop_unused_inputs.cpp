#include <unordered_set>

#include "3_export/5_passes/passes.h"

namespace onnxport::core {

ShapeReads record_shape_reads(const OnnxModel& model) {
  ShapeReads reads;
  const auto types = known_types(model);
  for (const auto& node : model.nodes) {
    const auto& p = node.proto;
    std::vector<std::string> inputs(p.input().begin(), p.input().end());
    for (const auto& out : p.output()) reads.made_from[out] = inputs;
    if (!p.domain().empty() || p.op_type() != "Shape" || p.input_size() != 1 || p.output_size() != 1) continue;
    // torch.onnx's JIT peephole replaces aten::size of a tensor of known shape by a constant
    // before any Shape node exists.
    if (node.origin.torch_op == "aten::size") continue;
    auto type = types.find(p.input(0));
    const bool scalar = type != types.end() && type->second.rank() == 0;
    reads.shapes.push_back({p.output(0), p.input(0), scalar});
  }
  return reads;
}

namespace {

// The graph inputs `value` was computed from, in the graph the reads were recorded in.
void add_inputs_behind(const std::string& value, const ShapeReads& reads, std::unordered_set<std::string>& seen,
                       std::unordered_set<std::string>& inputs) {
  std::vector<std::string> pending{value};
  while (!pending.empty()) {
    std::string name = std::move(pending.back());
    pending.pop_back();
    if (name.empty() || !seen.insert(name).second) continue;
    auto made = reads.made_from.find(name);
    if (made == reads.made_from.end()) {
      inputs.insert(name);  // a graph input or an initializer: only inputs are looked up
      continue;
    }
    pending.insert(pending.end(), made->second.begin(), made->second.end());
  }
}

// The Shape outputs that a node torch.onnx leaves in the graph reads: torch.onnx folds every node
// whose inputs are constants or shapes of static tensors, but never a Shape node itself.
std::unordered_set<std::string> shapes_read_by_unfolded_nodes(const ShapeReads& reads, const OnnxModel& model) {
  std::unordered_set<std::string> shapes, constants, read;
  for (const auto& shape : reads.shapes) shapes.insert(shape.output);
  for (const auto& init : model.initializers) constants.insert(init.name);
  for (const auto& node : model.nodes)
    if (node.proto.domain().empty() && node.proto.op_type() == "Constant") constants.insert(node.proto.output(0));
  for (const auto& out : model.outputs)
    if (shapes.count(out.name)) read.insert(out.name);
  for (const auto& node : model.nodes) {
    const auto& p = node.proto;
    bool reads_variable = false;
    for (const auto& in : p.input()) reads_variable |= !in.empty() && !constants.count(in) && !shapes.count(in);
    for (const auto& in : p.input())
      if (shapes.count(in) && reads_variable) read.insert(in);
    for (const auto& in : captured_names(p))
      if (shapes.count(in)) read.insert(in);
  }
  return read;
}

}  // namespace

std::vector<std::string> drop_unused_inputs(OnnxModel& model, const ShapeReads& before_folding) {
  const ValueUses uses(model);
  const auto kept_shapes = shapes_read_by_unfolded_nodes(before_folding, model);
  std::unordered_set<std::string> seen, behind_kept_shapes;
  // torch.onnx knows no value for the shape of a 0-d tensor, so nothing read from one folds.
  for (const auto& shape : before_folding.shapes)
    if (shape.of_scalar || kept_shapes.count(shape.output))
      add_inputs_behind(shape.input, before_folding, seen, behind_kept_shapes);
  std::vector<std::string> dropped;
  std::vector<GraphIO> kept;
  const auto opset = model.opset_imports.find("");
  const bool has_optional_types = opset != model.opset_imports.end() && opset->second >= 15;
  for (auto& input : model.inputs) {
    const bool read = uses.count(input.name) > 0 || behind_kept_shapes.count(input.name) > 0;
    if (input.keep || read) {
      // Nothing reads it: ONNX Runtime may be given it or not.
      if (!read && input.declared_optional && has_optional_types && !input.sequence) input.optional = true;
      kept.push_back(std::move(input));
      continue;
    }
    dropped.push_back(input.name);
    model.value_types.erase(input.name);
  }
  model.inputs = std::move(kept);
  return dropped;
}

}  // namespace onnxport::core
