#include "1_base/zip_archive.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>

#include "onnxport/errors.h"

namespace onnxport::core {

namespace {

constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint16_t kZip64Extra = 0x0001;

uint64_t little_endian(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

[[noreturn]] void not_a_zip(const std::string& path, const std::string& why) {
  throw ModelError("'" + path + "' is not a readable zip archive (" + why + ")",
                   ErrorContext::for_file(path, "give a file written by torch.export.save, torch.save or torch.jit.save"));
}

}  // namespace

bool ZipArchive::looks_like_zip(const std::string& path) {
  // Only a regular file is opened here: opening a named pipe would wait for a writer (the loader
  // then refuses it in one line).
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && little_endian(magic, 4) == kLocalHeader;
}

ZipArchive::ZipArchive(std::string path) : path_(std::move(path)), file_(path_, std::ios::binary) {
  if (!file_) not_a_zip(path_, "it cannot be opened");
  file_.seekg(0, std::ios::end);
  const uint64_t file_size = static_cast<uint64_t>(file_.tellg());
  // The end-of-directory record closes the file, followed by a comment of at most 64 KiB.
  const uint64_t tail_size = std::min<uint64_t>(file_size, 22 + 65535);
  std::string tail(tail_size, '\0');
  file_.seekg(static_cast<std::streamoff>(file_size - tail_size));
  file_.read(tail.data(), static_cast<std::streamsize>(tail_size));
  size_t end = std::string::npos;
  for (size_t i = tail_size >= 22 ? tail_size - 22 + 1 : 0; i-- > 0;)
    if (little_endian(&tail[i], 4) == kEndOfDirectory) {
      end = i;
      break;
    }
  if (end == std::string::npos) not_a_zip(path_, "no end-of-directory record");
  uint64_t count = little_endian(&tail[end + 10], 2);
  uint64_t directory_size = little_endian(&tail[end + 12], 4);
  uint64_t directory_offset = little_endian(&tail[end + 16], 4);
  if (end >= 20 && little_endian(&tail[end - 20], 4) == kZip64Locator) {
    const uint64_t record_offset = little_endian(&tail[end - 20 + 8], 8);
    std::array<char, 56> record{};
    file_.seekg(static_cast<std::streamoff>(record_offset));
    if (!file_.read(record.data(), record.size()) || little_endian(record.data(), 4) != kZip64EndOfDirectory)
      not_a_zip(path_, "a damaged zip64 end-of-directory record");
    count = little_endian(&record[32], 8);
    directory_size = little_endian(&record[40], 8);
    directory_offset = little_endian(&record[48], 8);
  }
  if (directory_offset + directory_size > file_size) not_a_zip(path_, "its directory lies beyond its end");
  std::string directory(directory_size, '\0');
  file_.seekg(static_cast<std::streamoff>(directory_offset));
  file_.read(directory.data(), static_cast<std::streamsize>(directory_size));
  size_t at = 0;
  for (uint64_t k = 0; k < count; ++k) {
    if (at + 46 > directory.size() || little_endian(&directory[at], 4) != kCentralHeader)
      not_a_zip(path_, "a damaged directory entry");
    Entry entry;
    entry.method = static_cast<uint16_t>(little_endian(&directory[at + 10], 2));
    entry.stored_size = little_endian(&directory[at + 20], 4);
    entry.size = little_endian(&directory[at + 24], 4);
    const size_t name_length = little_endian(&directory[at + 28], 2);
    const size_t extra_length = little_endian(&directory[at + 30], 2);
    const size_t comment_length = little_endian(&directory[at + 32], 2);
    entry.header_offset = little_endian(&directory[at + 42], 4);
    if (at + 46 + name_length + extra_length + comment_length > directory.size())
      not_a_zip(path_, "a damaged directory entry");
    const std::string name = directory.substr(at + 46, name_length);
    // Sizes and offset that do not fit 32 bits are in the zip64 extra field, in this order.
    for (size_t e = at + 46 + name_length; e + 4 <= at + 46 + name_length + extra_length;) {
      const uint64_t id = little_endian(&directory[e], 2);
      const size_t length = little_endian(&directory[e + 2], 2);
      size_t field = e + 4;
      if (id == kZip64Extra) {
        for (uint64_t* value : {&entry.size, &entry.stored_size, &entry.header_offset})
          if (*value == 0xffffffffu && field + 8 <= e + 4 + length) {
            *value = little_endian(&directory[field], 8);
            field += 8;
          }
      }
      e += 4 + length;
    }
    entries_.emplace(name, entry);
    at += 46 + name_length + extra_length + comment_length;
  }
}

std::vector<std::string> ZipArchive::names() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& [name, entry] : entries_) out.push_back(name);
  return out;
}

ZipArchive::Stored ZipArchive::stored(const std::string& name) {
  const auto found = entries_.find(name);
  if (found == entries_.end())
    throw ModelError("'" + path_ + "' has no entry '" + name + "'",
                     ErrorContext::for_file(path_, "save it again with the PyTorch that made it"));
  const Entry& entry = found->second;
  if (entry.method != 0 || entry.stored_size != entry.size)
    throw ModelError("'" + path_ + "': entry '" + name + "' is compressed (zip method " + std::to_string(entry.method) +
                         "); PyTorch writes its archives uncompressed",
                     ErrorContext::for_file(path_, "save it again with torch.export.save instead of re-zipping it"));
  std::array<char, 30> header{};
  file_.clear();
  file_.seekg(static_cast<std::streamoff>(entry.header_offset));
  if (!file_.read(header.data(), header.size()) || little_endian(header.data(), 4) != kLocalHeader)
    not_a_zip(path_, "entry '" + name + "' has a damaged header");
  const uint64_t data_offset =
      entry.header_offset + 30 + little_endian(&header[26], 2) + little_endian(&header[28], 2);
  return {data_offset, entry.size};
}

void ZipArchive::read_at(uint64_t offset, void* into, uint64_t size) {
  file_.clear();
  file_.seekg(static_cast<std::streamoff>(offset));
  if (!file_.read(static_cast<char*>(into), static_cast<std::streamsize>(size)))
    not_a_zip(path_, "an entry ends beyond the file");
}

std::string ZipArchive::read(const std::string& name) {
  const Stored where = stored(name);
  std::string bytes(where.size, '\0');
  read_at(where.offset, bytes.data(), where.size);
  return bytes;
}

}  // namespace onnxport::core
