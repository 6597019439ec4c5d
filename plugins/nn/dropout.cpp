// Dropout. It is the identity unless both the node ran in training mode and the export is a
// training export (Graph::training()); then ONNX Dropout.
#include "nn.h"
#include "onnxport/helpers.h"

namespace onnxport::nn {
namespace {

using namespace helpers;

bool active(Graph& g, const Args& a) { return g.training() && !a.is_none(2) && a.b(2); }

// dropout(input, p, train). Opset 9: ratio attribute.
Value* dropout_9(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  if (!active(g, a)) return x;
  return g.op("Dropout", {x}, {{"ratio_f", a.f(1)}}, 2)[0];
}

// Opset 12: ratio and training_mode are inputs.
Value* dropout_12(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  if (!active(g, a)) return x;
  Value* ratio = scalar_like(g, a.f(1), x);
  return g.op("Dropout", {x, ratio, g.constant(Tensor::scalar_bool(true))}, {}, 2)[0];
}

// Channel-wise and alpha dropout have no ONNX op: fine in inference, an error when active.
Value* special_dropout(Graph& g, const TorchNode& n, const Args& a) {
  if (active(g, a))
    throw ArgumentError(n.kind + " in training mode has no ONNX equivalent; export in eval mode (training=eval)");
  return a.tensor(0);
}

// native_dropout(input, p, train) -> (output, mask). Dropout's optional mask output is all true
// in inference mode; opset 12's training_mode input says which mode.
std::vector<Value*> native_dropout(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  const bool train = g.training() && !a.is_none(2) && a.b(2);
  Value* ratio = scalar_like(g, a.f(1), x);
  return g.op("Dropout", {x, ratio, g.constant(Tensor::scalar_bool(train))}, {}, 2);
}

}  // namespace

void add_dropout(Registrar& r) {
  add_with_inplace(r, "aten::dropout", 9, dropout_9);
  add_with_inplace(r, "aten::dropout", 12, dropout_12);
  for (const char* op : {"aten::feature_dropout", "aten::alpha_dropout", "aten::feature_alpha_dropout"})
    add_with_inplace(r, op, 9, special_dropout);
  r.add("aten::native_dropout", 12, native_dropout);
}

}  // namespace onnxport::nn
