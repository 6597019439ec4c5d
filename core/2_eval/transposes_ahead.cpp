#include "2_eval/transposes_ahead.h"

namespace onnxport::core {

TransposesAhead::TransposesAhead(std::vector<at::Tensor> sources, size_t max_bytes) {
  size_t bytes = 0;
  for (const auto& s : sources)
    if (s.dim() == 2 && s.is_contiguous() && !s.requires_grad()) {
      sources_.push_back(s);
      bytes += s.nbytes();
    }
  if (std::thread::hardware_concurrency() < 2 || bytes > max_bytes || sources_.empty()) {
    sources_.clear();
    return;
  }
  results_.resize(sources_.size());
  taken_.assign(sources_.size(), false);
  worker_ = std::thread([this] { run(); });
}

void TransposesAhead::pause(bool paused) {
  std::lock_guard<std::mutex> lock(mutex_);
  paused_ = paused;
  resumed_.notify_all();
}

TransposesAhead::~TransposesAhead() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    resumed_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
}

void TransposesAhead::run() {
  for (size_t i = 0; i < sources_.size(); ++i) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      resumed_.wait(lock, [&] { return !paused_ || stop_; });
      if (stop_) return;
    }
    at::Tensor t;
    try {
      t = sources_[i].t().contiguous();
    } catch (const std::exception&) {
      // Left undefined: the fold pass then transposes it itself.
    }
    std::lock_guard<std::mutex> lock(mutex_);
    results_[i] = std::move(t);
    done_ = i + 1;
    finished_one_.notify_all();
    if (stop_) return;
  }
}

std::optional<at::Tensor> TransposesAhead::take(const at::Tensor& source) {
  for (size_t i = 0; i < sources_.size(); ++i) {
    const at::Tensor& s = sources_[i];
    if (s.data_ptr() != source.data_ptr() || s.sizes() != source.sizes() || s.strides() != source.strides() ||
        s.scalar_type() != source.scalar_type())
      continue;
    std::unique_lock<std::mutex> lock(mutex_);
    if (taken_[i]) return std::nullopt;
    paused_ = false;
    resumed_.notify_all();
    finished_one_.wait(lock, [&] { return done_ > i; });
    taken_[i] = true;
    at::Tensor result = std::move(results_[i]);
    if (!result.defined()) return std::nullopt;
    return result;
  }
  return std::nullopt;
}

}  // namespace onnxport::core
