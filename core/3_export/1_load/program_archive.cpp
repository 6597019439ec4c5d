#include "3_export/1_load/program_archive.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/unpickler.h>

#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <algorithm>

#include "1_base/libtorch_message.h"
#include "1_base/pickle_setitem.h"
#include "onnxport/errors.h"

namespace onnxport::core {

namespace {

using nlohmann::json;

const char* kResave = "save the program again with torch.export.save";

[[noreturn]] void damaged(const std::string& path, const std::string& what) {
  throw ModelError("'" + path + "': " + what, ErrorContext::for_file(path, kResave));
}

// torch.save pickles a Parameter as a call of torch._utils._rebuild_parameter, which libtorch's
// unpickler (made for TorchScript's own archives) does not know: the call becomes an object of a
// stand-in class holding the call's arguments, and `unwrap_parameters` replaces it by its tensor.
const char* const kParameterRebuilds[] = {"torch._utils._rebuild_parameter",
                                          "torch._utils._rebuild_parameter_with_state"};

c10::IValue unwrap_parameters(const c10::IValue& value) {
  if (value.isObject()) {
    const auto object = value.toObject();
    return object->slots().empty() ? c10::IValue() : object->getSlot(0).toTuple()->elements().at(0);
  }
  if (value.isGenericDict()) {
    c10::impl::GenericDict out(value.toGenericDict().keyType(), c10::AnyType::get());
    for (const auto& entry : value.toGenericDict()) out.insert(entry.key(), unwrap_parameters(entry.value()));
    return out;
  }
  if (value.isTuple()) {
    std::vector<c10::IValue> elements;
    for (const auto& e : value.toTupleRef().elements()) elements.push_back(unwrap_parameters(e));
    return c10::ivalue::Tuple::create(std::move(elements));
  }
  if (value.isList()) {
    c10::impl::GenericList out(c10::AnyType::get());
    for (const auto& e : value.toList()) out.push_back(unwrap_parameters(e));
    return out;
  }
  return value;
}

// A torch.save file stored in the archive, read where it lies (a state dict is not copied whole).
class StoredEntryReader : public caffe2::serialize::ReadAdapterInterface {
 public:
  StoredEntryReader(ZipArchive& zip, const std::string& name) : zip_(zip), where_(zip.stored(name)) {}
  size_t size() const override { return where_.size; }
  size_t read(uint64_t pos, void* buf, size_t n, const char* what = "") const override {
    if (pos >= where_.size) return 0;
    n = static_cast<size_t>(std::min<uint64_t>(n, where_.size - pos));
    zip_.read_at(where_.offset + pos, buf, n);
    return n;
  }

