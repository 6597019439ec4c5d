#pragma once
// Waiting for TransposesAhead's worker: take() leaves a copy it has not begun to the caller, so a
// test that expects the worker's copies waits for them first.
#include <chrono>
#include <thread>

#include "2_eval/transposes_ahead.h"

namespace onnxport::core_test {

// True once `count` copies are made and not taken (false after 10 s).
inline bool wait_made(core::TransposesAhead& ahead, size_t count) {
  for (int waited_ms = 0; waited_ms < 10000; waited_ms += 5) {
    if (ahead.made() >= count) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

}  // namespace onnxport::core_test
