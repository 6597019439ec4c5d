#include "5_cli/huge_pages.h"

#include <c10/core/CPUAllocator.h>

#include "1_base/huge_pages.h"
#include "1_base/torch_release.h"

namespace onnxport::cli {

namespace {

// Where transparent huge pages are granted only on request (Debian's default: "madvise"), every
// 4 KiB page of a fresh buffer costs a page fault: 800k of them for a 3.2 GB model's parameters.
// Measured here without the advice, torch::jit::load took 1.5-2.5x as long (alexnet, vit_b_16,
// a 3.2 GB MLP). The buffers stay the base allocator's (same pointer, same deleter); only the
// whole 2 MiB pages inside a buffer are advised, so nothing outside it changes.
class HugePageAdvisingAllocator final : public core::torch_release::ForwardingAllocator {
 public:
  using ForwardingAllocator::ForwardingAllocator;

 protected:
  void after_allocate(const c10::DataPtr& buffer, size_t n) const override {
    core::advise_huge_pages(buffer.get(), n);
  }
};

}  // namespace

void use_huge_pages_for_large_buffers() {
  static HugePageAdvisingAllocator allocator(c10::GetCPUAllocator());
  c10::SetCPUAllocator(&allocator, /*priority=*/1);
  core::arenas_use_the_process_allocator();
}

}  // namespace onnxport::cli
