#pragma once
// Files the user hands in (the model, --config, .npy inputs, .onnx files to inspect) are
// checked before anything opens them: a directory would read as garbage or fail obscurely,
// a FIFO or device would block the export forever.
#include <string>

namespace onnxport::core {

// Throws ConfigError "<role> '<path>' <problem>" (missing, a directory, not a regular file,
// unreadable, or empty when `allow_empty` is false), with `hint`.
void require_regular_file(const std::string& path, const std::string& role, const std::string& hint,
                          bool allow_empty = true);

// Whether two paths name the same existing file (same device and inode).
bool same_file(const std::string& a, const std::string& b);

}  // namespace onnxport::core
