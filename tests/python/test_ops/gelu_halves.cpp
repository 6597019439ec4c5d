// A custom torch op for the Python op-pack tests: gelu of x, split in two halves along `dim`
// (the second half takes the odd element). Two outputs, an int argument, a size the symbolic
// must read from the input's type.
#include <torch/library.h>
#include <torch/torch.h>

#include <tuple>

namespace {

std::tuple<at::Tensor, at::Tensor> gelu_halves(const at::Tensor& x, int64_t dim) {
  const at::Tensor y = at::gelu(x);
  const int64_t first = x.size(dim) / 2;
  return {y.narrow(dim, 0, first).contiguous(), y.narrow(dim, first, x.size(dim) - first).contiguous()};
}

}  // namespace

TORCH_LIBRARY(onnxport_test, m) { m.def("gelu_halves(Tensor x, int dim) -> (Tensor, Tensor)"); }
TORCH_LIBRARY_IMPL(onnxport_test, CPU, m) { m.impl("gelu_halves", gelu_halves); }
