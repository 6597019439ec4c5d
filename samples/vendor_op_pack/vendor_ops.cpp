// A vendor's proprietary torch op: vendor::fancy(x, alpha) = x * sigmoid(alpha * x), with a
// CPU kernel. Loaded into Python with torch.ops.load_library and into onnxport with
// --load-op-library.
#include <torch/library.h>
#include <ATen/ATen.h>

namespace {
at::Tensor fancy_cpu(const at::Tensor& x, double alpha) { return x * at::sigmoid(x * alpha); }
}  // namespace

TORCH_LIBRARY(vendor, m) { m.def("fancy(Tensor x, float alpha) -> Tensor"); }
TORCH_LIBRARY_IMPL(vendor, CPU, m) { m.impl("fancy", fancy_cpu); }
