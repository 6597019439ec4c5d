#include <optional>

#include "3_export/5_passes/passes.h"

namespace onnxport::core {

namespace {

// A Concat's axis; nothing for any other node (or a Concat without one).
std::optional<int64_t> concat_axis(const onnx::NodeProto& node) {
  if (node.op_type() != "Concat" || !node.domain().empty()) return std::nullopt;
  const auto* axis = find_attribute(node, "axis");
  return axis ? std::optional<int64_t>(axis->i()) : std::nullopt;
}

}  // namespace

size_t merge_concats(OnnxModel& model) {
  const ValueUses uses(model);
  size_t merged = 0;
  // In graph order, so that a chain of nested Concats joins into the last: each inner one has
  // already taken in the Concats it read when an outer one takes its inputs.
  for (auto& node : model.nodes) {
    onnx::NodeProto& outer = node.proto;
    const std::optional<int64_t> axis = concat_axis(outer);
    if (!axis) continue;
    google::protobuf::RepeatedPtrField<std::string> inputs;
    bool joined = false;
    for (const auto& in : outer.input()) {
      const auto p = uses.producer.find(in);
      const onnx::NodeProto* inner = p == uses.producer.end() ? nullptr : &model.nodes[p->second].proto;
      // The same axis value (a negative axis and its positive twin stay apart: the rank may be
      // unknown), and the outer Concat its only reader.
      if (inner && concat_axis(*inner) == axis && uses.count(in) == 1) {
        for (const auto& x : inner->input()) *inputs.Add() = x;
        joined = true;
        ++merged;
      } else {
        *inputs.Add() = in;
      }
    }
    if (joined) *outer.mutable_input() = std::move(inputs);
  }
  return merged;  // the inner Concats, unread now, go with dead-code elimination
}

}  // namespace onnxport::core
