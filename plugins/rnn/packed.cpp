// Packed sequences. torch's PackedSequence holds the valid steps of every sequence, flattened;
// ONNX's recurrent ops take the padded tensor and per-sequence lengths instead. So packing keeps
// the padded data (time-major) and computes batch_sizes as torch does (batch_sizes[t] = how many
// sequences are longer than t, lengths sorted longest first); the RNN's packed overload turns
// them back into lengths for ONNX's sequence_lens, which zeroes the steps past each length;
// unpacking restores the layout and the padding value.
#include "onnxport/helpers.h"
#include "rnn.h"

namespace onnxport::rnn {
namespace {

using namespace helpers;

// counts[i][j] = a[i] > b[j], summed along `axis`.
Value* count_greater(Graph& g, Value* a, Value* b, int64_t axis) {
  Value* greater = g.op("Greater", {unsqueeze(g, a, {1}), unsqueeze(g, b, {0})});
  return reduce(g, "ReduceSum", cast(g, greater, DType::Int64), {axis}, false);
}

// 0, 1, ..., size of x along dim - 1 (a constant when that size is static; Range needs opset 11).
Value* iota_of(Graph& g, Value* x, int64_t dim) {
  if (auto n = static_dim(x, dim)) {
    std::vector<int64_t> values(static_cast<size_t>(*n));
    for (int64_t i = 0; i < *n; ++i) values[static_cast<size_t>(i)] = i;
    return g.constant_ints(values);
  }
  if (g.opset() < 11) throw ArgumentError("packed sequences with a run-time batch or length need opset 11 (Range)");
  return g.op("Range", {g.constant_int(0), size(g, x, dim), g.constant_int(1)});
}

}  // namespace

Value* lengths_from_batch_sizes(Graph& g, Value* batch_sizes, Value* data) {
  return count_greater(g, cast(g, batch_sizes, DType::Int64), iota_of(g, data, 1), 0);
}

Value* valid_steps(Graph& g, Value* lengths, Value* data) {
  Value* steps = iota_of(g, data, 0);
  return g.op("Less", {unsqueeze(g, steps, {1}), unsqueeze(g, cast(g, lengths, DType::Int64), {0})});
}

namespace {

// aten::_pack_padded_sequence(input, lengths, batch_first) -> (data, batch_sizes)
std::vector<Value*> pack_padded(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t rank = rank_of(x, "pack_padded_sequence");
  Value* data = x;
  if (a.b(2)) {
    std::vector<int64_t> perm{1, 0};
    for (int64_t d = 2; d < rank; ++d) perm.push_back(d);
    data = transpose(g, x, perm);
  }
  Value* lengths = cast(g, a.tensor(1), DType::Int64);
  Value* batch_sizes = count_greater(g, lengths, iota_of(g, data, 0), 0);
  return {data, batch_sizes};
}

// aten::_pad_packed_sequence(data, batch_sizes, batch_first, padding_value, total_length)
//   -> (output, lengths)
std::vector<Value*> pad_packed(Graph& g, const TorchNode& n, const Args& a) {
  Value* data = a.tensor(0);  // [T, B, ...], zero past each length
  Value* lengths = lengths_from_batch_sizes(g, a.tensor(1), data);
  const bool batch_first = a.b(2);
  const double padding = a.f(3);
  const int64_t rank = rank_of(data, n.kind);
  // total_length is the padded length unless the caller asked for more (traced code passes
  // batch_sizes' length, which is the padded length here).
  if (a.size() > 4 && !a.is_none(4))
    if (auto total = a.at(4)->maybe_int(), steps = static_dim(data, 0); total && steps && *total != *steps)
      throw ArgumentError(n.kind + ": total_length " + std::to_string(*total) + " differs from the padded length " +
                          std::to_string(*steps) + "; export without total_length");
  Value* out = data;
  if (padding != 0.0) {
    // mask[t, b] = t < lengths[b], broadcast over the feature dims
    Value* mask = valid_steps(g, lengths, data);
    std::vector<int64_t> feature_axes;
    for (int64_t d = 2; d < rank; ++d) feature_axes.push_back(d);
    if (!feature_axes.empty()) mask = unsqueeze(g, mask, feature_axes);
    out = g.op("Where", {mask, data, scalar_like(g, padding, data)});
  }
  if (batch_first) {
    std::vector<int64_t> perm{1, 0};
    for (int64_t d = 2; d < rank; ++d) perm.push_back(d);
    out = transpose(g, out, perm);
  }
  return {out, lengths};
}

}  // namespace

void add_packed_sequences(Registrar& r) {
  r.add("aten::_pack_padded_sequence", 9, pack_padded);
  r.add("aten::_pad_packed_sequence", 9, pad_packed);
}

}  // namespace onnxport::rnn
