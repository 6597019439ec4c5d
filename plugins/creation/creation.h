#pragma once
// The creation pack: tensor factories (zeros/ones/full/empty and their _like/new_ forms, eye,
// arange/linspace, windows), random sampling, casts and the dtype/device plumbing around them.
#include <optional>
#include <string>
#include <vector>

#include "onnxport/registrar.h"

namespace onnxport::creation {

void add_factories(
    Registrar& r);  // zeros/ones/full/empty(+_like, new_), fill_, zero_, eye, one_hot, tensor, scalar_tensor
void add_ranges(Registrar& r);  // arange, _dim_arange, linspace, logspace, tril/triu_indices, window functions
void add_random(Registrar& r);  // rand/randn(+_like), randint(+_like), normal, uniform_, bernoulli, multinomial
void add_casts(
    Registrar& r);  // _cast_*, is_floating_point, item, identities (lift, conj, ...), prim::dtype/device/layout/data

// ---- shared by the files above (common.cpp)

// The index of the schema argument called `name`; `positional` when the node has no schema names.
std::optional<size_t> arg_index(const TorchNode& n, const std::string& name, std::optional<size_t> positional = {});

// The dtype a factory produces: its `dtype` argument when given, else what tracing recorded for
// the node's output, else `fallback`. Complex and other dtypes ONNX tensors cannot carry here are
// an ArgumentError naming the op.
DType result_dtype(const TorchNode& n, const Args& a, DType fallback, std::optional<size_t> positional = {});

// Throws ArgumentError unless ONNX can hold `dtype` as a plain numeric/bool tensor.
void check_supported(const TorchNode& n, DType dtype);

// c10::ScalarType numbering of a DType (the inverse of helpers::dtype_from_scalar_type).
int64_t scalar_type_of(DType dtype);

// A tensor of dynamic `shape` (a 1-d int64 Value) filled with `value`, which is a constant number
// (ConstantOfShape) or a 0-d tensor computed at run time (Expand).
Value* filled(Graph& g, Value* shape, Value* value, DType dtype);
Value* filled(Graph& g, Value* shape, double value, DType dtype);

// 0, 1, ..., count-1 as a 1-d int64 tensor; count is a 0-d or 1-element int64 Value. A constant
// count gives a constant; otherwise Range (opset 11+) or NonZero over a ConstantOfShape.
Value* index_range(Graph& g, Value* count);

// v as a 0-d tensor (a 1-element 1-d tensor is reshaped).
Value* to_scalar(Graph& g, Value* v);

}  // namespace onnxport::creation
