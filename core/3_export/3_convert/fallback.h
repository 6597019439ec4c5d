#pragma once
// operator_export_type other than "onnx": nodes no op pack maps (or, for onnx_aten, every aten
// op) are kept as opaque nodes instead of failing the export, with torch.onnx's conventions:
//   onnx_aten / onnx_aten_fallback: op "ATen" in domain org.pytorch.aten, attribute
//     `operator` = the op's name, `overload_name`, constant arguments as attributes;
//   onnx_fallthrough: the op kept as-is in a domain named after its namespace ("aten::erfinv"
//     becomes erfinv in domain "aten").
#include <string>

#include "onnxport/args.h"
#include "onnxport/graph.h"
#include "onnxport/options.h"

namespace onnxport::core {

constexpr const char* kAtenDomain = "org.pytorch.aten";

// Does this export type keep `kind` as an opaque node (mapped says whether a pack maps it)?
bool falls_back(const ExportOptions& o, const std::string& kind, bool mapped);
// The domain the fallback node of `kind` goes to.
std::string fallback_domain(const ExportOptions& o, const std::string& kind);

// Builds the opaque node: tensor arguments become inputs, constants become attributes named
// after the schema's argument names.
std::vector<Value*> emit_fallback(Graph& g, const TorchNode& node, const Args& args, const ExportOptions& o,
                                  const std::string& overload_name);

}  // namespace onnxport::core
