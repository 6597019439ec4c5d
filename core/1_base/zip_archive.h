#pragma once
// The entries of a zip archive whose members are stored uncompressed, as PyTorch writes its
// archives (torch.save, torch.jit.save, torch.export.save): read by name, each in one piece.
// A compressed entry is refused in one line when it is read; zip64 archives (over 4 GiB) are read.
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace onnxport::core {

class ZipArchive {
 public:
  // Reads the central directory; a file that is not a zip archive is a ModelError naming it.
  explicit ZipArchive(std::string path);

  // Whether `path` is a regular file whose first bytes are a zip archive's (a local file header).
  static bool looks_like_zip(const std::string& path);

  const std::string& path() const { return path_; }
  std::vector<std::string> names() const;
  bool has(const std::string& name) const { return entries_.count(name) > 0; }
  // Where an entry's bytes lie in the file; a ModelError naming the archive and the entry when it
  // is missing or compressed.
  struct Stored {
    uint64_t offset = 0;
    uint64_t size = 0;
  };
  Stored stored(const std::string& name);
  // The entry's bytes (as `stored` refuses).
  std::string read(const std::string& name);
  // Copies `size` bytes of the file from `offset` into `into` (a part of a stored entry).
  void read_at(uint64_t offset, void* into, uint64_t size);

 private:
  struct Entry {
    uint64_t header_offset = 0;  // of its local file header
    uint64_t size = 0;           // uncompressed
    uint64_t stored_size = 0;    // compressed
    uint16_t method = 0;         // 0: stored
  };
  std::string path_;
  std::ifstream file_;
  std::map<std::string, Entry> entries_;
};

}  // namespace onnxport::core
