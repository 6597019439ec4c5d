#pragma once
// Minimal NumPy .npy reader (C order, little-endian; v1-v3 headers) for example inputs.
#include <string>

#include "onnxport/tensor.h"

namespace onnxport::core {
Tensor read_npy(const std::string& path);  // throws ConfigError naming the file
}
