#include "onnxport/program_listing.h"

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "1_base/torch_tensors.h"
#include "3_export/1_load/program_archive.h"
#include "3_export/1_load/program_graph.h"
#include "onnxport/dtype.h"

namespace onnxport {

namespace {

using nlohmann::json;

std::string value_text(const json& values, const std::string& name) {
  if (!values.contains(name)) return name;
  const json& meta = values.at(name);
  std::string dims;
  for (const auto& size : meta.at("sizes")) dims += (dims.empty() ? "" : ",") + core::program_dim_text(size);
  std::string dtype = "dtype " + std::to_string(meta.at("dtype").get<int>());
  try {
    dtype = dtype_name(core::dtype_of(core::program_scalar_type(meta.at("dtype").get<int>(), name)));
  } catch (const std::exception&) {
  }
  return name + ": " + dtype + "[" + dims + "]";
}

std::string argument_name(const json& argument) {
  if (argument.contains("as_tensor")) return argument.at("as_tensor").at("name");
  return argument.dump();
}

// A constant input's value as Python writes it: 3, 0.5, True, None, "text".
std::string constant_text(const json& value) {
  if (!value.is_object() || value.empty() || value.contains("as_none")) return "None";
  const json& v = value.begin().value();
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  return v.dump();
}

}  // namespace

bool is_program_file(const std::string& path) { return core::ProgramArchive::holds_program(path); }

std::string inspect_program_file(const std::string& path) {
  const core::ProgramArchive archive(path);
  const json& program = archive.program();
  const json& graph = program.at("graph_module").at("graph");
  const json& values = graph.at("tensor_values");
  std::ostringstream out;
  out << path << ": torch.export program, schema " << archive.version_text() << "\n";
  std::ostringstream inputs, outputs;
  std::map<std::string, int> held;
  for (const auto& spec : program.at("graph_module").at("signature").at("input_specs")) {
    const std::string kind = spec.begin().key();
    if (kind == "user_input")
      inputs << "  " << value_text(values, argument_name(spec.at(kind).at("arg"))) << "\n";
    else if (kind == "constant_input")
      inputs << "  " << spec.at(kind).value("name", "?") << " = " << constant_text(spec.at(kind).at("value"))
             << " (specialized at export: the program holds it as a constant)\n";
    else
      ++held[kind == "parameter" ? "parameters" : kind == "buffer" ? "buffers" : kind == "tensor_constant" ? "constants" : kind];
  }
  for (const auto& spec : program.at("graph_module").at("signature").at("output_specs")) {
    const std::string kind = spec.begin().key();
    const std::string name = argument_name(spec.at(kind).at("arg"));
    outputs << "  " << value_text(values, name) << (kind == "user_output" ? "" : " (" + kind + ")") << "\n";
  }
  out << "inputs:\n" << inputs.str() << "outputs:\n" << outputs.str();
  if (const std::string ranges = core::program_dim_ranges(program); !ranges.empty())
    out << "symbolic dims: " << ranges << "\n";
  std::string kept;
  for (const auto& [kind, count] : held) kept += (kept.empty() ? "" : ", ") + std::to_string(count) + " " + kind;
  out << "holds: " << (kept.empty() ? std::string("no tensors") : kept) << "\n";
  std::map<std::string, int> operators;
  std::string higher_order;
  for (const auto& node : graph.at("nodes")) {
    const std::string target = node.at("target");
    ++operators[target];
    if (target.rfind("torch.ops.higher_order.", 0) == 0 && !core::reads_higher_order(target))
      higher_order += (higher_order.empty() ? "" : ", ") + target;
  }
  out << "operators (" << graph.at("nodes").size() << " nodes):\n";
  for (const auto& [target, count] : operators) out << "  " << target << " x" << count << "\n";
  if (!higher_order.empty())
    out << "higher-order operators, which onnxport does not export yet: " << higher_order << "\n";
  return out.str();
}

}  // namespace onnxport
