#include <unistd.h>

#include <cstring>

#include "1_base/npy.h"
#include "onnxport/errors.h"
#include "onnxport/export.h"
#include "1_base/torch_tensors.h"

namespace onnxport {

namespace {

// A drawn input must fit in this machine's memory: the shape is checked before allocating.
void check_fits_in_memory(const InputSpec& spec) {
  const uint64_t memory = static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(::sysconf(_SC_PAGE_SIZE));
  uint64_t bytes = dtype_size(spec.dtype);
  for (int64_t d : spec.shape) {
    if (d == 0) return;
    if (bytes > memory / static_cast<uint64_t>(d)) {
      bytes = memory + 1;
      break;
    }
    bytes *= static_cast<uint64_t>(d);
  }
  if (bytes > memory)
    throw ConfigError("--input '" + spec.text() + "': input '" + spec.name + "' would need more than this machine's " +
                          std::to_string(memory >> 30) + " GiB of memory",
                      ErrorContext::with_hint("give the shape the model takes, e.g. 1x3x224x224"));
}

}  // namespace

std::vector<torch::jit::IValue> make_example_inputs(const std::vector<InputSpec>& specs, uint64_t seed) {
  std::vector<torch::jit::IValue> out;
  at::Generator gen = at::detail::createCPUGenerator(seed);
  for (const auto& spec : specs) {
    if (!spec.npy_file.empty()) {
      Tensor t = core::read_npy(spec.npy_file);
      at::Tensor a = at::empty(t.shape(), at::TensorOptions().dtype(core::scalar_type_of(t.dtype())));
      if (t.nbytes() > 0) std::memcpy(a.data_ptr(), t.data(), t.nbytes());
      out.emplace_back(a);
      continue;
    }
    check_fits_in_memory(spec);
    auto opts = at::TensorOptions().dtype(core::scalar_type_of(spec.dtype));
    if (is_floating(spec.dtype) || spec.dtype == DType::Complex64 || spec.dtype == DType::Complex128) {
      out.emplace_back(at::randn(spec.shape, gen, opts));  // complex: real and imaginary parts standard normal
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
