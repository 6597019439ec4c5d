// What differs between the libtorch releases onnxport builds against: 1.13 (Debian 12) and 2.6
// (Debian 13), in the C++ API the core uses. The only place that knows (docs/architecture.md,
// "Releases"); libtorch's version macros decide, here alone.
#pragma once

#include <ATen/Context.h>
#include <c10/core/Allocator.h>
#include <torch/version.h>

#include <cstddef>

namespace onnxport::core::torch_release {

// The libtorch this build runs on: "1.13.1", "2.6.0" (named in messages about a file's operators).
inline constexpr const char* kVersion = TORCH_VERSION;
inline constexpr int kMajor = TORCH_VERSION_MAJOR;

// A CPU allocator that hands each request to `base` and may act on the buffer it returns
// (`after_allocate`). 2.x made c10::Allocator::allocate non-const and added copy_data, which
// goes to the base allocator too, so buffers keep the base's behaviour in both.
class ForwardingAllocator : public c10::Allocator {
 public:
  explicit ForwardingAllocator(c10::Allocator* base) : base_(base) {}

#if TORCH_VERSION_MAJOR >= 2
  c10::DataPtr allocate(size_t n) override { return forward(n); }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    base_->copy_data(dest, src, count);
  }
#else
  c10::DataPtr allocate(size_t n) const override { return forward(n); }
#endif
  c10::DeleterFnPtr raw_deleter() const override { return base_->raw_deleter(); }

 protected:
  virtual void after_allocate(const c10::DataPtr& buffer, size_t n) const = 0;

 private:
  c10::DataPtr forward(size_t n) const {
    c10::DataPtr buffer = base_->allocate(n);
    after_allocate(buffer, n);
    return buffer;
  }
  c10::Allocator* base_;
};

// Turns libtorch's oneDNN (mkldnn) kernels off for its lifetime, restoring the setting it found.
// libtorch 2.6's oneDNN LSTM computes 0.23 off its own math on an AMD EPYC (verify's reference
// run), and it reads an initial state whose batch differs from the input's past its end (a heap
// corruption, where 1.13 and the native kernel refuse): runs on grown or drawn inputs go without it.
class OneDnnOff {
 public:
  OneDnnOff() : was_(at::globalContext().userEnabledMkldnn()) { at::globalContext().setUserEnabledMkldnn(false); }
  ~OneDnnOff() { at::globalContext().setUserEnabledMkldnn(was_); }
  OneDnnOff(const OneDnnOff&) = delete;
  OneDnnOff& operator=(const OneDnnOff&) = delete;

 private:
  bool was_;
};

}  // namespace onnxport::core::torch_release
