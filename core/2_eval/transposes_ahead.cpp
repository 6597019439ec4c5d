#include "2_eval/transposes_ahead.h"

#include <algorithm>

#include "1_base/huge_pages.h"

namespace onnxport::core {

TransposesAhead::TransposesAhead(std::vector<at::Tensor> sources, size_t max_bytes) : max_bytes_(max_bytes) {
  if (std::thread::hardware_concurrency() < 2) return;
  for (auto& s : sources)
    if (s.dim() == 2 && s.is_contiguous() && !s.requires_grad()) {
      identities_.push_back(Identity{s.data_ptr(), s.sizes().vec(), s.scalar_type(), s.nbytes()});
      sources_.push_back(std::move(s));
    }
  if (sources_.empty()) return;
  results_.resize(sources_.size());
  states_.assign(sources_.size(), State::Waiting);
  worker_ = std::thread([this] { run(); });
}

void TransposesAhead::pause(bool paused) {
  std::lock_guard<std::mutex> lock(mutex_);
  paused_ = paused;
  changed_.notify_all();
}

TransposesAhead::~TransposesAhead() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    changed_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
}

void TransposesAhead::run() {
  HugePageArena arena;  // the copies are written out from here: see huge_pages.h
  for (size_t i = 0; i < sources_.size(); ++i) {
    at::Tensor source;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const size_t bytes = identities_[i].bytes;
      changed_.wait(lock, [&] {
        return stop_ || states_[i] != State::Waiting || (!paused_ && held_bytes_ + bytes <= max_bytes_);
      });
      if (stop_) return;
      if (states_[i] != State::Waiting) continue;  // asked for before it began: the caller makes it
      states_[i] = State::Making;
      held_bytes_ += bytes;
      source = sources_[i];
    }
    at::Tensor t;
    try {
      t = arena.copy_of(source.t());
    } catch (const std::exception&) {
      // Left undefined: the fold pass then transposes it itself.
    }
    source = at::Tensor();
    std::lock_guard<std::mutex> lock(mutex_);
    results_[i] = std::move(t);
    states_[i] = State::Made;
    changed_.notify_all();
  }
}

size_t TransposesAhead::made() {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<size_t>(std::count(states_.begin(), states_.end(), State::Made));
}

std::optional<at::Tensor> TransposesAhead::take(const at::Tensor& source) {
  for (size_t i = 0; i < identities_.size(); ++i) {
    const Identity& id = identities_[i];
    if (id.data != source.data_ptr() || source.sizes() != at::IntArrayRef(id.sizes) || !source.is_contiguous() ||
        source.scalar_type() != id.dtype)
      continue;
    std::unique_lock<std::mutex> lock(mutex_);
    if (states_[i] == State::Gone) return std::nullopt;
    paused_ = false;
    const bool begun = states_[i] != State::Waiting;
    changed_.wait(lock, [&] { return states_[i] != State::Making; });
    at::Tensor result = std::move(results_[i]);
    if (begun) held_bytes_ -= id.bytes;
    states_[i] = State::Gone;
    sources_[i] = at::Tensor();
    changed_.notify_all();
    if (!result.defined()) return std::nullopt;
    return result;
  }
  return std::nullopt;
}

}  // namespace onnxport::core
