#include "reduce_common.h"

#include <cmath>

#include "onnxport/helpers.h"

namespace onnxport::reduce {

using namespace helpers;

Value* named_arg(const TorchNode& n, const Args& a, const std::string& name) {
  if (n.input_names.empty())
    throw ArgumentError(n.kind + ": the node carries no operator schema, so its overload (and argument '" + name +
                        "') cannot be identified; export a graph whose ops resolve to registered aten schemas");
  for (size_t i = 0; i < n.input_names.size() && i < a.size(); ++i)
    if (n.input_names[i] == name) return a.at(i);
  return nullptr;
}

bool named_bool(const TorchNode& n, const Args& a, const std::string& name, bool fallback) {
  Value* v = named_arg(n, a, name);
  if (!v || v->is_none()) return fallback;
  if (auto b = v->maybe_bool()) return *b;
  throw ArgumentError(n.kind + ": argument '" + name + "' must be a constant bool, found " + v->describe());
}

std::optional<DType> named_dtype(const TorchNode& n, const Args& a) {
  Value* v = named_arg(n, a, "dtype");
  if (!v || v->is_none()) return std::nullopt;
  if (auto i = v->maybe_int()) return dtype_from_scalar_type(*i);
  throw ArgumentError(n.kind + ": argument 'dtype' must be a constant dtype, found " + v->describe());
}

std::vector<int64_t> reduction_dims(const TorchNode& n, const Value* dim, const Value* x) {
  if (!dim || dim->is_none()) return {};
  std::vector<int64_t> dims;
  if (auto list = dim->maybe_ints())
    dims = *list;
  else if (auto one = dim->maybe_int())
    dims = {*one};
  else
    throw ArgumentError(n.kind + ": argument 'dim' must be a constant int or int list, found " + dim->describe() +
                        " (dims computed at run time can't be exported)");
  const auto rank = x->rank();
  if (!rank) return dims;
  if (*rank == 0) {
    normalize_dims(dims, 0);  // only validates: 0 and -1 are the dims of a 0-d tensor
    return {};
  }
  dims = normalize_dims(dims, *rank);
  if (static_cast<int64_t>(dims.size()) == *rank) {
    // Every dim listed: the same as reducing all, which needs no axes at all.
    std::vector<bool> seen(static_cast<size_t>(*rank), false);
    for (int64_t d : dims) seen[static_cast<size_t>(d)] = true;
    bool all = true;
    for (bool s : seen) all = all && s;
    if (all) return {};
  }
  return dims;
}

namespace {

// The dtypes ONNX's Reduce* ops take at every opset we target (bfloat16 from 13; ReduceMax/Min
// also int8/uint8 from 12).
bool reducible(const std::string& op, DType d, int opset) {
  switch (d) {
    case DType::Float:
    case DType::Double:
    case DType::Float16:
    case DType::Int32:
    case DType::Int64:
    case DType::UInt32:
    case DType::UInt64: return true;
    case DType::BFloat16: return opset >= 13;
    case DType::Int8:
    case DType::UInt8: return opset >= 12 && (op == "ReduceMax" || op == "ReduceMin");
    default: return false;
  }
}

}  // namespace

Value* widen_integral(Graph& g, Value* x) { return is_int_or_bool(dtype_of(x)) ? cast(g, x, DType::Int64) : x; }

Value* reduce_any(Graph& g, const std::string& op, Value* x, const std::vector<int64_t>& dims, bool keepdim) {
  const DType d = dtype_of(x);
  if (d == DType::Undefined || reducible(op, d, g.opset())) return helpers::reduce(g, op, x, dims, keepdim);
  const DType wide = is_floating(d) ? DType::Float : d == DType::UInt32 ? DType::Int64 : DType::Int32;
  return cast(g, helpers::reduce(g, op, cast(g, x, wide), dims, keepdim), d);
}

Value* vector_norm(Graph& g, Value* x, double p, const std::vector<int64_t>& dims, bool keepdim) {
  x = to_float(g, x);
  if (p == 2.0) return helpers::reduce(g, "ReduceL2", x, dims, keepdim);
  if (p == 1.0) return helpers::reduce(g, "ReduceL1", x, dims, keepdim);
  if (std::isinf(p)) return helpers::reduce(g, p > 0 ? "ReduceMax" : "ReduceMin", g.op("Abs", {x}), dims, keepdim);
  if (p == 0.0) {
    const DType d = dtype_of(x) == DType::Undefined ? DType::Float : dtype_of(x);
    return helpers::reduce(g, "ReduceSum", cast(g, cast(g, x, DType::Bool), d), dims, keepdim);
  }
  Value* powered = g.op("Pow", {g.op("Abs", {x}), scalar_like(g, p, x)});
  return g.op("Pow", {helpers::reduce(g, "ReduceSum", powered, dims, keepdim), scalar_like(g, 1.0 / p, x)});
}

}  // namespace onnxport::reduce