 private:
  ZipArchive& zip_;
  const ZipArchive::Stored where_;
};

// The value the torch.save file `entry` of the archive holds.
c10::IValue unpickle(ZipArchive& zip, const std::string& entry) {
  const std::string& path = zip.path();
  const std::string& what = entry;
  auto stored = std::make_shared<StoredEntryReader>(zip, entry);
  try {
    caffe2::serialize::PyTorchStreamReader reader(stored);
    auto unit = std::make_shared<torch::jit::CompilationUnit>();
    torch::jit::TypeResolver resolve = [&](const c10::QualifiedName& name) {
      for (const char* known : kParameterRebuilds)
        if (name.qualifiedName() == known) {
          auto stand_in = c10::ClassType::create(name, unit);
          stand_in->addAttribute("call", c10::AnyType::get());
          return c10::StrongTypePtr(unit, stand_in);
        }
      damaged(path, what + " holds a Python object of class " + name.qualifiedName() +
                        ", which onnxport cannot read without Python");
    };
    torch::jit::ObjLoader load = [](const c10::StrongTypePtr& type, c10::IValue call) {
      auto object = c10::ivalue::Object::create(type, 1);
      object->setSlot(0, std::move(call));
      return object;
    };
    // As torch::jit::readArchiveAndTensors reads "data.pkl" and its tensors ("data/N"), with the
    // pickle's one-entry dicts rewritten for libtorch 1.13's unpickler (pickle_setitem.h).
    const auto [record, record_size] = reader.getRecord("data.pkl");
    const std::string pickle =
        setitem_as_setitems(std::string(static_cast<const char*>(record.get()), record_size));
    size_t read_so_far = 0;
    torch::jit::Unpickler unpickler(
        [&](char* into, size_t n) {
          n = std::min(n, pickle.size() - read_so_far);
          std::memcpy(into, pickle.data() + read_so_far, n);
          read_so_far += n;
          return n;
        },
        resolve, load, [&](const std::string& name) { return std::get<0>(reader.getRecord("data/" + name)); },
        c10::Device(c10::kCPU));
    unpickler.set_version(reader.version());
    return unwrap_parameters(unpickler.parse_ivalue());
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    damaged(path, "cannot read " + what + ": " + libtorch_error_line(e.what()));
  }
}

std::map<std::string, at::Tensor> tensors_by_name(const c10::IValue& value, const std::string& path,
                                                  const std::string& what) {
  std::map<std::string, at::Tensor> out;
  if (!value.isGenericDict()) damaged(path, what + " holds a " + value.tagKind() + ", not a dict of tensors");
  for (const auto& entry : value.toGenericDict()) {
    if (!entry.key().isString()) damaged(path, what + " has a key that is not a string");
    if (entry.value().isTensor()) out.emplace(entry.key().toStringRef(), entry.value().toTensor().detach());
  }
  return out;
}

void flatten_tensors(const c10::IValue& value, std::vector<c10::IValue>& out) {
  if (value.isTuple())
    for (const auto& e : value.toTupleRef().elements()) flatten_tensors(e, out);
  else if (value.isList())
    for (const auto& e : value.toList()) flatten_tensors(e, out);
  else if (value.isGenericDict())
    for (const auto& e : value.toGenericDict()) flatten_tensors(e.value(), out);
  else
    out.push_back(value);
}

// Python's json writes the floats inf, -inf and nan as the bare words Infinity, -Infinity and NaN
// (a masked_fill with -inf), which JSON does not have: each becomes a string, read by program_float.
std::string with_quoted_non_finite(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size())
        out.push_back(text[++i]);
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (const char* word : {"-Infinity", "Infinity", "NaN"}) {
      const size_t n = std::strlen(word);
      if (text.compare(i, n, word) == 0) {
        out += '"';
        out += word;
        out += '"';
        i += n - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out.push_back(c);
  }
  return out;
}

// A raw tensor of a PT2 archive: its storage's bytes (entry `file`), laid out as its tensor_meta says.
at::Tensor raw_tensor(ZipArchive& zip, const std::string& file, const json& meta, const std::string& where) {
  const at::ScalarType dtype = program_scalar_type(meta.at("dtype").get<int>(), where);
  const auto sizes = program_ints(meta.at("sizes"), where);
  const auto strides = program_ints(meta.at("strides"), where);
  const auto offset = program_ints(json::array({meta.at("storage_offset")}), where).at(0);
  const size_t element = c10::elementSize(dtype);
  const ZipArchive::Stored stored = zip.stored(file);
  at::Tensor storage = at::empty({static_cast<int64_t>(stored.size / element)}, at::TensorOptions().dtype(dtype));
  zip.read_at(stored.offset, storage.data_ptr(), stored.size / element * element);
  int64_t last = offset;
  bool empty = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    empty = empty || sizes[d] == 0;
    if (sizes[d] > 0) last += (sizes[d] - 1) * strides[d];
  }
  if (!empty && last >= storage.numel())
    throw ModelError(where + ": its " + std::to_string(stored.size) + " bytes are too few for its sizes",
                     ErrorContext::with_hint(kResave));
  return storage.as_strided(sizes, strides, offset).clone();
}

}  // namespace

at::ScalarType program_scalar_type(int code, const std::string& where) {
  switch (code) {
    case 1: return at::kByte;
    case 2: return at::kChar;
    case 3: return at::kShort;
    case 4: return at::kInt;
    case 5: return at::kLong;
    case 6: return at::kHalf;
    case 7: return at::kFloat;
    case 8: return at::kDouble;
    case 9: return at::kComplexHalf;
    case 10: return at::kComplexFloat;
    case 11: return at::kComplexDouble;
    case 12: return at::kBool;
    case 13: return at::kBFloat16;
    default:
      throw ModelError(where + ": dtype code " + std::to_string(code) +
                           " of torch.export's schema is not one onnxport reads (float8 and unsigned "
                           "types wider than 8 bits have no TorchScript type here)",
                       ErrorContext::with_hint("export the program with another dtype"));
  }
}

