#include "3_export/5_passes/passes.h"

namespace onnxport::core {

namespace {

bool is_concat(const onnx::NodeProto& node) { return node.op_type() == "Concat" && node.domain().empty(); }

const onnx::AttributeProto* axis_of(const onnx::NodeProto& concat) { return find_attribute(concat, "axis"); }

}  // namespace

size_t merge_concats(OnnxModel& model) {
  const ValueUses uses(model);
  size_t merged = 0;
  // In graph order, so that a chain of nested Concats joins into the last: each inner one has
  // already taken in the Concats it read when an outer one takes its inputs.
  for (auto& node : model.nodes) {
    onnx::NodeProto& outer = node.proto;
    if (!is_concat(outer) || !axis_of(outer)) continue;
    google::protobuf::RepeatedPtrField<std::string> inputs;
    bool joined = false;
    for (const auto& in : outer.input()) {
      const auto p = uses.producer.find(in);
      const onnx::NodeProto* inner = p == uses.producer.end() ? nullptr : &model.nodes[p->second].proto;
      // The same axis value (a negative axis and its positive twin stay apart: the rank may be
      // unknown), and the outer Concat its only reader.
      if (inner && is_concat(*inner) && axis_of(*inner) && axis_of(*inner)->i() == axis_of(outer)->i() &&
          uses.count(in) == 1) {
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
