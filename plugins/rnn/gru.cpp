// aten::gru (input and data overloads) and aten::gru_cell -> ONNX GRU (linear_before_reset=1,
// which is how PyTorch applies the reset gate).
#include "rnn.h"

namespace onnxport::rnn {
namespace {

std::vector<Value*> gru(Graph& g, const TorchNode& node, const Args& a) {
  const RnnOutputs out = convert_full_rnn(g, node, a, Cell::GRU);
  return {out.output, out.h_n};
}

Value* gru_cell(Graph& g, const TorchNode& node, const Args& a) { return convert_cell(g, node, a, Cell::GRU).h_n; }

}  // namespace

void add_gru(Registrar& r) {
  r.add("aten::gru", kMinOpset, gru);
  r.add("aten::gru_cell", kMinOpset, gru_cell);
}

}  // namespace onnxport::rnn
