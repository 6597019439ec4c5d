// Tensors of a complex dtype made from sizes: a real pair [..., 2] holding (fill, 0).
#include "onnxport/helpers.h"
#include "spectral.h"

namespace onnxport::spectral {
namespace {

using namespace helpers;

// fill + 0i broadcast to `shape` (the pair's shape, trailing 2 included).
Value* filled_pair(Graph& g, const TorchNode& n, Value* shape, double fill) {
  const DType dtype = real_dtype(n.output_types.at(0).dtype);
  return g.op("Expand", {g.constant(real_tensor(dtype, {2}, {fill, 0.0})), shape});
}

Value* pair_shape_of_sizes(Graph& g, Value* sizes) { return concat(g, {int_list(g, sizes), g.constant_ints({2})}, 0); }

Value* pair_shape_like(Graph& g, Value* like) {
  return like->is_complex() ? shape_of(g, like) : concat(g, {shape_of(g, like), g.constant_ints({2})}, 0);
}

double fill_value(const TorchNode& n, const Args& a, size_t i) {
  const auto v = a.at(i)->maybe_float();
  if (!v)
    throw ArgumentError(n.kind + ": the fill value of a complex tensor must be a real number known at export time, got " +
                        a.at(i)->describe());
  return *v;
}

}  // namespace

void add_complex_creation(Registrar& r) {
  r.add_complex("aten::zeros", 9, [](Graph& g, const TorchNode& n, const Args& a) {
    return filled_pair(g, n, pair_shape_of_sizes(g, a.at(0)), 0.0);
  });
  r.add_complex("aten::ones", 9, [](Graph& g, const TorchNode& n, const Args& a) {
    return filled_pair(g, n, pair_shape_of_sizes(g, a.at(0)), 1.0);
  });
  r.add_complex("aten::full", 9, [](Graph& g, const TorchNode& n, const Args& a) {
    return filled_pair(g, n, pair_shape_of_sizes(g, a.at(0)), fill_value(n, a, 1));
  });
  r.add_complex("aten::zeros_like", 9, [](Graph& g, const TorchNode& n, const Args& a) {
    return filled_pair(g, n, pair_shape_like(g, a.tensor(0)), 0.0);
  });
  r.add_complex("aten::ones_like", 9, [](Graph& g, const TorchNode& n, const Args& a) {
    return filled_pair(g, n, pair_shape_like(g, a.tensor(0)), 1.0);
  });
  r.add_complex("aten::full_like", 9, [](Graph& g, const TorchNode& n, const Args& a) {
    return filled_pair(g, n, pair_shape_like(g, a.tensor(0)), fill_value(n, a, 1));
  });
}

}  // namespace onnxport::spectral
