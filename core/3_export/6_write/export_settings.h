#pragma once
// What an ONNX file records of the export that wrote it, in its metadata_props, so that
// `onnxport verify` need not be told again what only the command line said: the --input specs
// when an argument was a number, string or None (folded into the graph, so the file's inputs do
// not show it), the method and the submodule exported.
#include <onnx/onnx_pb.h>

#include <string>
#include <utility>
#include <vector>

#include "onnxport/options.h"

namespace onnxport::core {

inline constexpr const char* kRecordedInputs = "onnxport.inputs";  // JSON list of --input texts
inline constexpr const char* kRecordedMethod = "onnxport.method";
inline constexpr const char* kRecordedSubmodule = "onnxport.submodule";

// The properties an export with `options` records (none for a forward of tensors alone).
std::vector<std::pair<std::string, std::string>> recorded_export_settings(const ExportOptions& options);

// Fills in what the caller left unset (no inputs, method "forward", no submodule) from what
// `model` records; returns each setting taken, as its flag would give it ("--input sr:int=16000").
std::vector<std::string> take_recorded_export_settings(const onnx::ModelProto& model, std::vector<InputSpec>& inputs,
                                                       ExportOptions& options);

}  // namespace onnxport::core
