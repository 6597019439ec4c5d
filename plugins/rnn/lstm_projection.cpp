// nn.LSTM with projections (proj_size > 0, weight_hr_l{k}{_reverse}). ONNX's LSTM has no
// projection, so each layer is one ONNX Loop over time whose body steps every direction:
//   gates = x_t W_ih^T + b_ih + b_hh + h W_hh^T      (x W_ih^T + b for all steps before the Loop)
//   c' = sigmoid(f) * c + sigmoid(i) * tanh(g)      (torch's gate order i, f, g, o)
//   h' = (sigmoid(o) * tanh(c')) W_hr^T              ([batch, proj])
// The reverse direction reads step T-1-t at iteration t and its stacked outputs are reversed in
// time after the Loop. With packed sequences a step past a sequence's length keeps the state and
// outputs zeros (what ONNX LSTM's sequence_lens does).
// A Loop rather than a Scan: the converter types a Loop's outputs, which the nodes after it need.
#include <limits>
#include <string>
#include <utility>

#include "onnxport/helpers.h"
#include "rnn.h"

namespace onnxport::rnn {

using namespace helpers;

namespace {

// One direction of one layer, transposed for x W^T.
struct DirectionWeights {
  Value* w_ih_t = nullptr;  // [in, 4*hidden]
  Value* w_hh_t = nullptr;  // [proj, 4*hidden]
  Value* bias = nullptr;    // [4*hidden]: b_ih + b_hh, or nullptr
  Value* w_hr_t = nullptr;  // [hidden, proj]
};

size_t params_per_direction(const RnnConfig& c) { return c.has_biases ? 5 : 3; }

DirectionWeights direction_weights(Graph& g, const RnnConfig& c, size_t index) {
  const size_t per_direction = params_per_direction(c);
  const size_t base = index * per_direction;
  auto transposed = [&](size_t k) { return transpose(g, c.params[base + k], {1, 0}); };
  DirectionWeights w;
  w.w_ih_t = transposed(0);
  w.w_hh_t = transposed(1);
  if (c.has_biases) w.bias = g.op("Add", {c.params[base + 2], c.params[base + 3]});
  w.w_hr_t = transposed(per_direction - 1);
  return w;
}

// hidden and proj from w_hr ([proj, hidden]) of the first direction.
std::pair<int64_t, int64_t> hidden_and_proj(const TorchNode& node, const RnnConfig& c) {
  Value* w_hr = c.params.at(params_per_direction(c) - 1);
  auto proj = weight_dim(w_hr, 0);
  auto hidden = weight_dim(w_hr, 1);
  if (!proj || !hidden)
    fail_node(node, "cannot determine hidden_size and proj_size: the projection weight (" + w_hr->describe() +
                        ") has no static shape",
              "keep the LSTM weights as module parameters");
  return {*hidden, *proj};
}

// One [batch, size] state per layer and direction from [layers*dirs, batch, size].
std::vector<Value*> state_rows(Graph& g, Value* state, int64_t rows) {
  if (rows == 1) return {squeeze(g, state, {0})};
  std::vector<Value*> out = split(g, state, std::vector<int64_t>(static_cast<size_t>(rows), 1), 0);
  for (Value*& v : out) v = squeeze(g, v, {0});
  return out;
}

struct DirectionStep {
  Value* h = nullptr;
  Value* c = nullptr;
  Value* y = nullptr;
};

// One time step of one direction inside the Loop body. mask: bool [batch, 1] or nullptr.
DirectionStep lstm_step(Graph& g, const DirectionWeights& w, Value* h, Value* c, Value* xw, Value* mask) {
  Value* gates = g.op("Add", {xw, g.op("MatMul", {h, w.w_hh_t})});
  const std::vector<Value*> ifgo = split_equal(g, gates, 4, 1);
  Value* i = g.op("Sigmoid", {ifgo[0]});
  Value* f = g.op("Sigmoid", {ifgo[1]});
  Value* cell = g.op("Tanh", {ifgo[2]});
  Value* o = g.op("Sigmoid", {ifgo[3]});
  Value* c_next = g.op("Add", {g.op("Mul", {f, c}), g.op("Mul", {i, cell})});
  Value* h_next = g.op("MatMul", {g.op("Mul", {o, g.op("Tanh", {c_next})}), w.w_hr_t});
  if (mask == nullptr) return {h_next, c_next, h_next};
  return {g.op("Where", {mask, h_next, h}), g.op("Where", {mask, c_next, c}),
          g.op("Where", {mask, h_next, scalar_like(g, 0.0, h_next)})};
}

// y [T, ...] in reverse time order: Slice with step -1 from opset 10; before, a Gather with
// constant indices, which needs the sequence length to be static.
Value* reversed_in_time(Graph& g, const TorchNode& node, Value* y, std::optional<int64_t> steps) {
  if (g.opset() >= 10) return slice(g, y, {0}, {-1}, {std::numeric_limits<int64_t>::min()}, {-1});
  if (!steps)
    fail_node(node,
              "a bidirectional LSTM with projections over a run-time sequence length needs opset 10 (Slice with "
              "negative steps)",
              "export with --opset 10 or later, or with a fixed sequence length");
  std::vector<int64_t> backwards;
  for (int64_t t = *steps - 1; t >= 0; --t) backwards.push_back(t);
  return gather(g, y, g.constant_ints(backwards), 0);
}

// The converter types a Loop's outputs by rank only; a Reshape to the sizes known here (0 keeps a
// run-time size) gives the nodes after the LSTM static dims to work with, as an ONNX LSTM would.
Value* with_known_dims(Graph& g, Value* v, const std::vector<Dim>& dims) {
  std::vector<int64_t> shape;
  for (const Dim& d : dims) shape.push_back(d.is_static() ? d.value : 0);
  return reshape(g, v, shape);
}

}  // namespace

RnnOutputs build_projected_lstm(Graph& g, const TorchNode& node, const RnnConfig& c) {
  if (c.initial.size() != 2)
    fail_node(node, "expected 2 initial states (h0, c0), got " + std::to_string(c.initial.size()),
              "pass the initial states as the module expects them");
  const auto [hidden, proj] = hidden_and_proj(node, c);
  const int64_t dirs = c.bidirectional ? 2 : 1;
  const int64_t rows = c.num_layers * dirs;

  // Types of the Loop body's inputs: the input's dtype and batch size.
  DType dtype = dtype_of(c.input);
  if (dtype == DType::Undefined) dtype = dtype_of(c.params[0]);
  if (dtype == DType::Undefined) dtype = DType::Float;
  Value* x = c.batch_first ? transpose(g, c.input, {1, 0, 2}) : c.input;  // [T, B, in]
  const std::optional<int64_t> steps = static_dim(x, 0);
  const TensorType& x_type = x->type();
  const Dim batch = x_type.shape && x_type.shape->size() == 3 ? (*x_type.shape)[1] : Dim::unknown();
  auto state_input = [&](int64_t width) {
    return Subgraph::Input{TensorType{dtype, std::vector<Dim>{batch, Dim::fixed(width)}}};
  };
  const Subgraph::Input iteration{TensorType{DType::Int64, std::vector<Dim>{}}};
  const Subgraph::Input condition{TensorType{DType::Bool, std::vector<Dim>{}}};

  Value* trips = size(g, x, 0);                                       // int64 []
  Value* last = g.op("Sub", {trips, g.constant_int(1)});              // the reverse direction's first step
  Value* mask = c.sequence_lens ? unsqueeze(g, valid_steps(g, c.sequence_lens, x), {2}) : nullptr;  // [T, B, 1]
  const std::vector<Value*> h0 = state_rows(g, c.initial[0], rows);
  const std::vector<Value*> c0 = state_rows(g, c.initial[1], rows);
  std::vector<Value*> h_n, c_n;
  for (int64_t layer = 0; layer < c.num_layers; ++layer) {
    std::vector<DirectionWeights> weights;
    std::vector<Value*> xws;
    Subgraph body;
    body.inputs = {iteration, condition};
    std::vector<Value*> inputs{trips, g.constant(Tensor::scalar_of(DType::Bool, 1))};
    for (int64_t d = 0; d < dirs; ++d) {
      const auto index = static_cast<size_t>(layer * dirs + d);
      weights.push_back(direction_weights(g, c, index));
      Value* xw = g.op("MatMul", {x, weights.back().w_ih_t});  // [T, B, 4*hidden]
      if (weights.back().bias) xw = g.op("Add", {xw, weights.back().bias});
      xws.push_back(xw);
      inputs.insert(inputs.end(), {h0[index], c0[index]});
      body.inputs.push_back(state_input(proj));
      body.inputs.push_back(state_input(hidden));
    }
    // Body inputs: iteration, condition, (h, c) per direction. Outputs: the condition, (h', c') per
    // direction, then each direction's output at this step.
    body.build = [weights, xws, mask, last, dirs](Graph& b, const std::vector<Value*>& in) {
      std::vector<Value*> out{in[1]}, ys;
      for (int64_t d = 0; d < dirs; ++d) {
        const auto k = static_cast<size_t>(d);
        Value* t = d == 0 ? in[0] : b.op("Sub", {last, in[0]});
        const DirectionStep s = lstm_step(b, weights[k], in[2 + 2 * k], in[3 + 2 * k], gather(b, xws[k], t, 0),
                                          mask ? gather(b, mask, t, 0) : nullptr);
        out.insert(out.end(), {s.h, s.c});
        ys.push_back(s.y);
      }
      out.insert(out.end(), ys.begin(), ys.end());
      return out;
    };
    const std::vector<Value*> out = g.op("Loop", inputs, {{"body_g", body}}, static_cast<int>(3 * dirs));
    std::vector<Value*> ys;
    for (int64_t d = 0; d < dirs; ++d) {
      h_n.push_back(unsqueeze(g, out[static_cast<size_t>(2 * d)], {0}));
      c_n.push_back(unsqueeze(g, out[static_cast<size_t>(2 * d + 1)], {0}));
      Value* y = out[static_cast<size_t>(2 * dirs + d)];  // [T, B, proj], in the order of the iterations
      ys.push_back(d == 0 ? y : reversed_in_time(g, node, y, steps));
    }
    x = dirs == 1 ? ys[0] : concat(g, ys, 2);  // torch's [T, B, dirs*proj]
  }
  const Dim time = steps ? Dim::fixed(*steps) : Dim::unknown();
  x = with_known_dims(g, x, {time, batch, Dim::fixed(dirs * proj)});
  RnnOutputs result;
  result.output = c.batch_first ? transpose(g, x, {1, 0, 2}) : x;
  result.h_n = with_known_dims(g, concat(g, h_n, 0), {Dim::fixed(rows), batch, Dim::fixed(proj)});
  result.c_n = with_known_dims(g, concat(g, c_n, 0), {Dim::fixed(rows), batch, Dim::fixed(hidden)});
  return result;
}

}  // namespace onnxport::rnn
