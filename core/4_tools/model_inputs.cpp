#include "4_tools/model_inputs.h"

#include <map>

#include "onnxport/errors.h"
#include "onnxport/export.h"
#include "3_export/2_prepare/torch_graph.h"

namespace onnxport::core {

bool fits_declared(const onnx::ValueInfoProto& info, const at::Tensor& onnx_value) {
  if (!info.type().has_tensor_type()) return false;
  const auto& tt = info.type().tensor_type();
  if (dtype_of(onnx_value.scalar_type()) != static_cast<DType>(tt.elem_type())) return false;
  if (!tt.has_shape()) return true;
  if (tt.shape().dim_size() != onnx_value.dim()) return false;
  for (int i = 0; i < tt.shape().dim_size(); ++i)
    if (tt.shape().dim(i).has_dim_value() && tt.shape().dim(i).dim_value() != onnx_value.size(i)) return false;
  return true;
}

namespace {

// The declared type of a graph input as an InputSpec; nullopt if not fully static.
std::optional<InputSpec> static_spec_of(const onnx::ValueInfoProto& input) {
  if (!input.type().has_tensor_type()) return std::nullopt;
  const auto& tt = input.type().tensor_type();
  if (!tt.has_shape()) return std::nullopt;
  InputSpec spec;
  spec.name = input.name();
  spec.dtype = static_cast<DType>(tt.elem_type());
  for (const auto& d : tt.shape().dim()) {
    if (!d.has_dim_value()) return std::nullopt;
    spec.shape.push_back(d.dim_value());
  }
  return spec;
}

std::string declared_type_text(const onnx::ValueInfoProto& input) {
  const auto& tt = input.type().tensor_type();
  std::string s = dtype_name(static_cast<DType>(tt.elem_type()));
  s += "[";
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    s += (i ? "," : "") + (d.has_dim_value()       ? std::to_string(d.dim_value())
                           : d.dim_param().empty() ? "?"
                                                   : d.dim_param());
  }
  return s + "]";
}

std::map<std::string, const onnx::ValueInfoProto*> declared_inputs(const onnx::GraphProto& graph) {
  std::map<std::string, const onnx::ValueInfoProto*> declared;
  for (const auto& in : graph.input()) declared[in.name()] = &in;
  return declared;
}

// A graph input is a tensor: a number given for one (a number argument exported as a 0-d input)
// is the 0-d tensor torch.onnx makes of it: int64, float64 or bool.
at::Tensor graph_input_value(const c10::IValue& value, const InputSpec& spec) {
  if (value.isTensor()) return value.toTensor();
  if (value.isInt()) return at::scalar_tensor(value.toInt(), at::kLong);
  if (value.isDouble()) return at::scalar_tensor(value.toDouble(), at::kDouble);
  if (value.isBool()) return at::scalar_tensor(value.toBool(), at::kBool);
  throw ConfigError("--input '" + spec.text() + "': '" + spec.name + "' is a graph input, which takes a tensor or a number",
                    ErrorContext::with_hint("give --input " + spec.name + ":SHAPE[:DTYPE], " + spec.name +
                                            "=FILE.npy or " + spec.name + ":int=VALUE"));
}

// Draws (or reads) one value per spec and checks each against its declared type.
ModelInputs materialize(const onnx::GraphProto& graph, std::vector<InputSpec> specs, uint64_t seed) {
  const auto declared = declared_inputs(graph);
  ModelInputs inputs;
  const auto values = make_example_inputs(specs, seed);  // one generator: inputs differ
  for (size_t k = 0; k < specs.size(); ++k) {
    const InputSpec& spec = specs[k];
    const onnx::ValueInfoProto& info = *declared.at(spec.name);
    at::Tensor t = graph_input_value(values[k], spec);
    if (info.type().has_tensor_type()) {
      // A complex value is the real pair the graph takes.
      if (!fits_declared(info, as_onnx_input(t)))
        throw ConfigError("--input '" + spec.text() + "': input '" + spec.name + "' is " + declared_type_text(info) +
                              ", the value given is " + tensor_type_text(t),
                          ErrorContext::with_hint("give a value of the declared dtype and shape"));
    }
    if (spec.kind == InputSpec::Kind::Value) {  // the same number in every input set
      inputs.described.push_back(spec.name + ": " + tensor_type_text(t) + " = " + spec.values.at(0));
      inputs.specs.push_back(spec);
      inputs.tensors.push_back(t);
      continue;
    }
    inputs.described.push_back(
        spec.name + ": " + tensor_type_text(t) +
        (spec.npy_file.empty() ? " drawn (seed " + std::to_string(seed) + ")" : " from " + spec.npy_file));
    InputSpec drawn_like = spec;
    drawn_like.npy_file.clear();
    drawn_like.shape = t.sizes().vec();
    drawn_like.dtype = dtype_of(t.scalar_type());
    if (!spec.npy_file.empty() && at::isIntegralType(t.scalar_type(), /*includeBool=*/false) && t.numel() > 0)
      drawn_like.int_range = std::make_pair(t.min().item<int64_t>(), t.max().item<int64_t>());
    inputs.specs.push_back(drawn_like);
    inputs.tensors.push_back(t);
  }
  return inputs;
}

}  // namespace

