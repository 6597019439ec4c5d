// libtorch's intra-op threads while onnxport runs a model (ExportOptions::threads).
//
// Debian 13's libtorch 2.6 starts one OpenMP thread per core, and its OpenBLAS starts as many
// again for matrix products: on 2 cores the two pools wait on each other, and vit_b_16's forward
// takes 1.36 s with libtorch's 2 threads against 0.35 s with 1 (docs/benchmarks.md). Debian 12's
// libtorch 1.13 already runs 1, so there the guard changes nothing.
#pragma once

namespace onnxport::core {

// Sets libtorch's intra-op threads to `wanted` for its lifetime and gives back the count it found.
// 0 leaves libtorch's setting alone; a count already in place is not set again (libtorch's native
// thread pool warns when its size is set after it started).
class IntraOpThreads {
 public:
  explicit IntraOpThreads(int wanted);
  ~IntraOpThreads();
  IntraOpThreads(const IntraOpThreads&) = delete;
  IntraOpThreads& operator=(const IntraOpThreads&) = delete;

 private:
  int found_ = 0;
  bool changed_ = false;
};

}  // namespace onnxport::core