double program_float(const json& value) {
  if (value.is_number()) return value.get<double>();
  const std::string word = value.is_string() ? value.get<std::string>() : "";
  if (word == "Infinity") return std::numeric_limits<double>::infinity();
  if (word == "-Infinity") return -std::numeric_limits<double>::infinity();
  if (word == "NaN") return std::numeric_limits<double>::quiet_NaN();
  throw ModelError("a float of the program that is no number (" + value.dump() + ")",
                   ErrorContext::with_hint(kResave));
}

std::vector<int64_t> program_ints(const json& sym_ints, const std::string& where) {
  std::vector<int64_t> out;
  for (const auto& s : sym_ints) {
    if (s.contains("as_int")) {
      out.push_back(s.at("as_int").get<int64_t>());
    } else if (s.contains("as_expr") && s.at("as_expr").contains("hint") && !s.at("as_expr").at("hint").is_null()) {
      const json& hint = s.at("as_expr").at("hint");
      out.push_back(hint.is_number() ? hint.get<int64_t>() : hint.at("as_int").get<int64_t>());
    } else {
      throw ModelError(where + ": a symbolic size without a recorded example value (" + s.dump() + ")",
                       ErrorContext::with_hint(kResave));
    }
  }
  return out;
}

std::string program_symbol(const json& sym_int) {
  if (!sym_int.contains("as_expr")) return "";
  const std::string expr = sym_int.at("as_expr").at("expr_str").get<std::string>();
  // PyTorch 2.6 writes "Symbol('s0', positive=True, integer=True)", later releases "s0".
  if (expr.rfind("Symbol('", 0) == 0) {
    const auto end = expr.find('\'', 8);
    return end == std::string::npos ? "" : expr.substr(8, end - 8);
  }
  for (char c : expr)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return "";
  return expr;
}

std::string program_dim_text(const json& sym_int) {
  if (sym_int.contains("as_int")) return std::to_string(sym_int.at("as_int").get<int64_t>());
  const std::string symbol = program_symbol(sym_int);
  if (!symbol.empty()) return symbol;
  return sym_int.contains("as_expr") ? sym_int.at("as_expr").at("expr_str").get<std::string>() : "?";
}

std::string program_dim_ranges(const json& program) {
  std::string text;
  if (!program.contains("range_constraints")) return text;
  const auto bound = [](const json& b) {
    return b.is_null() ? std::string("inf") : b.is_number() ? std::to_string(b.get<int64_t>()) : b.dump();
  };
  for (const auto& [symbol, range] : program.at("range_constraints").items())
    text += (text.empty() ? "" : ", ") + symbol + " in " + bound(range.value("min_val", json())) + ".." +
            bound(range.value("max_val", json()));
  return text;
}

bool ProgramArchive::holds_program(const std::string& path) {
  if (!ZipArchive::looks_like_zip(path)) return false;
  try {
    ZipArchive zip(path);
    for (const auto& name : zip.names()) {
      if (name == "serialized_exported_program.json") return true;
      const auto slash = name.find('/');
      if (slash != std::string::npos && name.compare(slash, std::string::npos, "/archive_format") == 0) return true;
    }
    return false;  // a TorchScript file, whatever its name
  } catch (const Error&) {
    // A damaged zip named .pt2 gets this reader's errors; any other, the TorchScript loader's.
    return path.size() > 4 && path.compare(path.size() - 4, 4, ".pt2") == 0;
  }
}

