#include "3_export/6_write/type_support.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "onnxport/errors.h"

namespace onnxport::core {

namespace {

// The element type of every tensor the graph names, where it is known.
std::unordered_map<std::string, int32_t> element_types(const OnnxModel& model) {
  std::unordered_map<std::string, int32_t> types;
  for (const auto& [name, type] : model.value_types)
    if (type.has_tensor_type()) types[name] = type.tensor_type().elem_type();
  for (const auto& io : model.inputs)
    if (!io.sequence) types[io.name] = to_type_proto(io.type).tensor_type().elem_type();
  for (const auto& init : model.initializers)
    types[init.name] = to_type_proto(type_of_tensor(init.tensor)).tensor_type().elem_type();
  return types;
}

std::string allowed_text(const onnx::OpSchema::FormalParameter& formal) {
  std::vector<std::string> names;
  for (const auto* type : formal.GetTypes()) names.push_back(*type);
  std::sort(names.begin(), names.end());
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

}  // namespace

void refuse_bfloat16_where_onnx_has_none(const OnnxModel& model, const std::string& model_file) {
  const auto types = element_types(model);
  const bool any_bfloat16 = std::any_of(types.begin(), types.end(), [](const auto& entry) {
    return entry.second == onnx::TensorProto::BFLOAT16;
  });
  if (!any_bfloat16) return;
  const auto opset = model.opset_imports.find("");
  if (opset == model.opset_imports.end()) return;
  for (const auto& node : model.nodes) {
    const onnx::NodeProto& proto = node.proto;
    if (!is_standard_domain(proto)) continue;
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(proto.op_type(), opset->second, "");
    if (!schema || schema->inputs().empty()) continue;
    for (int i = 0; i < proto.input_size(); ++i) {
      const auto type = types.find(proto.input(i));
      if (proto.input(i).empty() || type == types.end() || type->second != onnx::TensorProto::BFLOAT16) continue;
      const auto& formals = schema->inputs();
      const auto& formal = formals[std::min<size_t>(static_cast<size_t>(i), formals.size() - 1)];
      const auto& allowed = formal.GetTypes();
      const bool takes = std::any_of(allowed.begin(), allowed.end(),
                                     [](const std::string* t) { return *t == "tensor(bfloat16)"; });
      if (takes) continue;
      throw ExportError(
          "ONNX's " + proto.op_type() + " (opset " + std::to_string(opset->second) + ") takes no bfloat16: input " +
              std::to_string(i) + " '" + proto.input(i) + "' is tensor(bfloat16), its type " + formal.GetTypeStr() +
              " allows " + allowed_text(formal),
          ErrorContext::for_node(model_file, node.origin.torch_op, node.origin.module_path, node.origin.source,
                                 node.origin.pack,
                                 "export the model in float32 (model.float() and float32 example inputs) or "
                                 "float16 (model.half()); nothing was written"));
    }
  }
}

}  // namespace onnxport::core
