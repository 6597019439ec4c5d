#include "rnn_util.h"

namespace onnxport::rnn {

Value* unsqueeze(Graph& g, Value* x, const std::vector<int64_t>& axes) {
  if (g.opset() >= 13) return g.op("Unsqueeze", {x, g.constant_ints(axes)});
  return g.op("Unsqueeze", {x}, {{"axes_i", axes}});
}

Value* squeeze(Graph& g, Value* x, const std::vector<int64_t>& axes) {
  if (g.opset() >= 13) return g.op("Squeeze", {x, g.constant_ints(axes)});
  return g.op("Squeeze", {x}, {{"axes_i", axes}});
}

Value* slice(Graph& g, Value* x, const std::vector<int64_t>& axes,
             const std::vector<int64_t>& starts, const std::vector<int64_t>& ends) {
  if (g.opset() >= 10) {
    return g.op("Slice", {x, g.constant_ints(starts), g.constant_ints(ends), g.constant_ints(axes)});
  }
  return g.op("Slice", {x}, {{"axes_i", axes}, {"starts_i", starts}, {"ends_i", ends}});
}

Value* concat(Graph& g, const std::vector<Value*>& xs, int64_t axis) {
  if (xs.size() == 1) return xs.front();
  return g.op("Concat", xs, {{"axis_i", axis}});
}

Value* transpose(Graph& g, Value* x, const std::vector<int64_t>& perm) {
  return g.op("Transpose", {x}, {{"perm_i", perm}});
}

Value* reshape(Graph& g, Value* x, const std::vector<int64_t>& shape) {
  return g.op("Reshape", {x, g.constant_ints(shape)});
}

void fail(const TorchNode& node, const std::string& message, const std::string& hint) {
  ErrorContext ctx;
  ctx.torch_op = node.kind;
  ctx.module_path = node.module_path;
  ctx.source = node.source_location;
  ctx.hint = hint;
  throw ArgumentError(message, ctx);
}

}  // namespace onnxport::rnn
