// A deliberately wrong op pack for verify's tests. It overrides aten::linear and, where the
// weight is square (so that every shape still agrees), multiplies by the weight itself instead
// of its transpose: a transposed kernel. `verify` must fail and name the node and module.
#include <onnxport/sdk.h>

namespace {
onnxport::Value* linear_with_transposed_kernel(onnxport::Graph& g, const onnxport::TorchNode&,
                                               const onnxport::Args& a) {
  onnxport::Value* x = a.tensor(0);
  onnxport::Value* weight = a.tensor(1);
  const auto shape = weight->type().static_shape();
  const bool square = shape && shape->size() == 2 && (*shape)[0] == (*shape)[1];
  onnxport::Value* kernel = square ? weight : g.op("Transpose", {weight}, {{"perm_i", std::vector<int64_t>{1, 0}}});
  onnxport::Value* y = g.op("MatMul", {x, kernel});
  if (onnxport::Value* bias = a.optional_tensor(2)) y = g.op("Add", {y, bias});
  return y;
}
}  // namespace

ONNXPORT_OP_PACK(wrong_linear, "0.1.0") { r.add_override("aten::linear", 9, linear_with_transposed_kernel); }
