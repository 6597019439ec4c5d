// Helpers shared by the creation pack: dtype arguments, filled tensors, index ranges.
#include "creation.h"
#include "onnxport/helpers.h"
#include "onnxport/sdk.h"

namespace onnxport::creation {

using namespace helpers;

std::optional<size_t> arg_index(const TorchNode& n, const std::string& name, std::optional<size_t> positional) {
  if (!n.input_names.empty()) return n.input_index(name);
  return positional;
}

void check_supported(const TorchNode& n, DType dtype) {
  switch (dtype) {
    case DType::Complex64:
    case DType::Complex128:
      throw ArgumentError(n.kind + ": dtype " + dtype_name(dtype) +
                          " is complex; ONNX has no complex tensor ops, so the exporter cannot produce it "
                          "(keep complex math outside the exported model)");
    case DType::String:
    case DType::Undefined: throw ArgumentError(n.kind + ": cannot create a tensor of dtype " + dtype_name(dtype));
    default: return;
  }
}

DType result_dtype(const TorchNode& n, const Args& a, DType fallback, std::optional<size_t> positional) {
  DType dtype = fallback;
  if (auto i = arg_index(n, "dtype", positional); i && !a.is_none(*i)) {
    dtype = dtype_from_scalar_type(a.i(*i));
  } else if (!n.output_types.empty() && n.output_types[0].dtype != DType::Undefined) {
    dtype = n.output_types[0].dtype;
  }
  check_supported(n, dtype);
  return dtype;
}

int64_t scalar_type_of(DType dtype) {
  switch (dtype) {
    case DType::UInt8: return 0;
    case DType::Int8: return 1;
    case DType::Int16: return 2;
    case DType::Int32: return 3;
    case DType::Int64: return 4;
    case DType::Float16: return 5;
    case DType::Float: return 6;
    case DType::Double: return 7;
    case DType::Complex64: return 9;
    case DType::Complex128: return 10;
    case DType::Bool: return 11;
    case DType::BFloat16: return 15;
    default: break;
  }
  throw ArgumentError(std::string("dtype ") + dtype_name(dtype) + " has no torch ScalarType");
}

Value* to_scalar(Graph& g, Value* v) {
  if (auto n = constant_number(v)) {
    const Tensor* t = v->maybe_tensor();
    return t && t->rank() > 0 ? g.constant_scalar(t->dtype(), *n) : v;
  }
  if (v->rank() == std::optional<int64_t>(0)) return v;
  return reshape(g, v, std::vector<int64_t>{});
}

namespace {

// ConstantOfShape's value tensor cannot be bfloat16 before opset 20: fill in float, then Cast.
DType fill_dtype(Graph& g, DType dtype) {
  if (dtype != DType::BFloat16) return dtype;
  if (g.opset() < 13) throw ArgumentError("bfloat16 tensors need opset 13 or later (Cast to bfloat16)");
  return DType::Float;
}

}  // namespace

Value* filled(Graph& g, Value* shape, double value, DType dtype) {
  const DType made = fill_dtype(g, dtype);
  Value* out;
  if (g.opset() >= 9) {
    out = g.op("ConstantOfShape", {shape}, {{"value_t", full_tensor(made, {1}, value)}});
  } else {
    out = g.op("Expand", {g.constant_scalar(made, value), shape});
  }
  return cast(g, out, dtype);
}

Value* filled(Graph& g, Value* shape, Value* value, DType dtype) {
  if (auto c = constant_number(value)) return filled(g, shape, *c, dtype);
  const DType made = fill_dtype(g, dtype);
  Value* scalar = cast(g, to_scalar(g, value), made);
  return cast(g, g.op("Expand", {scalar, shape}), dtype);
}

Value* index_range(Graph& g, Value* count) {
  if (auto n = count->maybe_int()) {
    std::vector<int64_t> idx(static_cast<size_t>(std::max<int64_t>(*n, 0)));
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>(i);
    return g.constant_ints(idx);
  }
  Value* n = cast(g, count, DType::Int64);
  if (g.opset() >= 11) return g.op("Range", {g.constant_int(0), to_scalar(g, n), g.constant_int(1)});
  // Opsets 9/10 have no Range: the indices of the non-zeros of ones(count) are 0..count-1.
  Value* ones = g.op("ConstantOfShape", {reshape(g, n, std::vector<int64_t>{1})},
                     {{"value_t", full_tensor(DType::Int64, {1}, 1)}});
  return squeeze(g, g.op("NonZero", {ones}), {0});
}

}  // namespace onnxport::creation
