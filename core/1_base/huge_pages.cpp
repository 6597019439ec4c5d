#include "1_base/huge_pages.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdint>

namespace onnxport::core {

namespace {

constexpr size_t kAdviseFrom = 4 * kHugePageBytes;
constexpr size_t kCarveFrom = size_t{64} << 10;
std::atomic<bool> process_allocator_advises{false};

constexpr uintptr_t round_up(uintptr_t n, uintptr_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// From libtorch's allocator, one huge page more than needed, so that the buffer can start on a
// 2 MiB boundary (the bytes before it are never touched, so never resident).
at::Tensor huge_page_bytes(size_t bytes) {
  const size_t rounded = round_up(bytes, kHugePageBytes);
  const at::Tensor buffer = at::empty({static_cast<int64_t>(rounded + kHugePageBytes)}, at::kByte);
  const auto start = reinterpret_cast<uintptr_t>(buffer.data_ptr());
  const uintptr_t aligned = round_up(start, kHugePageBytes);
  ::madvise(reinterpret_cast<void*>(aligned), rounded, MADV_HUGEPAGE);
  return buffer.narrow(0, static_cast<int64_t>(aligned - start), static_cast<int64_t>(rounded));
}

}  // namespace

void arenas_use_the_process_allocator() { process_allocator_advises = true; }

void advise_huge_pages(const void* data, size_t bytes) {
  if (bytes < kAdviseFrom || data == nullptr) return;
  const auto start = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = round_up(start, kHugePageBytes);
  const uintptr_t last = (start + bytes) / kHugePageBytes * kHugePageBytes;
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

at::Tensor HugePageArena::empty(at::IntArrayRef sizes, at::ScalarType dtype) {
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  const size_t bytes = static_cast<size_t>(numel) * c10::elementSize(dtype);
  if (bytes < kCarveFrom || process_allocator_advises) return at::empty(sizes, dtype);
  auto carved = [&](const at::Tensor& block, size_t offset) {
    return at::from_blob(static_cast<uint8_t*>(block.data_ptr()) + offset, sizes, [block](void*) {},
                         at::TensorOptions(dtype));
  };
  if (bytes > block_bytes_) return carved(huge_page_bytes(bytes), 0);
  if (!block_.defined() || used_ + bytes > static_cast<size_t>(block_.numel())) {
    block_ = huge_page_bytes(block_bytes_);
    used_ = 0;
  }
  const size_t offset = used_;
  used_ += round_up(bytes, kAlignment);
  return carved(block_, offset);
}

at::Tensor HugePageArena::copy_of(const at::Tensor& t) {
  at::Tensor copy = empty(t.sizes(), t.scalar_type());
  copy.copy_(t);
  return copy;
}

}  // namespace onnxport::core
