// aten::lstm (input and data overloads) and aten::lstm_cell -> ONNX LSTM (with proj_size > 0:
// a Loop per layer, lstm_projection.cpp).
#include "rnn.h"

namespace onnxport::rnn {
namespace {

std::vector<Value*> lstm(Graph& g, const TorchNode& node, const Args& a) {
  const RnnOutputs out = convert_full_rnn(g, node, a, Cell::LSTM);
  return {out.output, out.h_n, out.c_n};
}

std::vector<Value*> lstm_cell(Graph& g, const TorchNode& node, const Args& a) {
  const RnnOutputs out = convert_cell(g, node, a, Cell::LSTM);
  return {out.h_n, out.c_n};
}

}  // namespace

void add_lstm(Registrar& r) {
  r.add("aten::lstm", kMinOpset, lstm);
  r.add("aten::lstm_cell", kMinOpset, lstm_cell);
}

}  // namespace onnxport::rnn
