#pragma once
// Large buffers on transparent huge pages, where the kernel grants them on request only
// (Debian's default, "madvise"). A fresh 4 KiB page costs a page fault on first touch, and on a
// paravirtualized machine a second, costlier one the first time the kernel itself reads it (a
// write(2) of that memory). Measured on a 2-core AMD EPYC guest: writing 98 MB from fresh 4 KiB
// pages took 0.16-0.19 s, from fresh huge pages 0.02 s, from either once the kernel had read it
// 0.014 s.
#include <ATen/ATen.h>

#include <cstddef>

namespace onnxport::core {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// Called by a process whose libtorch CPU allocator already advises large buffers (the CLI):
// arenas then allocate every tensor from it (see HugePageArena).
void arenas_use_the_process_allocator();

// Advises the whole 2 MiB pages inside [data, data + bytes) when the range is at least 8 MiB
// (below that a buffer rarely holds a whole huge page). Advice only: where the kernel has THP
// off, nothing changes.
void advise_huge_pages(const void* data, size_t bytes);

// Tensors the export makes itself (fused weights, transposed copies), carved one after another
// from blocks that start on a 2 MiB boundary and are advised whole, so that tensors of a few MiB
// share huge pages; a tensor larger than a block gets a buffer of its own. A block lives as long
// as any tensor carved from it. Not thread-safe: one arena per thread.
//
// Where the process allocates through the CLI's advising allocator (core/5_cli/huge_pages.cpp,
// jemalloc beneath), arenas hand out that allocator's buffers instead: jemalloc reuses what the
// type-recording run and the replaced parameters free, and blocks of their own, which it cannot
// serve from those pieces, raised vit_b_16's peak RSS from 608-626 MiB to 631-642 MiB, past its
// 630 MiB budget (the export 0.3-0.6 s faster; alternating runs on a 2-core AMD EPYC guest).
class HugePageArena {
 public:
  static constexpr size_t kAlignment = 64;  // of each carved tensor, as libtorch aligns CPU buffers

  explicit HugePageArena(size_t block_bytes = size_t{32} << 20) : block_bytes_(block_bytes) {}
  // A contiguous, uninitialized tensor; below 64 KiB a plain libtorch one.
  at::Tensor empty(at::IntArrayRef sizes, at::ScalarType dtype);
  // A contiguous copy of `t` (a transposed view's values), from empty().
  at::Tensor copy_of(const at::Tensor& t);

 private:
  size_t block_bytes_;
  at::Tensor block_;
  size_t used_ = 0;
};

}  // namespace onnxport::core
