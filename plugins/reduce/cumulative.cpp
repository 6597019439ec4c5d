// Cumulative sums. ONNX CumSum exists from opset 11; before, a static-length dim is summed by a
// MatMul with an upper-triangular matrix of ones (exact for integers; floats are summed by the
// MatMul in their own type).
#include <cstring>

#include "onnxport/helpers.h"
#include "reduce.h"
#include "reduce_common.h"

namespace onnxport::reduce {
namespace {

using namespace helpers;

// cumsum(self, dim, *, dtype=None): integers and bools accumulate as int64 unless dtype says.
Value* cumsum_input(Graph& g, const TorchNode& n, const Args& a) {
  if (auto d = named_dtype(n, a)) return cast(g, a.tensor(0), *d);
  return widen_integral(g, a.tensor(0));
}

// libtorch's CPU cumsum accumulates floats in double (at::acc_type) and rounds each sum once;
// ONNX Runtime's CumSum accumulates in the tensor's own type, which drifts on long sums (a phase
// vocoder's accumulated phase, up to 1e4 rad over a few hundred frames: 1e-1 off where libtorch's
// float32 is 1e-2 off the float64 run). So a float32 (or narrower) sum runs in double.
Value* cumsum_11(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = cumsum_input(g, n, a);
  if (x->rank() == std::optional<int64_t>(0)) return x;
  const DType d = dtype_of(x);
  const bool widen = d == DType::Float || d == DType::Float16 || d == DType::BFloat16;
  Value* summed = g.op("CumSum", {widen ? cast(g, x, DType::Double) : x, g.constant_int(a.i(1))});
  return widen ? cast(g, summed, d) : summed;
}

// Upper-triangular ones: out[..., j] = sum_{i <= j} x[..., i] = (x @ T)[..., j].
Tensor upper_triangle(DType dtype, int64_t size) {
  const Tensor one = Tensor::scalar_of(dtype, 1.0);
  const size_t width = one.nbytes();
  std::vector<uint8_t> bytes(static_cast<size_t>(size * size) * width, 0);  // zero bits: 0 in every numeric dtype
  for (int64_t i = 0; i < size; ++i)
    for (int64_t j = i; j < size; ++j)
      std::memcpy(bytes.data() + static_cast<size_t>(i * size + j) * width, one.data(), width);
  return Tensor(dtype, {size, size}, std::move(bytes));
}

Value* cumsum_9(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = cumsum_input(g, n, a);
  const int64_t rank = rank_of(x, n.kind + " at opset " + std::to_string(g.opset()) + " (no CumSum before opset 11)");
  if (rank == 0) return x;
  const int64_t dim = normalize_dim(a.i(1), rank);
  auto size = static_dim(x, dim);
  if (!size)
    throw ArgumentError(n.kind + " before opset 11 needs a static size along dim " + std::to_string(dim) + " (input " +
                        x->describe() + "); export at opset 11 or later for ONNX CumSum");
  DType d = dtype_of(x);
  if (d == DType::Undefined) d = DType::Float;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i) perm.push_back(i);
  std::swap(perm[static_cast<size_t>(dim)], perm.back());
  const bool last = dim == rank - 1;
  Value* moved = last ? x : transpose(g, x, perm);
  Value* summed = g.op("MatMul", {moved, g.constant(upper_triangle(d, *size))});
  return last ? summed : transpose(g, summed, perm);
}

}  // namespace

void add_cumulative(Registrar& r) {
  add_with_inplace(r, "aten::cumsum", 9, cumsum_9);
  add_with_inplace(r, "aten::cumsum", 11, cumsum_11);
}

}  // namespace onnxport::reduce
