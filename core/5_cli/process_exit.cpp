#include "5_cli/process_exit.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ONNXPORT_EXIT_WITH_TEARDOWN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ONNXPORT_EXIT_WITH_TEARDOWN 1
#endif

namespace onnxport::cli {

void exit_without_teardown(int code) {
#ifdef ONNXPORT_EXIT_WITH_TEARDOWN
  std::exit(code);
#else
  std::cout.flush();
  std::cerr.flush();
  std::clog.flush();
  std::fflush(nullptr);
  std::_Exit(code);
#endif
}

}  // namespace onnxport::cli
