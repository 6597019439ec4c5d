#pragma once
// Weight transposes computed on a second thread while the export does other work on one core:
// folding Transpose(weight) for every Linear (MatMul reads W^T) is a copy of most parameter bytes
// (swin_t: ~100 MB). Started before a loaded module is frozen (or once a traced graph is
// prepared), the copies are made while the export freezes and converts the graph; they pause
// while the model runs to record types, since OpenBLAS's products then use both cores. The fold
// pass takes a finished copy instead of making it.
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
  // While paused, the worker starts no new transpose: the model's runs use both cores. take()
  // resumes it, so that it never waits for a paused worker.
  void pause(bool paused);

 private:
  void run();

  std::vector<at::Tensor> sources_;
  std::vector<at::Tensor> results_;  // filled in order by the worker
  std::vector<bool> taken_;
  size_t done_ = 0;
  bool stop_ = false;
  bool paused_ = false;
  std::condition_variable resumed_;
  std::mutex mutex_;
  std::condition_variable finished_one_;
  std::thread worker_;
};

}  // namespace onnxport::core
