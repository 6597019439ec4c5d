#include "onnxport/torchscript_listing.h"

#include <torch/script.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "1_base/torch_tensors.h"
#include "3_export/1_load/load.h"
#include "3_export/2_prepare/attribute_writes.h"
#include "onnxport/dtype.h"

namespace onnxport {

namespace {

// A default as Python writes it: 2.0, True, None.
std::string default_text(const c10::IValue& v) {
  if (v.isDouble()) {
    std::ostringstream text;
    text << v.toDouble();
    const std::string s = text.str();
    return s.find_first_of(".en") == std::string::npos ? s + ".0" : s;
  }
  if (v.isBool()) return v.toBool() ? "True" : "False";
  std::ostringstream text;
  text << v;
  return text.str();
}

// "forward(x: Tensor, sr: int) -> Tensor"
std::string signature(const torch::jit::Method& method) {
  const auto& schema = method.function().getSchema();
  std::string text = method.name() + "(";
  bool first = true;
  for (const auto& argument : schema.arguments()) {
    if (argument.name() == "self") continue;
    text += (first ? "" : ", ") + argument.name() + ": " + argument.type()->annotation_str();
    if (argument.default_value()) text += " = " + default_text(*argument.default_value());
    first = false;
  }
  text += ") -> ";
  const auto& returns = schema.returns();
  if (returns.size() == 1) return text + returns[0].type()->annotation_str();
  std::string all;
  for (const auto& r : returns) all += (all.empty() ? "" : ", ") + r.type()->annotation_str();
  return text + "(" + all + ")";
}

std::string value_text(const c10::IValue& v) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    std::string dims;
    for (int64_t d : t.sizes()) dims += (dims.empty() ? "" : ",") + std::to_string(d);
    return std::string(dtype_name(core::dtype_of(t.scalar_type()))) + "[" + dims + "]";
  }
  std::ostringstream text;
  text << v;
  std::string s = text.str();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

void list_methods(const torch::jit::Module& module, const std::string& indent, std::ostringstream& out,
                  std::set<std::string>& written) {
  for (const auto& method : module.get_methods()) {
    out << indent << signature(method) << "\n";
    const auto writes = core::assigned_attributes(method);
    if (writes.empty()) continue;
    std::string names;
    for (const auto& w : writes) names += (names.empty() ? "" : ", ") + w;
    out << indent << "  writes " << names << "\n";
    written.insert(writes.begin(), writes.end());
  }
}

}  // namespace

bool is_torchscript_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4;
}

std::string inspect_torchscript_file(const std::string& path) {
  const torch::jit::Module root = core::load_torchscript_file(path);
  std::ostringstream out;
  out << path << ": TorchScript module " << root.type()->name()->qualifiedName() << "\n";
  std::set<std::string> written;
  out << "methods (--method NAME):\n";
  list_methods(root, "  ", out, written);

  std::ostringstream submodules;
  for (const auto& child : root.named_modules()) {
    if (child.name.empty()) continue;
    submodules << "  " << child.name << ": " << child.value.type()->name()->name() << "\n";
    std::set<std::string> inner;
    list_methods(child.value, "    ", submodules, inner);
    for (const auto& w : inner) written.insert(child.name + "." + w);
  }
  if (submodules.tellp() > 0) out << "submodules (--submodule PATH):\n" << submodules.str();

  // Tensors and numbers held as attributes that are not parameters: buffers and plain attributes,
  // the state a streaming model keeps. Those a method writes are marked.
  std::ostringstream state;
  for (const auto& module : root.named_modules()) {
    const auto& type = module.value.type();
    for (size_t i = 0; i < type->numAttributes(); ++i) {
      if (type->is_parameter(i) || type->getAttribute(i)->kind() == c10::TypeKind::ClassType) continue;
      const std::string name = (module.name.empty() ? "" : module.name + ".") + type->getAttributeName(i);
      const c10::IValue value = module.value._ivalue()->getSlot(i);
      if (!value.isTensor() && !written.count(name)) continue;
      state << "  " << name << ": " << value_text(value) << (written.count(name) ? "  (written by a method)" : "")
            << "\n";
    }
  }
  if (state.tellp() > 0) out << "state (buffers and attributes; training flags left out):\n" << state.str();
  return out.str();
}

}  // namespace onnxport
