#pragma once
// The write stage: the ModelProto's structure and the streaming writer of its parameter bytes.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "1_base/onnx_ir.h"

namespace onnxport::core {

struct ModelMeta {
  std::string producer_name = "onnxport";
  std::string producer_version;
  bool export_params = true;
  bool keep_initializers_as_inputs = false;
  bool provenance_doc_strings = false;  // node doc_string = pack, torch op, module path
  // Non-empty: every initializer's bytes go to this file (a name in the model's directory), in
  // ONNX's external-data layout, instead of into the model file.
  std::string external_data_file;
  // The model's metadata_props, in order (export_settings.h).
  std::vector<std::pair<std::string, std::string>> properties;
};

// The ModelProto without initializer payloads (initializers are streamed by write_model).
onnx::ModelProto build_model_proto(const OnnxModel& model, const ModelMeta& meta, bool with_initializer_headers);

// Where each initializer's bytes go in an external data file: tensors of 1 MiB and more start
// at multiples of 64 KiB (the mmap granularity ONNX Runtime uses everywhere), smaller ones at
// multiples of 64 bytes.
constexpr size_t kExternalAlignThreshold = size_t{1} << 20;
constexpr size_t kExternalLargeAlignment = size_t{64} << 10;
constexpr size_t kExternalSmallAlignment = 64;
// Tensors smaller than this stay in the model (as ONNX's own external-data conversion does):
// shape inference reads small constants (Reshape targets, Range bounds) and cannot read them
// from external data.
constexpr size_t kExternalMinBytes = 1024;
struct ExternalDataLayout {
  static constexpr size_t kInModel = static_cast<size_t>(-1);
  std::string location;         // file name, relative to the model's directory
  std::vector<size_t> offsets;  // one per initializer, in model order; kInModel: kept in the model
  std::vector<size_t> lengths;
  size_t total_bytes = 0;
};
ExternalDataLayout layout_external_data(const OnnxModel& model, const std::string& location);
// Completes the proto's initializer headers (in model order): external-data entries for the
// tensors the layout places in a file, a copy of the (small) bytes for those it keeps in the model.
void place_initializer_data(onnx::ModelProto& proto, const ExternalDataLayout& layout, const OnnxModel& model);

// Whether the initializers alone would take the model past protobuf's 2 GiB limit.
bool needs_external_data(const OnnxModel& model, const ModelMeta& meta);
// "model.onnx" -> "model.onnx.data"
std::string default_external_data_file(const std::string& model_path);
// Where a data file named `data_file` (relative to the model's directory) is written.
std::string external_data_path(const std::string& model_path, const std::string& data_file);

// Called while parameter bytes are written: bytes written so far, and the total.
using WriteProgress = std::function<void(size_t done, size_t total)>;
struct WriteResult {
  std::string model_path;
  std::string data_path;  // the external data file, if any
  size_t data_bytes = 0;
  // Where the parameter bytes are: the external data file, or the raw_data fields of the model
  // file itself. The check stage describes initializers with it instead of reading them back.
  ExternalDataLayout payload;
};
// Writes the model (and its external data file, if meta asks for one) under temporary names,
// then renames them into place: a failed export never leaves a partial file. Parameter bytes go
// straight from the borrowed tensors to the file, never into a protobuf.
WriteResult write_model(const OnnxModel& model, const ModelMeta& meta, const std::string& path,
                        const WriteProgress& progress = {});

}  // namespace onnxport::core
