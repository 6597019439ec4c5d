// Distances and similarities between vectors along the last (or a given) dim.
#include "linalg.h"
#include "onnxport/helpers.h"
#include "reduce_common.h"

namespace onnxport::linalg {
namespace {

using namespace helpers;

// cdist(x1 [..., P, M], x2 [..., R, M], p=2, compute_mode) -> [..., P, R]: the p-norm of
// every difference x1[..., i, :] - x2[..., j, :], computed as one broadcast [..., P, R, M].
Value* cdist(Graph& g, const TorchNode&, const Args& a) {
  std::vector<Value*> xy = promote(g, {a.tensor(0), a.tensor(1)});
  Value* diff = g.op("Sub", {unsqueeze(g, xy[0], {-2}), unsqueeze(g, xy[1], {-3})});
  return reduce::vector_norm(g, diff, a.is_none(2) ? 2.0 : a.f(2), {-1}, false);
}

// pairwise_distance(x1, x2, p=2, eps=1e-6, keepdim=False) = ||x1 - x2 + eps||_p over the last dim.
Value* pairwise_distance(Graph& g, const TorchNode&, const Args& a) {
  std::vector<Value*> xy = promote(g, {a.tensor(0), a.tensor(1)});
  Value* diff = g.op("Sub", {xy[0], xy[1]});
  const double eps = a.is_none(3) ? 1e-6 : a.f(3);
  if (eps != 0.0) diff = g.op("Add", {diff, scalar_like(g, eps, diff)});
  return reduce::vector_norm(g, diff, a.is_none(2) ? 2.0 : a.f(2), {-1}, !a.is_none(4) && a.b(4));
}

// x / max(||x||, eps) along the axis (kept).
Value* normalized(Graph& g, Value* x, int64_t axis, double eps) {
  Value* squared = helpers::reduce(g, "ReduceSum", g.op("Mul", {x, x}), {axis}, true);
  Value* norm = g.op("Sqrt", {g.op("Max", {squared, scalar_like(g, eps * eps, x)})});
  return g.op("Div", {x, norm});
}

// cosine_similarity(x1, x2, dim=1, eps=1e-8): the dot product of the two vectors, each divided
// by its norm clamped to at least eps (PyTorch's formulation).
Value* cosine_similarity(Graph& g, const TorchNode& n, const Args& a) {
  Value* x1 = to_float(g, a.tensor(0));
  Value* x2 = to_float(g, a.tensor(1));
  std::vector<Value*> xy = promote(g, {x1, x2});
  const int64_t dim = a.is_none(2) ? 1 : a.i(2);
  const double eps = a.is_none(3) ? 1e-8 : a.f(3);
  Value* n1 = normalized(g, xy[0], broadcast_axis(g, n, xy[0], dim, xy), eps);
  Value* n2 = normalized(g, xy[1], broadcast_axis(g, n, xy[1], dim, xy), eps);
  Value* product = g.op("Mul", {n1, n2});
  return helpers::reduce(g, "ReduceSum", product, {broadcast_axis(g, n, product, dim, {product})}, false);
}

}  // namespace

void add_distance(Registrar& r) {
  r.add("aten::cdist", 9, cdist);
  r.add("aten::pairwise_distance", 9, pairwise_distance);
  r.add("aten::cosine_similarity", 9, cosine_similarity);
}

}  // namespace onnxport::linalg