at::Tensor as_onnx_input(const at::Tensor& t) { return t.is_complex() ? at::view_as_real(t.resolve_conj()) : t; }

std::vector<at::Tensor> as_onnx_inputs(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> out;
  for (const auto& t : tensors) out.push_back(as_onnx_input(t));
  return out;
}

std::string tensor_type_text(const at::Tensor& t) {
  std::string s = dtype_name(dtype_of(t.scalar_type()));
  s += "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? "," : "") + std::to_string(t.size(i));
  return s + "]";
}

ModelInputs inputs_for_model(const onnx::GraphProto& graph, const std::vector<std::string>& input_names,
                             const std::vector<InputSpec>& given, uint64_t seed) {
  const auto declared = declared_inputs(graph);
  std::string names;
  for (const auto& n : input_names) names += (names.empty() ? "" : ", ") + n;
  std::map<std::string, InputSpec> by_name;
  for (const auto& spec : given) {
    if (std::find(input_names.begin(), input_names.end(), spec.name) == input_names.end())
      throw ConfigError("--input '" + spec.text() + "': the model has no input '" + spec.name + "'",
                        ErrorContext::with_hint("its inputs are: " + (names.empty() ? "none" : names)));
    by_name[spec.name] = spec;
  }
  std::vector<InputSpec> specs;
  for (const auto& name : input_names) {
    if (auto it = by_name.find(name); it != by_name.end()) {
      specs.push_back(it->second);
    } else if (auto drawn = static_spec_of(*declared.at(name))) {
      specs.push_back(*drawn);
    } else {
      throw ConfigError(
          "input '" + name + "' has no static shape (" + declared_type_text(*declared.at(name)) +
              "), so it cannot be drawn",
          ErrorContext::with_hint("give it: --input " + name + ":SHAPE[:DTYPE] or --input " + name + "=FILE.npy"));
    }
  }
  return materialize(graph, std::move(specs), seed);
}

ModelInputs redrawn_inputs(const onnx::GraphProto& graph, const std::vector<std::string>& input_names,
                           const ModelInputs& first, uint64_t seed, int64_t grow) {
  const auto declared = declared_inputs(graph);
  std::vector<InputSpec> specs = first.specs;
  for (auto& spec : specs) {
    if (!spec.is_tensor()) continue;
    const auto& tt = declared.at(spec.name)->type().tensor_type();
    for (int i = 0; i < tt.shape().dim_size() && i < static_cast<int>(spec.shape.size()); ++i)
      if (!tt.shape().dim(i).has_dim_value()) spec.shape[i] += grow;
  }
  return materialize(graph, std::move(specs), seed);
}

}  // namespace onnxport::core
