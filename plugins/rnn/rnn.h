#pragma once
// Internal interface of the rnn op pack: one builder turns any PyTorch recurrent layer
// (LSTM, GRU, Elman RNN with tanh/relu) into one ONNX LSTM/GRU/RNN node per layer; an LSTM
// with projections (proj_size > 0), which ONNX's LSTM cannot express, into one Loop per layer.
#include <cstdint>
#include <optional>
#include <vector>

#include "onnxport/sdk.h"

namespace onnxport::rnn {

enum class Cell { LSTM, GRU, RnnTanh, RnnRelu };

struct RnnConfig {
  Cell cell = Cell::LSTM;
  Value* input = nullptr;       // [seq, batch, in], or [batch, seq, in] when batch_first
  std::vector<Value*> initial;  // {h0} or {h0, c0}, each [layers*dirs, batch, hidden]; empty: zeros
  std::vector<Value*> params;   // w_ih, w_hh[, b_ih, b_hh][, w_hr] for each layer, then direction
  bool has_biases = true;
  int64_t num_layers = 1;
  bool bidirectional = false;
  bool batch_first = false;
  Value* sequence_lens = nullptr;  // [batch] int32: per-sequence lengths (packed sequences)
};

// pack_padded_sequence / pad_packed_sequence (packed.cpp): a PackedSequence travels as its
// padded, time-major data with the lengths standing in for batch_sizes; the RNN's .data
// overloads give ONNX the lengths as sequence_lens.
void add_packed_sequences(Registrar& r);
// lengths[b] = how many batch_sizes exceed b, for the batch of `data` ([T, B, ...]).
Value* lengths_from_batch_sizes(Graph& g, Value* batch_sizes, Value* data);
// mask[t, b] = t < lengths[b] (bool [T, B]): the steps of `data` ([T, B, ...]) within each length.
Value* valid_steps(Graph& g, Value* lengths, Value* data);

struct RnnOutputs {
  Value* output = nullptr;  // like torch: [seq, batch, dirs*hidden] (batch first if asked)
  Value* h_n = nullptr;     // [layers*dirs, batch, hidden]
  Value* c_n = nullptr;     // LSTM only
};

RnnOutputs build_rnn(Graph& g, const TorchNode& node, const RnnConfig& config);

// An LSTM whose params carry a projection w_hr ([proj, hidden]) after each direction's weights:
// one ONNX Loop over time per layer (lstm_projection.cpp). build_rnn hands such configs over.
RnnOutputs build_projected_lstm(Graph& g, const TorchNode& node, const RnnConfig& config);

// Dim `axis` of a 2-d weight: from its static type or its constant payload.
std::optional<int64_t> weight_dim(const Value* w, size_t axis);

// The sequence overloads: aten::lstm.input / gru.input / rnn_tanh.input / rnn_relu.input
// (input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first), and
// the packed-sequence (.data) overloads (data, batch_sizes, hx, params, ..., bidirectional), whose
// batch_sizes become the ONNX op's sequence_lens. Rejects training-mode dropout between layers.
RnnOutputs convert_full_rnn(Graph& g, const TorchNode& node, const Args& a, Cell cell);

// aten::lstm_cell / gru_cell / rnn_tanh_cell / rnn_relu_cell
// (input [batch, in], hx, w_ih, w_hh, b_ih?, b_hh?): a one-step, one-layer RNN.
RnnOutputs convert_cell(Graph& g, const TorchNode& node, const Args& a, Cell cell);

void add_lstm(Registrar& r);
void add_gru(Registrar& r);
void add_elman_rnn(Registrar& r);

// Lowest opset the pack registers at: LSTM/GRU/RNN as used here exist from opset 7.
constexpr int kMinOpset = 7;

}  // namespace onnxport::rnn
