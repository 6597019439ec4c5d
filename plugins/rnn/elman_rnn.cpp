// aten::rnn_tanh / aten::rnn_relu (input and data overloads) and their _cell variants
// -> ONNX RNN with a Tanh or Relu activation.
#include "rnn.h"

namespace onnxport::rnn {
namespace {

template <Cell kCell>
std::vector<Value*> elman_rnn(Graph& g, const TorchNode& node, const Args& a) {
  const RnnOutputs out = convert_full_rnn(g, node, a, kCell);
  return {out.output, out.h_n};
}

template <Cell kCell>
Value* elman_cell(Graph& g, const TorchNode& node, const Args& a) {
  return convert_cell(g, node, a, kCell).h_n;
}

}  // namespace

void add_elman_rnn(Registrar& r) {
  r.add("aten::rnn_tanh", kMinOpset, elman_rnn<Cell::RnnTanh>);
  r.add("aten::rnn_relu", kMinOpset, elman_rnn<Cell::RnnRelu>);
  r.add("aten::rnn_tanh_cell", kMinOpset, elman_cell<Cell::RnnTanh>);
  r.add("aten::rnn_relu_cell", kMinOpset, elman_cell<Cell::RnnRelu>);
}

}  // namespace onnxport::rnn
