// Helpers shared by the tensor pack's files (declared in tensor_ops.h).
#include <limits>

#include "tensor_ops.h"

namespace onnxport::tensor {

using namespace helpers;

int64_t dim_of(const Value* x, int64_t dim, const std::string& what) { return normalize_dim(dim, rank_of(x, what)); }

std::vector<int64_t> iota(int64_t n, int64_t from) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(from + i);
  return v;
}

int64_t static_size(const Value* x, int64_t dim, const std::string& what) {
  if (auto s = static_dim(x, dim)) return *s;
  throw ArgumentError(what + " needs the size of dim " + std::to_string(dim) + " of its input (" + x->describe() +
                      ") to be static when exporting");
}

Value* shape_range(Graph& g, Value* x, int64_t begin, int64_t end) {
  std::vector<int64_t> dims;
  bool all_static = true;
  for (int64_t d = begin; d < end; ++d) {
    auto s = static_dim(x, d);
    all_static = all_static && s.has_value();
    dims.push_back(s.value_or(-1));
  }
  if (all_static) return g.constant_ints(dims);
  return slice(g, shape_of(g, x), {0}, {begin}, {end});
}

Value* wrap_negative(Graph& g, Value* idx, Value* size) {
  if (const Tensor* t = idx->maybe_tensor()) {
    bool negative = false;
    for (int64_t v : t->as_int64s()) negative = negative || v < 0;
    if (!negative) return idx;
  }
  if (auto i = idx->maybe_int(); i && *i >= 0) return idx;
  Value* zero = g.constant_int(0);
  Value* wrapped = g.op("Add", {idx, size});
  return g.op("Where", {g.op("Less", {idx, zero}), wrapped, idx});
}

Value* as_index(Graph& g, Value* idx) { return cast(g, idx, DType::Int64); }

Value* scatter_elements(Graph& g, Value* data, Value* index, Value* updates, int64_t axis, const std::string& reduction,
                        const std::string& what) {
  if (!reduction.empty()) {
    if (g.opset() < 16)
      throw ArgumentError(what + " with reduction '" + reduction + "' needs opset 16 or later (target is opset " +
                          std::to_string(g.opset()) + ")");
    return g.op("ScatterElements", {data, index, updates}, {{"axis_i", axis}, {"reduction_s", reduction}});
  }
  return g.op(g.opset() >= 11 ? "ScatterElements" : "Scatter", {data, index, updates}, {{"axis_i", axis}});
}

Value* index_along(Graph& g, Value* index, int64_t dim, int64_t rank, Value* shape) {
  std::vector<int64_t> along(static_cast<size_t>(rank), 1);
  along[static_cast<size_t>(dim)] = -1;
  return g.op("Expand", {reshape(g, index, along), shape});
}

Value* flip_dims(Graph& g, Value* x, const std::vector<int64_t>& dims, const std::string& what) {
  if (dims.empty()) return x;
  if (g.opset() >= 10) {
    const int64_t lowest = std::numeric_limits<int64_t>::min();
    return slice(g, x, dims, std::vector<int64_t>(dims.size(), -1), std::vector<int64_t>(dims.size(), lowest),
                 std::vector<int64_t>(dims.size(), -1));
  }
  for (int64_t d : dims) {
    const int64_t n = static_size(x, d, what + " at opset 9");
    std::vector<int64_t> reversed;
    for (int64_t i = n - 1; i >= 0; --i) reversed.push_back(i);
    x = gather(g, x, g.constant_ints(reversed), d);
  }
  return x;
}

Value* broadcast_shape(Graph& g, const std::vector<Value*>& vs) {
  std::vector<std::vector<int64_t>> shapes;
  for (Value* v : vs) {
    auto s = static_shape(v);
    if (!s) break;
    shapes.push_back(*s);
  }
  if (shapes.size() == vs.size()) {
    size_t rank = 0;
    for (auto& s : shapes) rank = std::max(rank, s.size());
    std::vector<int64_t> out(rank, 1);
    for (auto& s : shapes)
      for (size_t i = 0; i < s.size(); ++i) {
        int64_t& o = out[rank - s.size() + i];
        if (s[i] != 1) o = s[i];
      }
    return g.constant_ints(out);
  }
  // Expand broadcasts both ways, so chaining it over every value yields the common shape.
  Value* acc = vs[0];
  for (size_t i = 1; i < vs.size(); ++i) acc = g.op("Expand", {acc, shape_of(g, vs[i])});
  return shape_of(g, acc);
}

}  // namespace onnxport::tensor
