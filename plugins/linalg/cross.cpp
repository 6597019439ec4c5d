// Cross products of 3-vectors along a dim: a x b = a[1,2,0] * b[2,0,1] - a[2,0,1] * b[1,2,0]
// (Gather along the dim), broadcasting like PyTorch.
#include <algorithm>

#include "linalg.h"
#include "onnxport/helpers.h"

namespace onnxport::linalg {
namespace {

using namespace helpers;

Value* rolled(Graph& g, Value* v, int64_t axis, std::vector<int64_t> order) {
  return gather(g, v, g.constant_ints(order), axis);
}

Value* cross_along(Graph& g, const TorchNode& n, Value* a, Value* b, int64_t dim) {
  std::vector<Value*> xy = promote(g, {a, b});
  const int64_t ax = broadcast_axis(g, n, xy[0], dim, {a, b}), bx = broadcast_axis(g, n, xy[1], dim, {a, b});
  Value* first = g.op("Mul", {rolled(g, xy[0], ax, {1, 2, 0}), rolled(g, xy[1], bx, {2, 0, 1})});
  Value* second = g.op("Mul", {rolled(g, xy[0], ax, {2, 0, 1}), rolled(g, xy[1], bx, {1, 2, 0})});
  return g.op("Sub", {first, second});
}

// linalg_cross(self, other, *, dim=-1)
Value* linalg_cross(Graph& g, const TorchNode& n, const Args& a) {
  return cross_along(g, n, a.tensor(0), a.tensor(1), a.is_none(2) ? -1 : a.i(2));
}

// cross(self, other, dim=None): without a dim, the first dim of size 3 (deprecated in PyTorch).
Value* cross(Graph& g, const TorchNode& n, const Args& a) {
  Value *x = a.tensor(0), *y = a.tensor(1);
  if (!a.is_none(2)) return cross_along(g, n, x, y, a.i(2));
  auto shape = static_shape(x);
  if (!shape)
    throw ArgumentError(n.kind +
                        " without a dim needs the input's static shape to find its first dim of size 3 (found " +
                        x->describe() + "); pass dim explicitly");
  for (size_t d = 0; d < shape->size(); ++d)
    if ((*shape)[d] == 3) return cross_along(g, n, x, y, static_cast<int64_t>(d));
  throw ArgumentError(n.kind + ": no dimension of size 3 in " + x->describe());
}

}  // namespace

void add_cross(Registrar& r) {
  r.add("aten::cross", 9, cross);
  r.add("aten::linalg_cross", 9, linalg_cross);
}

}  // namespace onnxport::linalg
