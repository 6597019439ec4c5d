// The built-in rnn op pack: PyTorch's recurrent layers as ONNX LSTM / GRU / RNN (an LSTM with
// projections as an ONNX Loop per layer).
#include "onnxport/op_pack.h"
#include "rnn.h"

ONNXPORT_OP_PACK(rnn, "1.0.0") {
  onnxport::rnn::add_lstm(r);
  onnxport::rnn::add_gru(r);
  onnxport::rnn::add_elman_rnn(r);
  onnxport::rnn::add_packed_sequences(r);
}
