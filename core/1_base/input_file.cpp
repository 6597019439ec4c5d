#include "1_base/input_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "onnxport/errors.h"

namespace onnxport::core {

void require_regular_file(const std::string& path, const std::string& role, const std::string& hint,
                          bool allow_empty) {
  const auto refuse = [&](const std::string& problem) {
    throw ConfigError(role + " '" + path + "' " + problem, ErrorContext::with_hint(hint));
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) refuse(std::string("cannot be opened: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) refuse("is a directory");
  if (!S_ISREG(st.st_mode)) refuse("is not a regular file (a FIFO, socket or device)");
  if (::access(path.c_str(), R_OK) != 0) refuse(std::string("cannot be read: ") + std::strerror(errno));
  if (!allow_empty && st.st_size == 0) refuse("is empty");
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return !a.empty() && !b.empty() && ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 &&
         sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace onnxport::core
