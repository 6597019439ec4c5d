#pragma once
// Read-only view of the TorchScript node a symbolic is converting.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "onnxport/types.h"

namespace onnxport {

struct TorchNode {
  std::string kind;                      // "aten::max_pool2d"
  std::string schema;                    // operator schema, when the op has one
  std::vector<std::string> input_names;  // argument names from the schema ("" if unknown)
  size_t num_inputs = 0;
  std::vector<TensorType> output_types;  // what tracing saw (static dims) / script types
  std::vector<bool> output_is_scalar;    // TorchScript int/float/bool outputs
  std::string module_path;               // "features.0" ("" at the top level)
  std::string source_location;           // "model.py:42", when the model kept debug info
  // Inputs the op writes in place (schema "(a!)") that no output aliases, e.g. the list of
  // aten::pop or aten::insert: the symbolic returns their new values after the outputs, in
  // this order. (An input an output aliases, like self of aten::add_, takes that output.)
  std::vector<size_t> updated_inputs;
  // Integer attributes of nodes that carry them (prim::ConstantChunk's chunks and dim).
  std::map<std::string, int64_t> int_attributes;
  // String attributes (prim::PythonOp's module). Last, so that packs built before it keep reading
  // the fields above.
  std::map<std::string, std::string> string_attributes;

  size_t num_outputs() const { return output_types.size(); }
  // The index of the schema argument called `name`, when the schema names it.
  std::optional<size_t> input_index(const std::string& name) const {
    for (size_t i = 0; i < input_names.size(); ++i)
      if (input_names[i] == name) return i;
    return std::nullopt;
  }
};

}  // namespace onnxport
