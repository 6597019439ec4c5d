#pragma once
// Written ONNX files: the streaming writer (model_writer.cpp), the checker (model_check.cpp) and
// the readable printer (graph_printer.cpp).
#include <string>

#include "onnx_ir.h"

namespace onnxport::core {

struct ModelMeta {
  std::string producer_name = "onnxport";
  std::string producer_version;
  bool export_params = true;
  bool keep_initializers_as_inputs = false;
  bool provenance_doc_strings = false;  // node doc_string = pack, torch op, module path
};

// The ModelProto without initializer payloads (initializers are streamed by write_model).
onnx::ModelProto build_model_proto(const OnnxModel& model, const ModelMeta& meta, bool with_initializer_headers);

// Writes to `path + ".tmp-<pid>"`, then renames: a failed export never leaves a partial file.
// Parameter bytes go straight from the borrowed tensors to the file, never into a protobuf.
void write_model(const OnnxModel& model, const ModelMeta& meta, const std::string& path);

struct CheckResult {
  size_t nodes = 0;
  std::string summary;  // "ok: 24 nodes, opset 17, ir 8"
};
// ONNX checker + strict shape inference on a written file. Throws ExportError with the checker's words.
CheckResult check_model_file(const std::string& path);

// torch.onnx-like readable graph: one line per node with types and provenance.
std::string print_graph(const onnx::ModelProto& model, const OnnxModel* provenance = nullptr);
onnx::ModelProto read_model_file(const std::string& path);

}  // namespace onnxport::core
