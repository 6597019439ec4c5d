#pragma once
// Building blocks of the reductions, shared with the linalg pack (which compiles
// reduce_common.cpp too: cdist and pairwise_distance are vector norms).
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "onnxport/sdk.h"

namespace onnxport::reduce {

// The value of the schema argument called `name`, nullptr when this overload has no such
// argument. ArgumentError when the node carries no schema (its overload can't be told apart).
Value* named_arg(const TorchNode& n, const Args& a, const std::string& name);
// Its constant bool/int or the default when the argument is absent or None.
bool named_bool(const TorchNode& n, const Args& a, const std::string& name, bool fallback);
// The `dtype` argument (a c10::ScalarType number), when given.
std::optional<DType> named_dtype(const TorchNode& n, const Args& a);

// The dims an aten reduction reduces, from a `dim` argument that may be an int, an int list,
// None or absent. Empty means every dim (None and [] both do in PyTorch). Normalized when
// the rank is known; a 0-d input always reduces "every" dim.
std::vector<int64_t> reduction_dims(const TorchNode& n, const Value* dim, const Value* x);

// Integers and bools become int64 (what sum/prod/cumsum return for them in PyTorch).
Value* widen_integral(Graph& g, Value* x);
// (Integers and bools to float32, for ops PyTorch only defines for floating tensors: helpers::to_float.)

// helpers::reduce for any dtype: inputs the ONNX op (or ONNX Runtime) does not take at this
// opset are computed in a wider type and cast back.
Value* reduce_any(Graph& g, const std::string& op, Value* x, const std::vector<int64_t>& dims, bool keepdim);

// The p-norm over dims (empty: all), PyTorch's linalg.vector_norm: p = 2 -> ReduceL2, 1 -> ReduceL1,
// +-inf -> max/min of |x|, 0 -> count of non-zeros, otherwise sum(|x|^p)^(1/p).
Value* vector_norm(Graph& g, Value* x, double p, const std::vector<int64_t>& dims, bool keepdim);

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace onnxport::reduce
