#pragma once
// Weight transposes computed on a second thread while the export does other work on one core:
// folding Transpose(weight) for every Linear (MatMul reads W^T) is a copy of most parameter bytes
// (swin_t: ~100 MB). Started before a loaded module is frozen (or once a traced graph is
// prepared), the copies are made while the export freezes and converts the graph; they pause
// while the model runs to record types, since OpenBLAS's products then use both cores. The fold
// pass takes a finished copy instead of making it, and makes itself one the worker has not begun.
//
// Memory: a copy sits beside its source until the fold takes it (the source then goes with the
// initializer the copy replaces), so the copies made and not yet taken are what the export holds
// above its parameters for them; the worker starts no copy that would take those past `max_bytes`.
#include <ATen/ATen.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace onnxport::core {

class TransposesAhead {
 public:
  // Transposes each 2-d contiguous tensor of `sources` (nothing with one core), holding at most
  // `max_bytes` of copies not yet taken.
  TransposesAhead(std::vector<at::Tensor> sources, size_t max_bytes);
  ~TransposesAhead();
  TransposesAhead(const TransposesAhead&) = delete;
  TransposesAhead& operator=(const TransposesAhead&) = delete;

  // The contiguous transpose of `source` if `source` has the bytes, sizes and dtype of one given
  // here and the worker made it (waiting for it if it is being made); nullopt otherwise — also for
  // one the worker has not begun, which it then leaves to the caller. Each is given once, and the
  // source is let go once asked for.
  std::optional<at::Tensor> take(const at::Tensor& source);
  size_t started() const { return identities_.size(); }
  // How many copies the worker has made that are not taken yet (tests wait for them before taking).
  size_t made();
  // While paused, the worker starts no new transpose: the model's runs use both cores. take()
  // resumes it.
  void pause(bool paused);

 private:
  enum class State { Waiting, Making, Made, Gone };
  struct Identity {
    const void* data;
    std::vector<int64_t> sizes;
    at::ScalarType dtype;
    size_t bytes;
  };
  void run();

  std::vector<at::Tensor> sources_;  // each released (undefined) once asked for
  std::vector<Identity> identities_;
  std::vector<at::Tensor> results_;
  std::vector<State> states_;
  size_t held_bytes_ = 0;  // made or being made, not taken
  size_t max_bytes_;
  bool stop_ = false;
  bool paused_ = false;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::thread worker_;
};

}  // namespace onnxport::core
