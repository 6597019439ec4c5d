// Padding: aten::pad, constant_pad_nd, reflection_pad{1,2,3}d, replication_pad{1,2,3}d and
// _pad_circular. PyTorch lists pads from the last dim backwards as (begin, end) pairs; ONNX Pad
// wants all begins then all ends over every dim: attributes before opset 11, inputs from 11.
// Circular padding has no ONNX mode before opset 19 and is built from Slice + Concat.
#include <algorithm>

#include "nn.h"
#include "onnxport/helpers.h"

namespace onnxport::nn {
namespace {

using namespace helpers;

// Torch pad list (last dim first, begin/end pairs) -> ONNX order over `rank` dims.
std::vector<int64_t> onnx_pads(const TorchNode& n, const std::vector<int64_t>& torch_pads, int64_t rank) {
  if (torch_pads.size() % 2 != 0 || static_cast<int64_t>(torch_pads.size()) > 2 * rank)
    throw ArgumentError(n.kind + ": the pad list has " + std::to_string(torch_pads.size()) +
                        " entries; it needs begin/end pairs for at most " + std::to_string(rank) + " dims");
  std::vector<int64_t> pads(2 * static_cast<size_t>(rank), 0);
  const int64_t k = static_cast<int64_t>(torch_pads.size()) / 2;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t dim = rank - 1 - i;
    pads[dim] = torch_pads[2 * i];
    pads[dim + rank] = torch_pads[2 * i + 1];
  }
  return pads;
}

// The same reordering at run time (pad lists computed from sizes), opset 11 or later.
Value* onnx_pads_dynamic(Graph& g, const TorchNode& n, Value* torch_pads, int64_t rank) {
  if (g.opset() < 11)
    throw ArgumentError(n.kind + ": pads computed at run time need opset 11 or later (Pad takes them as an input)");
  const size_t k = torch_pads->is_list() ? torch_pads->elements().size() : 0;
  if (!torch_pads->is_list() || k % 2 != 0)
    throw ArgumentError(n.kind + ": expected a list of begin/end pairs as pads, got " + torch_pads->describe());
  Value* flat = int_list(g, torch_pads);
  const int64_t missing = 2 * rank - static_cast<int64_t>(k);
  if (missing > 0) flat = concat(g, {flat, g.constant_ints(std::vector<int64_t>(missing, 0))}, 0);
  Value* pairs = reshape(g, flat, std::vector<int64_t>{rank, 2});  // row i: dim rank-1-i
  std::vector<int64_t> reversed;
  for (int64_t i = rank - 1; i >= 0; --i) reversed.push_back(i);
  Value* by_dim = gather(g, pairs, g.constant_ints(reversed), 0);
  return reshape(g, transpose(g, by_dim, {1, 0}), std::vector<int64_t>{-1});
}

Value* pad_values(Graph& g, const TorchNode& n, Value* x, Value* pads_arg, const std::string& mode, double value);

// Pad in `mode` ("constant", "reflect", "edge") with the torch pad list argument `pads_arg`.
// Pad before opset 11 takes floating types only: other types go through double (exact for
// integers up to 2^53).
Value* pad(Graph& g, const TorchNode& n, Value* x, Value* pads_arg, const std::string& mode, double value) {
  const DType d = dtype_of(x);
  if (g.opset() >= 11 || d == DType::Undefined || is_floating(d)) return pad_values(g, n, x, pads_arg, mode, value);
  return cast(g, pad_values(g, n, cast(g, x, DType::Double), pads_arg, mode, value), d);
}

Value* pad_values(Graph& g, const TorchNode& n, Value* x, Value* pads_arg, const std::string& mode, double value) {
  const int64_t rank = rank_of(x, n.kind);
  if (auto c = pads_arg->maybe_ints()) {
    const std::vector<int64_t> pads = onnx_pads(n, *c, rank);
    if (mode == "constant") return pad_constant(g, x, pads, value);
    if (g.opset() < 11) return g.op("Pad", {x}, {{"pads_i", pads}, {"mode_s", mode}});
    return g.op("Pad", {x, g.constant_ints(pads)}, {{"mode_s", mode}});
  }
  std::vector<Value*> in{x, onnx_pads_dynamic(g, n, pads_arg, rank)};
  if (mode == "constant" && value != 0.0) in.push_back(scalar_like(g, value, x));
  return g.op("Pad", in, {{"mode_s", mode}});
}

// Circular: the last `begin` elements are put before, the first `end` after, dim by dim. A
// negative amount crops instead, and what is wrapped comes from the cropped part (as in
// PyTorch's _pad_circular).
Value* pad_circular(Graph& g, const TorchNode& n, Value* x, const std::vector<int64_t>& torch_pads) {
  const int64_t rank = rank_of(x, n.kind);
  if (torch_pads.size() % 2 != 0 || static_cast<int64_t>(torch_pads.size()) > 2 * rank)
    throw ArgumentError(n.kind + ": circular padding needs begin/end pairs for at most " + std::to_string(rank) +
                        " dims, got " + std::to_string(torch_pads.size()) + " values");
  for (size_t i = 0; i < torch_pads.size(); i += 2) {
    const int64_t dim = rank - 1 - static_cast<int64_t>(i / 2);
    int64_t begin = torch_pads[i], end = torch_pads[i + 1];
    if (begin < 0 || end < 0) {
      x = slice(g, x, {dim}, {std::max<int64_t>(-begin, 0)}, {end < 0 ? end : INT64_MAX});
      begin = std::max<int64_t>(begin, 0);
      end = std::max<int64_t>(end, 0);
    }
    if (auto size = static_dim(x, dim); size && (begin > *size || end > *size))
      throw ArgumentError(n.kind + ": circular padding larger than the padded dim (" + std::to_string(*size) + ")");
    std::vector<Value*> parts;
    if (begin > 0) parts.push_back(slice(g, x, {dim}, {-begin}, {INT64_MAX}));
    parts.push_back(x);
    if (end > 0) parts.push_back(slice(g, x, {dim}, {0}, {end}));
    x = concat(g, parts, dim);
  }
  return x;
}

std::string onnx_mode(const TorchNode& n, const std::string& mode) {
  if (mode == "constant") return "constant";
  if (mode == "reflect") return "reflect";
  if (mode == "replicate") return "edge";
  throw ArgumentError(n.kind + ": unknown padding mode '" + mode + "' (constant, reflect, replicate, circular)");
}

// pad(input, pad, mode='constant', value=None)
Value* pad_any(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const std::string mode = a.size() > 2 && !a.is_none(2) ? a.s(2) : "constant";
  if (mode == "circular") return pad_circular(g, n, x, a.is(1));
  const double value = a.size() > 3 && !a.is_none(3) ? a.f(3) : 0.0;
  return pad(g, n, x, a.at(1), onnx_mode(n, mode), value);
}

// constant_pad_nd(input, pad, value=0)
Value* constant_pad_nd(Graph& g, const TorchNode& n, const Args& a) {
  const double value = a.size() > 2 && !a.is_none(2) ? a.f(2) : 0.0;
  return pad(g, n, a.tensor(0), a.at(1), "constant", value);
}

Symbolic pad_mode(const std::string& onnx) {
  return [onnx](Graph& g, const TorchNode& n, const Args& a) {
    return std::vector<Value*>{pad(g, n, a.tensor(0), a.at(1), onnx, 0.0)};
  };
}

Value* circular(Graph& g, const TorchNode& n, const Args& a) { return pad_circular(g, n, a.tensor(0), a.is(1)); }

}  // namespace

void add_padding(Registrar& r) {
  r.add("aten::pad", 9, pad_any);
  r.add("aten::constant_pad_nd", 9, constant_pad_nd);
  for (const char* d : {"1d", "2d", "3d"}) {
    r.add(std::string("aten::reflection_pad") + d, 9, pad_mode("reflect"));
    r.add(std::string("aten::replication_pad") + d, 9, pad_mode("edge"));
  }
  r.add("aten::_pad_circular", 9, circular);
}

}  // namespace onnxport::nn
