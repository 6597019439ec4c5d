// HugePageArena (1_base/huge_pages.h): tensors carved one after another from 2 MiB-aligned buffers
// advised for transparent huge pages, each tensor its own bytes, alive for as long as it is used.
#include "doctest_torch.h"  // before any libtorch header

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "1_base/huge_pages.h"

using onnxport::core::HugePageArena;
using onnxport::core::kHugePageBytes;

namespace {

uintptr_t address(const at::Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); }

// The "THPeligible" line of the mapping in /proc/self/smaps that holds `p`: 1 when the mapping is
// advised for huge pages (or the kernel gives them to every mapping); -1 if not found.
int thp_eligible(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t start = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> start >> dash >> end && dash == '-') {
      inside = start <= at && at < end;
      continue;
    }
    if (inside && line.rfind("THPeligible:", 0) == 0) return std::stoi(line.substr(12));
  }
  return -1;
}

std::string thp_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(f, text);
  return text;
}

}  // namespace

TEST_CASE("tensors carved from a huge-page arena follow each other, hold their own values and outlive it") {
  at::Tensor a, b, past, small;
  {
    HugePageArena arena(size_t{4} << 20);
    a = arena.empty({256, 512}, at::kFloat);          // 512 KiB
    b = arena.empty({3, 100001}, at::kDouble);        // 2.3 MiB, not a multiple of 64 bytes
    past = arena.empty({int64_t{5} << 20}, at::kByte);  // larger than a block: a buffer of its own
    small = arena.empty({10}, at::kFloat);            // a plain libtorch buffer
    for (const at::Tensor* t : {&a, &b, &past, &small}) CHECK(t->is_contiguous());
    CHECK(a.sizes().vec() == std::vector<int64_t>{256, 512});
    CHECK((b.scalar_type() == at::kDouble));
    CHECK(address(a) % kHugePageBytes == 0);
    CHECK(address(b) == address(a) + a.nbytes());
    CHECK(address(past) % kHugePageBytes == 0);  // a block of its own
    CHECK((address(past) + past.nbytes() <= address(a) || address(past) >= address(b) + b.nbytes()));
    a.fill_(1.5);
    b.fill_(-2.0);
    past.fill_(7);
    small.fill_(3.0);
    // The next carve starts 64-byte aligned, right after b's bytes rounded up: the large one
    // took nothing from the block.
    const at::Tensor c = arena.empty({32768}, at::kFloat);  // 128 KiB
    CHECK(address(c) == (address(b) + b.nbytes() + 63) / 64 * 64);
    c.fill_(9.0);
  }
  // The arena is gone; the blocks live on in the tensors, and no fill reached another tensor.
  CHECK(a.eq(1.5).all().item<bool>());
  CHECK(b.eq(-2.0).all().item<bool>());
  CHECK(past.eq(7).all().item<bool>());
  CHECK(small.eq(3.0).all().item<bool>());
}

TEST_CASE("an arena's buffers are advised for transparent huge pages") {
  const std::string mode = thp_mode();
  if (mode.empty() || mode.find("[never]") != std::string::npos) {
    MESSAGE("transparent huge pages are off on this kernel (" << mode << "): nothing to check");
    return;
  }
  HugePageArena arena;
  const at::Tensor t = arena.empty({1024, 1024}, at::kFloat);
  t.zero_();
  CHECK(thp_eligible(t.data_ptr()) == 1);
  // A plain allocation of the same size is not advised where huge pages come on request only.
  if (mode.find("[madvise]") != std::string::npos) {
    const at::Tensor plain = at::zeros({1024, 1024});
    CHECK(thp_eligible(plain.data_ptr()) == 0);
  }
}
