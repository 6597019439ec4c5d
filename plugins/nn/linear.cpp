// Matrix products. aten::linear on a 2-d input with bias is one Gemm (transB=1, no weight
// transpose needed); other ranks use MatMul, which broadcasts the leading dims.
#include "nn.h"
#include "onnxport/helpers.h"

namespace onnxport::nn {
namespace {

using namespace helpers;

// linear(input, weight, bias=None) = input @ weight.T + bias
Value* linear(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  Value* w = a.tensor(1);
  Value* b = a.optional_tensor(2);
  if (b && x->rank() == std::optional<int64_t>(2)) return g.op("Gemm", {x, w, b}, {{"transB_i", 1}});
  Value* y = g.op("MatMul", {x, transpose(g, w, {1, 0})});
  return b ? g.op("Add", {y, b}) : y;
}

// addmm(self, mat1, mat2, beta=1, alpha=1) = beta * self + alpha * (mat1 @ mat2)
Value* addmm(Graph& g, const TorchNode&, const Args& a) {
  const double beta = a.is_none(3) ? 1.0 : a.f(3);
  const double alpha = a.is_none(4) ? 1.0 : a.f(4);
  Value* m1 = a.tensor(1);
  Value* m2 = a.tensor(2);
  if (beta == 0.0) {
    Value* y = g.op("MatMul", {m1, m2});
    return alpha == 1.0 ? y : g.op("Mul", {y, scalar_like(g, alpha, m1)});
  }
  return g.op("Gemm", {m1, m2, a.tensor(0)}, {{"alpha_f", alpha}, {"beta_f", beta}});
}

Value* matmul(Graph& g, const TorchNode&, const Args& a) { return g.op("MatMul", {a.tensor(0), a.tensor(1)}); }

// MatMul and Gemm take integer tensors from opset 9 (floats only in MatMul-1/Gemm-7): at opset 8,
// integer products are computed in float and cast back, as torch.onnx's opset 8 does.
Symbolic float_before_9(Value* (*fn)(Graph&, const TorchNode&, const Args&), std::vector<size_t> tensors) {
  return [fn, tensors](Graph& g, const TorchNode& n, const Args& a) {
    const DType d = dtype_of(a.tensor(tensors.back()));
    if (g.opset() >= 9 || is_floating(d)) return std::vector<Value*>{fn(g, n, a)};
    std::vector<Value*> values = a.all();
    for (size_t i : tensors) values[i] = cast(g, a.tensor(i), DType::Float);
    return std::vector<Value*>{cast(g, fn(g, n, Args(values, n)), d)};
  };
}

// aten::bilinear(x1, x2, weight, bias): y_o = sum_ij x1_i W_oij x2_j + b_o over leading dims.
// x1 @ W (as [in1, out*in2]) gives [*, out*in2]; reshaped to [*, out, in2], times x2, summed.
Value* bilinear(Graph& g, const TorchNode& n, const Args& a) {
  Value* x1 = a.tensor(0);
  Value* x2 = a.tensor(1);
  Value* w = a.tensor(2);
  Value* bias = a.size() > 3 ? a.optional_tensor(3) : nullptr;
  auto w_shape = static_shape(w);
  if (!w_shape || w_shape->size() != 3)
    throw ArgumentError(n.kind + ": the weight needs a static [out, in1, in2] shape, got " + w->describe());
  const int64_t out = (*w_shape)[0], in1 = (*w_shape)[1], in2 = (*w_shape)[2];
  const int64_t rank = rank_of(x1, n.kind);
  Value* w_flat = reshape(g, transpose(g, w, {1, 0, 2}), std::vector<int64_t>{in1, out * in2});
  std::vector<int64_t> split_shape(static_cast<size_t>(rank - 1), 0);  // Reshape's 0 keeps leading dims
  split_shape.insert(split_shape.end(), {out, in2});
  Value* per_out = reshape(g, g.op("MatMul", {x1, w_flat}), split_shape);
  Value* y = reduce(g, "ReduceSum", g.op("Mul", {per_out, unsqueeze(g, x2, {rank - 1})}), {rank}, false);
  return bias ? g.op("Add", {y, bias}) : y;
}

}  // namespace

void add_linear(Registrar& r) {
  r.add("aten::linear", 9, linear);
  r.add("aten::bilinear", 9, bilinear);
  r.add("aten::addmm", 8, float_before_9(addmm, {0, 1, 2}));
  for (const char* op : {"aten::matmul", "aten::mm", "aten::bmm"}) r.add(op, 8, float_before_9(matmul, {0, 1}));
}

}  // namespace onnxport::nn
