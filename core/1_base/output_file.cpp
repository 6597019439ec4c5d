#include "1_base/output_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "1_base/input_file.h"
#include "onnxport/errors.h"

namespace onnxport::core {

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

std::string file_name_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

namespace {

std::string temporary_prefix(const std::string& final_path) { return "." + file_name_of(final_path) + ".onnxport-tmp-"; }

[[noreturn]] void fail(const std::string& what, const std::string& path, int error) {
  throw ExportError(what + " '" + path + "': " + std::strerror(error),
                    ErrorContext::with_hint(error == ENOSPC || error == EFBIG || error == EDQUOT
                                                ? "free space on the output's file system (or raise the file size limit)"
                                                : "check that the output directory exists and is writable"));
}

bool process_exists(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

}  // namespace

std::string temporary_name_for(const std::string& final_path, long pid) {
  return directory_of(final_path) + "/" + temporary_prefix(final_path) + std::to_string(pid);
}

int remove_stale_temporaries(const std::string& final_path) {
  const std::string dir = directory_of(final_path), prefix = temporary_prefix(final_path);
  DIR* listing = ::opendir(dir.c_str());
  if (!listing) return 0;
  int removed = 0;
  while (const dirent* entry = ::readdir(listing)) {
    const std::string name = entry->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (pid <= 0 || *end != '\0' || process_exists(pid)) continue;
    if (::unlink((dir + "/" + name).c_str()) == 0) ++removed;
  }
  ::closedir(listing);
  return removed;
}

void check_output_path(const std::string& path, const std::vector<std::string>& inputs, const std::string& role) {
  const auto refuse = [&](const std::string& what, const std::string& hint) {
    throw ConfigError(role + " '" + path + "' " + what, ErrorContext::with_hint(hint));
  };
  if (path.empty()) refuse("is empty", "give -o FILE.onnx");
  struct stat out {};
  if (::stat(path.c_str(), &out) == 0) {
    if (S_ISDIR(out.st_mode)) refuse("is a directory", "give a file name, e.g. " + path + "/model.onnx");
    for (const auto& input : inputs)
      if (same_file(path, input))
        refuse("is the same file as '" + input + "', an input of this export (writing would destroy it)",
               "give another output file name");
  }
  const std::string dir = directory_of(path);
  struct stat d {};
  if (::stat(dir.c_str(), &d) != 0) refuse("is in '" + dir + "', which does not exist", "create the directory first");
  if (!S_ISDIR(d.st_mode)) refuse("is in '" + dir + "', which is not a directory", "give a path in a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    refuse("cannot be written: '" + dir + "' is not writable (" + std::strerror(errno) + ")",
           "write to a directory you can write to");
}

OutputFile::OutputFile(std::string final_path)
    : final_(std::move(final_path)), named_tmp_(temporary_name_for(final_, ::getpid())) {
  struct stat st {};
  if (::stat(final_.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw ConfigError("the output '" + final_ + "' is a directory",
                      ErrorContext::with_hint("give a file name, e.g. " + final_ + "/model.onnx"));
  remove_stale_temporaries(final_);
  fd_ = ::open(directory_of(final_).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  unnamed_ = fd_ >= 0;
  if (!unnamed_) {
    // No O_TMPFILE on this file system (EOPNOTSUPP, EISDIR from old kernels): a named temporary.
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR || error == EACCES || error == EROFS) fail("cannot write", final_, error);
    fd_ = ::open(named_tmp_.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0666);
    if (fd_ < 0) fail("cannot write", final_, errno);
  }
  buffer_ = std::make_unique<__gnu_cxx::stdio_filebuf<char>>(fd_, std::ios::out | std::ios::binary, size_t{1} << 20);
  stream_ = std::make_unique<std::ostream>(buffer_.get());
}

OutputFile::~OutputFile() {
  stream_.reset();
  buffer_.reset();  // closes the descriptor: an unnamed file is gone with it
  if (!committed_ && !unnamed_) ::unlink(named_tmp_.c_str());
}

void OutputFile::finish() {
  stream_->flush();
  if (!*stream_) {
    const int error = errno ? errno : EIO;
    fail("writing", final_, error);
  }
}

void OutputFile::commit_locked() {
  if (unnamed_) {
    const std::string self = "/proc/self/fd/" + std::to_string(fd_);
    ::unlink(named_tmp_.c_str());  // left by an earlier process with our pid
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, named_tmp_.c_str(), AT_SYMLINK_FOLLOW) != 0 &&
        ::linkat(fd_, "", AT_FDCWD, named_tmp_.c_str(), AT_EMPTY_PATH) != 0)
      fail("cannot create", named_tmp_, errno);
  }
  if (::rename(named_tmp_.c_str(), final_.c_str()) != 0) {
    const int error = errno;
    ::unlink(named_tmp_.c_str());
    fail("cannot move the written file to", final_, error);
  }
  committed_ = true;
}

void OutputFile::commit_all(const std::vector<OutputFile*>& files) {
  if (files.empty()) return;
  const int dir = ::open(directory_of(files.front()->final_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) ::flock(dir, LOCK_EX);
  try {
    for (OutputFile* f : files) f->commit_locked();
  } catch (...) {
    if (dir >= 0) ::close(dir);
    throw;
  }
  if (dir >= 0) ::close(dir);  // closing releases the lock
}

}  // namespace onnxport::core
