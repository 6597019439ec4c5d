#pragma once
// Output files that appear complete or not at all.
//
// The bytes go to an unnamed file (O_TMPFILE) in the destination's directory: a process killed
// while writing leaves nothing behind, since the kernel frees an unnamed file with its last
// descriptor. commit() names it (linkat) under a temporary name and renames that over the
// destination, so readers see the old file or the new one, never a partial one. Where the
// filesystem has no O_TMPFILE, the file is written under that temporary name from the start.
// Either way a temporary of ours whose process is gone (killed in the instant between linkat
// and rename, or during a fallback write) is removed by the next write to the same directory.
#include <ext/stdio_filebuf.h>

#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace onnxport::core {

// Tensor bytes go to output files in writes of at most this size: large enough that the system
// call's cost vanishes, small enough to report progress while writing gigabytes.
inline constexpr size_t kWriteChunkBytes = size_t{64} << 20;

class OutputFile {
 public:
  explicit OutputFile(std::string final_path);
  ~OutputFile();  // not committed: nothing of it remains
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return *stream_; }
  const std::string& path() const { return final_; }
  // Flushes; throws ExportError if any byte failed to reach the file (a full disk).
  void finish();
  // Puts the files in place, all under one lock on their directory, so that two exports to the
  // same output end with one export's files (a model and its external data belong together).
  static void commit_all(const std::vector<OutputFile*>& files);

 private:
  void commit_locked();
  std::string final_, named_tmp_;
  int fd_ = -1;
  bool unnamed_ = false, committed_ = false;
  std::unique_ptr<__gnu_cxx::stdio_filebuf<char>> buffer_;
  std::unique_ptr<std::ostream> stream_;
};

// Refuses (ConfigError) an output path that cannot be written or would destroy an input: a
// directory, a missing or read-only directory, one of `inputs` (the model, .npy files, the
// config). `role` names it in the message ("the output", "the external data file"). Run
// before any work.
void check_output_path(const std::string& path, const std::vector<std::string>& inputs,
                       const std::string& role = "the output");

std::string directory_of(const std::string& path);  // "." for a bare file name
std::string file_name_of(const std::string& path);

// The temporary name commit() uses for `final_path` in this process: ".NAME.onnxport-tmp-PID".
std::string temporary_name_for(const std::string& final_path, long pid);
// Removes temporaries of `final_path` (any pid) whose process no longer exists; returns how many.
int remove_stale_temporaries(const std::string& final_path);

}  // namespace onnxport::core
