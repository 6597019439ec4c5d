#pragma once

namespace onnxport::cli {
// Ends the process once a command is done: flushes the C++ streams and C stdio, then exits
// without running static destructors and atexit handlers. Those are libtorch's teardown (each of
// its thousands of operator registrations undone one by one, ~35 ms here) and the other loaded
// libraries'; nothing the command wrote depends on them: its files are complete and renamed into
// place before it returns. Sanitizer builds exit normally, so that LeakSanitizer still runs.
[[noreturn]] void exit_without_teardown(int code);
}  // namespace onnxport::cli
