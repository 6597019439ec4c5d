#pragma once
// Minimal NumPy .npy reader (C order, little-endian; v1-v3 headers) for example inputs, and
// the writer `onnxport run` uses for outputs (v1 header, C order).
#include <ostream>
#include <string>

#include "onnxport/tensor.h"

namespace onnxport::core {
Tensor read_npy(const std::string& path);  // throws ConfigError naming the file
// Writes the tensor as a .npy file body; ExportError for a dtype .npy cannot hold here.
void write_npy(const Tensor& t, std::ostream& out);
}
