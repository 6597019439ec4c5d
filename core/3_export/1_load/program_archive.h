#pragma once
// A torch.export program saved by torch.export.save (a `.pt2` file), read without Python: the
// serialized ExportedProgram (JSON) and its tensors. Two layouts exist:
//   PyTorch 2.6:   serialized_exported_program.json, serialized_state_dict.pt,
//                  serialized_constants.pt, serialized_example_inputs.pt (torch.save files), version;
//   PT2 archives (PyTorch 2.7 and later): NAME/archive_format ("pt2"), NAME/models/model.json,
//                  NAME/data/weights/ (raw tensors described by model_weights_config.json),
//                  NAME/data/constants/, NAME/data/sample_inputs/model.pt.
// Either gives the same ProgramArchive; the program's schema version decides whether it is read.
#include <ATen/Tensor.h>
#include <ATen/core/ivalue.h>

#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "1_base/zip_archive.h"

namespace onnxport::core {

// The program schema versions this reader knows: major 8 (PyTorch 2.6's 8.2 to 2.14's 8.20).
inline constexpr int kProgramSchemaMajor = 8;

// The program's ScalarType code (torch/_export/serde/schema.py) as ATen's; a code ATen has no type
// for is a ModelError naming it and `where`.
at::ScalarType program_scalar_type(int code, const std::string& where);
// A list of SymInts (tensor sizes, strides) as numbers: a symbolic one gives the hint the program
// recorded (the example's size).
std::vector<int64_t> program_ints(const nlohmann::json& sym_ints, const std::string& where);

// A float of the program: a number, or inf, -inf and nan (written by Python as Infinity, -Infinity, NaN).
double program_float(const nlohmann::json& value);

// The symbol a symbolic size stands for ("s0"); "" for a number or an expression ("2*s0").
std::string program_symbol(const nlohmann::json& sym_int);
// A size as text: "3", "s0", "2*s0".
std::string program_dim_text(const nlohmann::json& sym_int);

// The program's symbolic dims and their ranges: "s0 in 1..512, s1 in 2..inf"; "" when it has none.
std::string program_dim_ranges(const nlohmann::json& program);

class ProgramArchive {
 public:
  // Opens the archive and reads the program (JSON); tensors are read by the calls below. A file
  // that is no torch.export archive, or one whose schema major version is not kProgramSchemaMajor,
  // is a one-line ModelError naming the file (and both versions).
  explicit ProgramArchive(const std::string& path);
  ~ProgramArchive();

  // Whether `path` is a zip archive holding a torch.export program (not a TorchScript file), or a
  // damaged zip archive named .pt2.
  static bool holds_program(const std::string& path);

  const std::string& path() const { return zip_->path(); }
  const nlohmann::json& program() const { return *program_; }  // the ExportedProgram
  // "8.2 (PyTorch 2.6.0+debian)"
  std::string version_text() const;

  // Parameters and buffers by their names in the module ("layer1.0.conv1.weight").
  std::map<std::string, at::Tensor> read_state();
  // Lifted tensor constants and non-persistent buffers by name.
  std::map<std::string, at::Tensor> read_constants();
  // The example inputs saved with the program: its positional arguments' tensors, flattened in
  // order (keyword arguments after them, by name); empty when the archive holds none.
  std::vector<c10::IValue> read_example_inputs();

 private:
  std::map<std::string, at::Tensor> read_tensor_folder(const std::string& folder, const std::string& config);
  std::unique_ptr<ZipArchive> zip_;
  std::unique_ptr<nlohmann::json> program_;
  std::string prefix_;  // "NAME/" of a PT2 archive; "" for PyTorch 2.6's layout
};

}  // namespace onnxport::core