ProgramArchive::ProgramArchive(const std::string& path) : zip_(std::make_unique<ZipArchive>(path)) {
  std::string program_entry;
  if (zip_->has("serialized_exported_program.json")) {
    program_entry = "serialized_exported_program.json";
  } else {
    for (const auto& name : zip_->names()) {
      const auto slash = name.find('/');
      if (slash == std::string::npos || name.compare(slash, std::string::npos, "/archive_format") != 0) continue;
      prefix_ = name.substr(0, slash + 1);
      const std::string format = zip_->read(name);
      if (format.rfind("pt2", 0) != 0)
        damaged(path, "its archive_format is '" + format + "', not pt2 (a torch.export archive)");
      program_entry = prefix_ + "models/model.json";
      if (!zip_->has(program_entry)) {
        for (const auto& other : zip_->names())
          if (other.rfind(prefix_ + "models/", 0) == 0 && other.size() > 5 &&
              other.compare(other.size() - 5, 5, ".json") == 0) {
            program_entry = other;
            break;
          }
      }
      break;
    }
  }
  if (program_entry.empty() || !zip_->has(program_entry))
    throw ModelError("'" + path + "' is a zip archive but holds no torch.export program",
                     ErrorContext::for_file(path, "give a file written by torch.export.save (or a TorchScript file)"));
  try {
    program_ = std::make_unique<json>(json::parse(with_quoted_non_finite(zip_->read(program_entry))));
  } catch (const json::exception& e) {
    damaged(path, program_entry + " is not valid JSON (" + e.what() + ")");
  }
  const json& version = program_->value("schema_version", json::object());
  const int major = version.value("major", -1);
  if (major != kProgramSchemaMajor)
    throw ModelError("'" + path + "' holds a torch.export program of schema version " + version_text() +
                         "; this onnxport reads schema version " + std::to_string(kProgramSchemaMajor) +
                         ".x (PyTorch 2.6 to 2.14)",
                     ErrorContext::for_file(path, "export it with a PyTorch whose torch.export writes schema " +
                                                      std::to_string(kProgramSchemaMajor) +
                                                      ".x, or use an onnxport release that reads it"));
}

ProgramArchive::~ProgramArchive() = default;

std::string ProgramArchive::version_text() const {
  const json& version = program_->value("schema_version", json::object());
  std::string text = std::to_string(version.value("major", -1)) + "." + std::to_string(version.value("minor", -1));
  if (program_->contains("torch_version")) text += " (PyTorch " + program_->at("torch_version").get<std::string>() + ")";
  return text;
}

std::map<std::string, at::Tensor> ProgramArchive::read_tensor_folder(const std::string& folder,
                                                                     const std::string& config_name) {
  std::map<std::string, at::Tensor> out;
  const std::string config_entry = prefix_ + folder + config_name;
  if (!zip_->has(config_entry)) return out;
  json config;
  try {
    config = json::parse(zip_->read(config_entry)).at("config");
  } catch (const json::exception& e) {
    damaged(path(), config_entry + " is not what torch.export writes (" + e.what() + ")");
  }
  for (const auto& [name, entry] : config.items()) {
    const std::string file = prefix_ + folder + entry.at("path_name").get<std::string>();
    const std::string where = "'" + path() + "': " + file + " (" + name + ")";
    if (entry.value("use_pickle", false)) {
      const c10::IValue value = unpickle(*zip_, file);
      if (!value.isTensor()) damaged(path(), file + " (" + name + ") holds a " + value.tagKind() + ", not a tensor");
      out.emplace(name, value.toTensor().detach());
    } else {
      out.emplace(name, raw_tensor(*zip_, file, entry.at("tensor_meta"), where));
    }
  }
  return out;
}

std::map<std::string, at::Tensor> ProgramArchive::read_state() {
  if (prefix_.empty())
    return tensors_by_name(unpickle(*zip_, "serialized_state_dict.pt"),
                           path(), "serialized_state_dict.pt");
  return read_tensor_folder("data/weights/", "model_weights_config.json");
}

std::map<std::string, at::Tensor> ProgramArchive::read_constants() {
  if (prefix_.empty()) {
    if (!zip_->has("serialized_constants.pt")) return {};
    return tensors_by_name(unpickle(*zip_, "serialized_constants.pt"), path(),
                           "serialized_constants.pt");
  }
  return read_tensor_folder("data/constants/", "model_constants_config.json");
}

std::vector<c10::IValue> ProgramArchive::read_example_inputs() {
  const std::string entry = prefix_.empty() ? "serialized_example_inputs.pt" : prefix_ + "data/sample_inputs/model.pt";
  std::vector<c10::IValue> out;
  if (!zip_->has(entry)) return out;
  flatten_tensors(unpickle(*zip_, entry), out);
  return out;
}

}  // namespace onnxport::core
