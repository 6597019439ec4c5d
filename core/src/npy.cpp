#include "npy.h"

#include <cstring>
#include <fstream>
#include <map>

#include "onnxport/errors.h"

namespace onnxport::core {

namespace {
std::string dict_value(const std::string& header, const std::string& key) {
  auto k = header.find("'" + key + "'");
  if (k == std::string::npos) return "";
  auto colon = header.find(':', k);
  auto start = header.find_first_not_of(' ', colon + 1);
  if (header[start] == '(') return header.substr(start, header.find(')', start) - start + 1);
  auto end = header.find_first_of(",}", start);
  return header.substr(start, end - start);
}
}  // namespace

Tensor read_npy(const std::string& path) {
  auto fail = [&](const std::string& why) -> ConfigError {
    return ConfigError("'" + path + "' is not a usable .npy file: " + why,
                       ErrorContext::with_hint("save it with numpy.save (C order, little-endian)"));
  };
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("cannot open input file '" + path + "'");
  char magic[8];
  in.read(magic, 8);
  if (!in || std::memcmp(magic, "\x93NUMPY", 6) != 0) throw fail("bad magic");
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    uint16_t l;
    in.read(reinterpret_cast<char*>(&l), 2);
    header_len = l;
  } else {
    in.read(reinterpret_cast<char*>(&header_len), 4);
  }
  std::string header(header_len, '\0');
  in.read(header.data(), header_len);
  std::string descr = dict_value(header, "descr");
  if (descr.size() >= 2 && descr.front() == '\'') descr = descr.substr(1, descr.size() - 2);
  if (dict_value(header, "fortran_order") == "True") throw fail("Fortran order");
  static const std::map<std::string, DType> types = {
      {"<f4", DType::Float}, {"<f8", DType::Double}, {"<f2", DType::Float16},
      {"<i8", DType::Int64}, {"<i4", DType::Int32},  {"<i2", DType::Int16},
      {"|i1", DType::Int8},  {"|u1", DType::UInt8},  {"|b1", DType::Bool},
  };
  auto t = types.find(descr);
  if (t == types.end()) throw fail("unsupported dtype " + descr);
  std::string shape_text = dict_value(header, "shape");
  std::vector<int64_t> shape;
  for (size_t i = 1; i < shape_text.size();) {
    size_t j = shape_text.find_first_of(",)", i);
    std::string part = shape_text.substr(i, j - i);
    if (part.find_first_not_of(' ') != std::string::npos) shape.push_back(std::stoll(part));
    i = j + 1;
  }
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * dtype_size(t->second));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!in) throw fail("truncated data");
  return Tensor(t->second, shape, std::move(bytes));
}

}  // namespace onnxport::core
