// The shared builder behind every recurrent op of the pack (behaviour of torch 1.13's
// _generic_rnn): per layer, gate-reordered weights with a leading num_directions axis, one
// ONNX LSTM/GRU/RNN node, and the num_directions axis folded back into the feature axis.
#include <optional>
#include <sstream>
#include <string>

#include "rnn.h"
#include "onnxport/helpers.h"

namespace onnxport::rnn {

using namespace helpers;

namespace {

const char* cell_name(Cell cell) {
  switch (cell) {
    case Cell::LSTM: return "LSTM";
    case Cell::GRU: return "GRU";
    case Cell::RnnTanh:
    case Cell::RnnRelu: return "RNN";
  }
  return "RNN";
}

// PyTorch gate blocks listed in ONNX's order. LSTM: torch i,f,g,o -> ONNX i,o,f,c.
// GRU: torch r,z,n -> ONNX z,r,h. Elman RNN has a single block.
std::vector<int64_t> onnx_gate_order(Cell cell) {
  switch (cell) {
    case Cell::LSTM: return {0, 3, 1, 2};
    case Cell::GRU: return {1, 0, 2};
    default: return {0};
  }
}

// Rows of w (blocks of `hidden` rows, one per gate) rearranged into ONNX gate order; runs of
// consecutive blocks are sliced together.
Value* reorder_gates(Graph& g, Value* w, int64_t hidden, const std::vector<int64_t>& order) {
  if (order.size() == 1) return w;
  std::vector<Value*> pieces;
  for (size_t k = 0; k < order.size();) {
    size_t end = k + 1;
    while (end < order.size() && order[end] == order[end - 1] + 1) ++end;
    pieces.push_back(slice(g, w, {0}, {order[k] * hidden}, {(order[end - 1] + 1) * hidden}));
    k = end;
  }
  return concat(g, pieces, 0);
}

std::optional<int64_t> static_dim(const TensorType& t, size_t axis) {
  if (!t.shape || t.shape->size() <= axis || !(*t.shape)[axis].is_static()) return std::nullopt;
  return (*t.shape)[axis].value;
}

std::optional<int64_t> last_static_dim(const TensorType& t) {
  if (!t.shape || t.shape->empty()) return std::nullopt;
  return static_dim(t, t.shape->size() - 1);
}

}  // namespace

std::optional<int64_t> weight_dim(const Value* w, size_t axis) {
  if (auto d = static_dim(w->type(), axis)) return d;
  if (const Tensor* t = w->maybe_tensor(); t && t->rank() == 2 && axis < 2) return t->shape()[axis];
  return std::nullopt;
}

namespace {

// hidden_size from w_hh's shape [gates*hidden, hidden], its constant payload, or the traced
// type of the hidden-state output.
int64_t hidden_size(const TorchNode& node, const RnnConfig& c) {
  Value* w_hh = c.params.at(1);
  if (auto h = weight_dim(w_hh, 1)) return *h;
  if (node.num_outputs() > 0) {
    const TensorType& state = node.output_types[node.num_outputs() > 1 ? 1 : 0];
    if (auto h = last_static_dim(state)) return *h;
  }
  fail_node(node,
            "cannot determine the hidden size: the hidden-to-hidden weight (params[1], " + w_hh->describe() +
                ") has no static dim 1 and the traced hidden-state type is unknown",
            "export a traced model (torch.jit.trace) or keep the RNN weights as module parameters");
}

void check_params(const TorchNode& node, const RnnConfig& c, int64_t per_direction) {
  const int64_t dirs = c.bidirectional ? 2 : 1;
  const auto expected = static_cast<size_t>(c.num_layers * dirs * per_direction);
  if (c.params.size() == expected) return;
  fail_node(node,
            "expected " + std::to_string(expected) + " weight tensors (" + std::to_string(c.num_layers) + " layers x " +
                std::to_string(dirs) + " directions x " + std::to_string(per_direction) + "), got " +
                std::to_string(c.params.size()),
            "the params list does not match num_layers/bidirectional/has_biases; re-save the model");
}

struct LayerWeights {
  Value* w = nullptr;  // [dirs, gates*hidden, in]
  Value* r = nullptr;  // [dirs, gates*hidden, hidden]
  Value* b = nullptr;  // [dirs, 2*gates*hidden], or nullptr without biases
};

LayerWeights layer_weights(Graph& g, const RnnConfig& c, int64_t hidden, int64_t layer) {
  const int64_t dirs = c.bidirectional ? 2 : 1;
  const int64_t per_direction = c.has_biases ? 4 : 2;
  const std::vector<int64_t> order = onnx_gate_order(c.cell);
  std::vector<Value*> ws, rs, bs;
  for (int64_t d = 0; d < dirs; ++d) {
    const auto base = static_cast<size_t>((layer * dirs + d) * per_direction);
    auto gates = [&](size_t k) { return reorder_gates(g, c.params[base + k], hidden, order); };
    ws.push_back(unsqueeze(g, gates(0), {0}));
    rs.push_back(unsqueeze(g, gates(1), {0}));
    if (c.has_biases) bs.push_back(unsqueeze(g, concat(g, {gates(2), gates(3)}, 0), {0}));
  }
  return {concat(g, ws, 0), concat(g, rs, 0), c.has_biases ? concat(g, bs, 0) : nullptr};
}

// The rows of an initial state [layers*dirs, batch, hidden] that belong to one layer.
Value* layer_state(Graph& g, Value* state, int64_t layer, int64_t dirs, int64_t num_layers) {
  if (state == nullptr || num_layers == 1) return state;
  return slice(g, state, {0}, {layer * dirs}, {(layer + 1) * dirs});
}

Attrs cell_attrs(Cell cell, int64_t hidden, bool bidirectional) {
  Attrs attrs{{"hidden_size_i", hidden}};
  if (bidirectional) attrs.emplace_back("direction_s", "bidirectional");
  if (cell == Cell::GRU) attrs.emplace_back("linear_before_reset_i", 1);
  if (cell == Cell::RnnTanh || cell == Cell::RnnRelu) {
    const std::string act = cell == Cell::RnnTanh ? "Tanh" : "Relu";
    attrs.emplace_back("activations_s",
                       bidirectional ? std::vector<std::string>{act, act} : std::vector<std::string>{act});
  }
  return attrs;
}

// ONNX Y [seq, dirs, batch, hidden] -> torch's [seq, batch, dirs*hidden].
Value* merge_directions(Graph& g, Value* y, bool bidirectional) {
  if (!bidirectional) return squeeze(g, y, {1});
  return reshape(g, transpose(g, y, {0, 2, 1, 3}), {0, 0, -1});
}

// An LSTM's params hold one more weight per direction (w_hr) when it has projections.
bool has_projections(const RnnConfig& c) {
  const int64_t dirs = c.bidirectional ? 2 : 1;
  const int64_t per_direction = c.has_biases ? 5 : 3;
  return c.cell == Cell::LSTM && c.params.size() == static_cast<size_t>(c.num_layers * dirs * per_direction);
}

}  // namespace

RnnOutputs build_rnn(Graph& g, const TorchNode& node, const RnnConfig& c) {
  const bool lstm = c.cell == Cell::LSTM;
  if (has_projections(c)) return build_projected_lstm(g, node, c);
  check_params(node, c, c.has_biases ? 4 : 2);
  const size_t states = lstm ? 2 : 1;
  if (!c.initial.empty() && c.initial.size() != states) {
    fail_node(node,
              std::string("expected ") + (lstm ? "2 initial states (h0, c0)" : "1 initial state (h0)") + ", got " +
                  std::to_string(c.initial.size()),
              "pass the initial states as the module expects them");
  }
  const int64_t hidden = hidden_size(node, c);
  const int64_t dirs = c.bidirectional ? 2 : 1;
  Value* h0 = c.initial.empty() ? nullptr : c.initial[0];
  Value* c0 = lstm && !c.initial.empty() ? c.initial[1] : nullptr;

  Value* x = c.batch_first ? transpose(g, c.input, {1, 0, 2}) : c.input;
  std::vector<Value*> h_outs, c_outs;
  for (int64_t layer = 0; layer < c.num_layers; ++layer) {
    const LayerWeights w = layer_weights(g, c, hidden, layer);
    std::vector<Value*> inputs{x, w.w, w.r, w.b, c.sequence_lens, layer_state(g, h0, layer, dirs, c.num_layers)};
    if (lstm) inputs.push_back(layer_state(g, c0, layer, dirs, c.num_layers));
    const std::vector<Value*> out =
        g.op(cell_name(c.cell), inputs, cell_attrs(c.cell, hidden, c.bidirectional), lstm ? 3 : 2);
    x = merge_directions(g, out[0], c.bidirectional);
    h_outs.push_back(out[1]);
    if (lstm) c_outs.push_back(out[2]);
  }
  RnnOutputs result;
  result.output = c.batch_first ? transpose(g, x, {1, 0, 2}) : x;
  result.h_n = concat(g, h_outs, 0);
  if (lstm) result.c_n = concat(g, c_outs, 0);
  return result;
}

namespace {

std::string format_number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// The packed-sequence (.data) overloads have a tensor (batch_sizes) at 1 and a list at 3,
// where the full overloads have hx at 1 and the has_biases flag at 3.
bool is_packed_overload(const Args& a) { return a.size() > 3 && a.at(3)->is_list(); }

}  // namespace

RnnOutputs convert_full_rnn(Graph& g, const TorchNode& node, const Args& a, Cell cell) {
  // lstm(input, hx, params, has_biases, layers, dropout, train, bidirectional, batch_first) or the
  // packed form lstm(data, batch_sizes, hx, params, has_biases, layers, dropout, train, bidirectional).
  const bool packed = is_packed_overload(a);
  const size_t k = packed ? 1 : 0;  // argument shift after input
  RnnConfig c;
  c.cell = cell;
  c.input = a.tensor(0);
  if (packed)
    c.sequence_lens = g.op("Cast", {lengths_from_batch_sizes(g, a.tensor(1), c.input)},
                           {{"to_i", static_cast<int64_t>(DType::Int32)}});
  if (cell == Cell::LSTM) {
    c.initial = a.list(1 + k);
  } else if (Value* h0 = a.optional_tensor(1 + k)) {
    c.initial = {h0};
  }
  c.params = a.list(2 + k);
  c.has_biases = a.b(3 + k);
  c.num_layers = a.i(4 + k);
  const double dropout = a.f(5 + k);
  const bool train = a.b(6 + k);
  c.bidirectional = a.b(7 + k);
  c.batch_first = packed ? false : a.b(8);
  if (c.num_layers < 1) a.fail(4, "num_layers >= 1");
  // PyTorch applies RNN dropout only between layers, so a single layer is exact in any mode.
  if (train && dropout > 0 && c.num_layers > 1) {
    fail_node(node,
              "training-mode dropout between RNN layers (dropout=" + format_number(dropout) +
                  ") cannot be expressed with ONNX LSTM/GRU/RNN",
              "export in eval mode (model.eval() before tracing) or set dropout=0");
  }
  return build_rnn(g, node, c);
}

RnnOutputs convert_cell(Graph& g, const TorchNode& node, const Args& a, Cell cell) {
  RnnConfig c;
  c.cell = cell;
  c.input = unsqueeze(g, a.tensor(0), {0});
  const std::vector<Value*> hx = cell == Cell::LSTM ? a.list(1) : std::vector<Value*>{a.tensor(1)};
  for (Value* h : hx) c.initial.push_back(unsqueeze(g, h, {0}));
  Value* b_ih = a.optional_tensor(4);
  Value* b_hh = a.optional_tensor(5);
  c.has_biases = b_ih != nullptr && b_hh != nullptr;
  if ((b_ih == nullptr) != (b_hh == nullptr)) {
    fail_node(node, "only one of the two biases (b_ih, b_hh) is given", "give both biases or neither");
  }
  c.params = {a.tensor(2), a.tensor(3)};
  if (c.has_biases) {
    c.params.push_back(b_ih);
    c.params.push_back(b_hh);
  }
  RnnOutputs seq = build_rnn(g, node, c);
  RnnOutputs result;
  result.h_n = squeeze(g, seq.h_n, {0});
  if (cell == Cell::LSTM) result.c_n = squeeze(g, seq.c_n, {0});
  return result;
}

}  // namespace onnxport::rnn
