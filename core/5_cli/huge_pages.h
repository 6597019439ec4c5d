#pragma once

namespace onnxport::cli {
// Asks the kernel for transparent huge pages behind every large CPU buffer libtorch allocates
// from now on (parameters read by torch::jit::load, folded copies, activations). The CLI owns
// its process, so it may change libtorch's allocator; the Python module, a guest in the user's
// process, does not.
void use_huge_pages_for_large_buffers();
}  // namespace onnxport::cli
