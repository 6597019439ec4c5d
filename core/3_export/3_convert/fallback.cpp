#include "3_export/3_convert/fallback.h"

#include "onnxport/errors.h"

namespace onnxport::core {

bool falls_back(const ExportOptions& o, const std::string& kind, bool mapped) {
  const bool is_aten = kind.rfind("aten::", 0) == 0;
  switch (o.operator_export_type) {
    case OperatorExportType::OnnxAten: return is_aten || !mapped;
    case OperatorExportType::OnnxAtenFallback:
    case OperatorExportType::OnnxFallthrough: return !mapped;
    case OperatorExportType::Onnx: return false;
  }
  return false;
}

std::string fallback_domain(const ExportOptions& o, const std::string& kind) {
  if (o.operator_export_type == OperatorExportType::OnnxFallthrough) return kind.substr(0, kind.find("::"));
  return kAtenDomain;
}

namespace {
// A constant argument as an attribute; false if it has no attribute form (then it is an input).
bool add_constant_attribute(Attrs& attrs, const std::string& name, const Value* v) {
  if (v->maybe_tensor()) return false;  // tensor payloads (parameters) stay inputs
  if (!v->is_constant() && !(v->is_list() && (v->maybe_ints() || v->maybe_floats()))) return false;
  if (auto i = std::get_if<int64_t>(&v->constant()))
    attrs.emplace_back(name + "_i", *i);
  else if (auto b = std::get_if<bool>(&v->constant()))
    attrs.emplace_back(name + "_i", *b ? 1 : 0);
  else if (auto f = std::get_if<double>(&v->constant()))
    attrs.emplace_back(name + "_f", *f);
  else if (auto s = std::get_if<std::string>(&v->constant()))
    attrs.emplace_back(name + "_s", *s);
  else if (auto is = v->maybe_ints())
    attrs.emplace_back(name + "_i", *is);
  else if (auto fs = v->maybe_floats())
    attrs.emplace_back(name + "_f", *fs);
  else
    return false;  // tensor payloads stay inputs
  return true;
}
}  // namespace

std::vector<Value*> emit_fallback(Graph& g, const TorchNode& node, const Args& args, const ExportOptions& o,
                                  const std::string& overload_name) {
  const std::string ns = node.kind.substr(0, node.kind.find("::"));
  const std::string op = node.kind.substr(node.kind.find("::") + 2);
  const bool aten_node = o.operator_export_type != OperatorExportType::OnnxFallthrough;
  Attrs attrs;
  if (aten_node) {
    attrs.emplace_back("operator_s", op);
    attrs.emplace_back("overload_name_s", overload_name);
  } else {  // kept as it is, with the node's own attributes (a prim::PythonOp's inplace and module)
    for (const auto& [name, value] : node.int_attributes) attrs.emplace_back(name + "_i", value);
    for (const auto& [name, value] : node.string_attributes) attrs.emplace_back(name + "_s", value);
  }
  std::vector<Value*> inputs;
  for (size_t i = 0; i < args.size(); ++i) {
    Value* v = args[i];
    const std::string name =
        i < node.input_names.size() && !node.input_names[i].empty() ? node.input_names[i] : "arg" + std::to_string(i);
    if (v->is_none()) continue;
    if (add_constant_attribute(attrs, name, v)) continue;
    if (v->is_list()) {
      for (Value* e : v->elements()) inputs.push_back(e);
      continue;
    }
    inputs.push_back(v);
  }
  const std::string target = fallback_domain(o, node.kind) + "::" + (aten_node ? "ATen" : op);
  return g.op(target, inputs, attrs, static_cast<int>(std::max<size_t>(1, node.num_outputs())));
}

}  // namespace onnxport::core
