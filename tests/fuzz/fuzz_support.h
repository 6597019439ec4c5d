#pragma once
// Shared by the fuzz targets: the parsers under test read files by path, so each input is
// written to one in-memory file (memfd) and its /proc path is what they open.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace onnxport::fuzz {

// The path of a file holding exactly `data` (rewritten on every call).
inline const std::string& file_with(const uint8_t* data, size_t size) {
  static const int fd = ::memfd_create("onnxport-fuzz", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (::ftruncate(fd, 0) != 0 || (size > 0 && ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))) __builtin_trap();
  return path;
}

inline std::string text(const uint8_t* data, size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

}  // namespace onnxport::fuzz
