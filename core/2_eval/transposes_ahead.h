#pragma once
// Weight transposes computed on a second thread while the export does other work. libtorch runs
// one intra-op thread here, so the export uses one core; folding Transpose(weight) for every
// Linear (MatMul reads W^T) is a copy of most parameter bytes (swin_t: ~100 MB). Started before
// a loaded module is frozen (or once a traced graph is prepared), the copies are made while the
// export freezes, runs the model to record types and converts the graph; the fold pass then
// takes a finished copy instead of making it.
#include <ATen/ATen.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace onnxport::core {

class TransposesAhead {
 public:
  // Starts transposing each 2-d contiguous tensor of `sources` (a no-op with one core, or when
  // the copies would hold more than `max_bytes` at once beside their sources).
  TransposesAhead(std::vector<at::Tensor> sources, size_t max_bytes);
  ~TransposesAhead();
  TransposesAhead(const TransposesAhead&) = delete;
  TransposesAhead& operator=(const TransposesAhead&) = delete;

  // The contiguous transpose of `source` if `source` has the bytes, sizes and dtype of one
  // started here (waiting for it if it is being made); nullopt otherwise. Each is given once.
  std::optional<at::Tensor> take(const at::Tensor& source);
  size_t started() const { return sources_.size(); }

 private:
  void run();

  std::vector<at::Tensor> sources_;
  std::vector<at::Tensor> results_;  // filled in order by the worker
  std::vector<bool> taken_;
  size_t done_ = 0;
  bool stop_ = false;
  std::mutex mutex_;
  std::condition_variable finished_one_;
  std::thread worker_;
};

}  // namespace onnxport::core
