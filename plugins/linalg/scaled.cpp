// beta * self + alpha * (product). beta = 0 drops self altogether (PyTorch ignores its NaNs
// then); factors of 1 add no Mul. (addcmul/addcdiv live in the elementwise pack.)
#include "linalg.h"
#include "onnxport/helpers.h"

namespace onnxport::linalg {
namespace {

using namespace helpers;

// v * the factor argument i (None: 1): a constant, or a number the model takes (run time).
Value* scaled(Graph& g, Value* v, const Args& a, size_t i) {
  if (a.is_none(i)) return v;
  if (auto factor = a.at(i)->maybe_float()) return *factor == 1.0 ? v : g.op("Mul", {v, scalar_like(g, *factor, v)});
  return g.op("Mul", {v, cast(g, a.tensor(i), v->dtype())});
}

// (self, x, y, *, beta=1, alpha=1): beta * self + alpha * product(x, y)
using Product = Value* (*)(Graph&, Value*, Value*);

template <Product product>
Value* add_scaled_product(Graph& g, const TorchNode&, const Args& a) {
  std::vector<Value*> xy = promote(g, {a.tensor(1), a.tensor(2)});
  Value* p = scaled(g, product(g, xy[0], xy[1]), a, 4);
  if (!a.is_none(3) && a.at(3)->maybe_float() == 0.0) return p;
  return g.op("Add", promote(g, {scaled(g, a.tensor(0), a, 3), p}));
}

Value* matmul(Graph& g, Value* x, Value* y) { return g.op("MatMul", {x, y}); }

}  // namespace

void add_scaled(Registrar& r) {
  add_with_inplace(r, "aten::addmv", 9, add_scaled_product<matmul>);
  add_with_inplace(r, "aten::baddbmm", 9, add_scaled_product<matmul>);
  add_with_inplace(r, "aten::addr", 9, add_scaled_product<outer_product>);
}

}  // namespace onnxport::linalg
