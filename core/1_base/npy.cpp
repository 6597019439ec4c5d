#include "1_base/npy.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <fstream>
#include <map>

#include "1_base/input_file.h"
#include "onnxport/errors.h"

namespace onnxport::core {

namespace {

// The value text of `key` in a .npy header dict ("{'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }"), or nullopt when the key or its value is missing.
std::optional<std::string> dict_value(const std::string& header, const std::string& key) {
  const auto k = header.find("'" + key + "'");
  if (k == std::string::npos) return std::nullopt;
  const auto colon = header.find(':', k);
  if (colon == std::string::npos) return std::nullopt;
  const auto start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos) return std::nullopt;
  const auto end = header[start] == '(' ? header.find(')', start) : header.find_first_of(",}", start);
  if (end == std::string::npos) return std::nullopt;
  return header.substr(start, end - start + (header[start] == '(' ? 1 : 0));
}

// .npy dtype descriptions of the types read (example inputs) and written.
const std::map<std::string, DType>& npy_types() {
  static const std::map<std::string, DType> types = {
      {"<f4", DType::Float}, {"<f8", DType::Double}, {"<f2", DType::Float16},
      {"<i8", DType::Int64}, {"<i4", DType::Int32},  {"<i2", DType::Int16},
      {"|i1", DType::Int8},  {"|u1", DType::UInt8},  {"|b1", DType::Bool},
      {"<c8", DType::Complex64}, {"<c16", DType::Complex128},
  };
  return types;
}

}  // namespace

void write_npy(const Tensor& t, std::ostream& out) {
  std::string descr;
  for (const auto& [d, type] : npy_types())
    if (type == t.dtype()) descr = d;
  if (descr.empty())
    throw ExportError(std::string("a ") + dtype_name(t.dtype()) + " tensor cannot be written as .npy here",
                      ErrorContext::with_hint("cast the output to a numpy-supported type in the model"));
  std::string shape = "(";
  for (int64_t d : t.shape()) shape += std::to_string(d) + ",";
  if (t.shape().size() > 1) shape.pop_back();
  shape += ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded with spaces to a multiple of 64.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  const uint16_t length = static_cast<uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  const char length_bytes[2] = {static_cast<char>(length & 0xff), static_cast<char>(length >> 8)};
  out.write(length_bytes, 2);
  out << header;
  out.write(static_cast<const char*>(t.data()), static_cast<std::streamsize>(t.nbytes()));
}

Tensor read_npy(const std::string& path) {
  auto fail = [&](const std::string& why) -> ConfigError {
    return ConfigError("'" + path + "' is not a usable .npy file: " + why,
                       ErrorContext::with_hint("save it with numpy.save (C order, little-endian)"));
  };
  require_regular_file(path, "the .npy input", "save it with numpy.save");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw ConfigError("cannot open input file '" + path + "'");
  const uint64_t file_size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  unsigned char magic[8];
  in.read(reinterpret_cast<char*>(magic), 8);
  if (!in || std::memcmp(magic, "\x93NUMPY", 6) != 0) throw fail("bad magic (not a .npy file)");
  const int major = magic[6], minor = magic[7];
  if (major < 1 || major > 3)
    throw fail("unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor));
  uint32_t header_len = 0;
  uint64_t prefix = 0;
  if (major == 1) {
    unsigned char l[2];
    in.read(reinterpret_cast<char*>(l), 2);
    header_len = l[0] | (l[1] << 8);
    prefix = 10;
  } else {
    unsigned char l[4];
    in.read(reinterpret_cast<char*>(l), 4);
    header_len = l[0] | (l[1] << 8) | (l[2] << 16) | (static_cast<uint32_t>(l[3]) << 24);
    prefix = 12;
  }
  if (!in || prefix + header_len > file_size)
    throw fail("the header length " + std::to_string(header_len) + " runs past the end of the file");
  std::string header(header_len, '\0');
  in.read(header.data(), header_len);
  const auto descr_value = dict_value(header, "descr");
  const auto order = dict_value(header, "fortran_order");
  const auto shape_text = dict_value(header, "shape");
  if (!descr_value || !order || !shape_text || shape_text->front() != '(')
    throw fail("malformed header " + header.substr(0, 80));
  std::string descr = *descr_value;
  if (descr.size() >= 2 && (descr.front() == '\'' || descr.front() == '"')) descr = descr.substr(1, descr.size() - 2);
  if (*order == "True") throw fail("Fortran order (save a C-ordered array: numpy.ascontiguousarray)");
  const auto& types = npy_types();
  auto t = types.find(descr);
  if (t == types.end()) throw fail("unsupported dtype " + descr);
  const uint64_t data_bytes = file_size - prefix - header_len;
  const uint64_t item = dtype_size(t->second);
  std::vector<int64_t> shape;
  uint64_t needed = item;  // bytes the shape needs, checked against the file before allocating
  bool too_big = false;
  for (size_t i = 1; i < shape_text->size();) {
    const size_t j = shape_text->find_first_of(",)", i);
    const std::string part = shape_text->substr(i, j - i);
    const auto first = part.find_first_not_of(' ');
    if (first != std::string::npos) {
      const std::string digits = part.substr(first, part.find_last_not_of(' ') - first + 1);
      if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos)
        throw fail("malformed shape " + *shape_text);
      const int64_t d = std::stoll(digits);
      shape.push_back(d);
      if (d != 0 && needed > data_bytes / static_cast<uint64_t>(d)) too_big = true;
      needed *= static_cast<uint64_t>(d);
    }
    i = j == std::string::npos ? shape_text->size() : j + 1;
  }
  std::string shape_desc;
  for (int64_t d : shape) shape_desc += (shape_desc.empty() ? "" : "x") + std::to_string(d);
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) needed = 0, too_big = false;
  if (too_big || needed > data_bytes)
    throw fail("truncated data: " + std::to_string(data_bytes) + " bytes, the shape " + shape_desc + " of " + descr +
               " needs more");
  if (needed < data_bytes)
    throw fail(std::to_string(data_bytes - needed) + " bytes after the data the shape " + shape_desc + " of " + descr +
               " needs");
  std::vector<uint8_t> bytes(static_cast<size_t>(needed));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!in) throw fail("truncated data");
  return Tensor(t->second, shape, std::move(bytes));
}

}  // namespace onnxport::core
