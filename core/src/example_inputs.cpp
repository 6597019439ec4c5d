#include <cstring>

#include "npy.h"
#include "onnxport/export.h"
#include "torch_graph.h"

namespace onnxport {

std::vector<torch::jit::IValue> make_example_inputs(const std::vector<InputSpec>& specs, uint64_t seed) {
  std::vector<torch::jit::IValue> out;
  at::Generator gen = at::detail::createCPUGenerator(seed);
  for (const auto& spec : specs) {
    if (!spec.npy_file.empty()) {
      Tensor t = core::read_npy(spec.npy_file);
      at::Tensor a = at::empty(t.shape(), at::TensorOptions().dtype(core::scalar_type_of(t.dtype())));
      std::memcpy(a.data_ptr(), t.data(), t.nbytes());
      out.emplace_back(a);
      continue;
    }
    auto opts = at::TensorOptions().dtype(core::scalar_type_of(spec.dtype));
    if (is_floating(spec.dtype)) {
      out.emplace_back(at::randn(spec.shape, gen, opts));
    } else if (spec.dtype == DType::Bool) {
      out.emplace_back(at::randint(0, 2, spec.shape, gen, at::TensorOptions().dtype(at::kLong)).to(at::kBool));
    } else {
      // Small non-negative integers keep index-like inputs (embeddings, gathers) valid.
      out.emplace_back(at::randint(0, 8, spec.shape, gen, opts));
    }
  }
  return out;
}

}  // namespace onnxport
