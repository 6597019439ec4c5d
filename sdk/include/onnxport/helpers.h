#pragma once
// Shared building blocks for symbolics: the C++ counterparts of torch.onnx's symbolic_helper.
//
//  - dims and dtypes: normalize_dim, rank_of, static_dim, dtype_from_scalar_type
//  - opset-aware ONNX snippets: unsqueeze/squeeze (axes attribute before opset 13, input
//    from 13), slice (attributes at opset 9, inputs from 10), reduce (ReduceSum's axes become
//    an input at 13, the other Reduce* ops keep the attribute up to opset 17), split, pad, ...
//  - PyTorch type promotion: result_type / promote (numbers < 0-d tensors < tensors)
//  - combinators, so that most mappings are one line:
//
//      r.add("aten::tanh", 9, unary("Tanh"));
//      add_with_inplace(r, "aten::add", 9, binary("Add"));   // aten::add and aten::add_
//
// Every function throws ArgumentError (naming what it needed) instead of building a wrong graph.
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "onnxport/sdk.h"

namespace onnxport::helpers {

// ---------------------------------------------------------------- dims, ranks, dtypes

// Integer or bool: the dtypes float-only ONNX math (Sqrt, Reduce* means, ...) must not see.
bool is_int_or_bool(DType d);
// 8- and 16-bit integers, which ONNX's arithmetic ops take from opset 14 only.
bool is_narrow_integer(DType d);
// v's dtype when it is floating, else float32 (the dtype of a float result of an integer input).
DType float_dtype_of(const Value* v);

// dim in [-rank, rank) -> [0, rank). ArgumentError when out of range.
int64_t normalize_dim(int64_t dim, int64_t rank);
std::vector<int64_t> normalize_dims(const std::vector<int64_t>& dims, int64_t rank);

// The rank of v, or ArgumentError saying that `what` (e.g. "aten::transpose input") needs it.
int64_t rank_of(const Value* v, const std::string& what);
// The size of dimension `dim` (may be negative) when it is statically known.
std::optional<int64_t> static_dim(const Value* v, int64_t dim);
// All dims, when they are statically known.
std::optional<std::vector<int64_t>> static_shape(const Value* v);

// c10::ScalarType numbering (the `dtype` int arguments of aten ops) -> DType.
DType dtype_from_scalar_type(int64_t scalar_type);

// The element type of v: the payload's type for constants (int -> Int64, float -> Double,
// bool -> Bool), otherwise type().dtype (Undefined when unknown).
DType dtype_of(const Value* v);
// The value of a constant number (int/float/bool, or a one-element tensor payload).
std::optional<double> constant_number(const Value* v);

// A tensor of `shape` filled with `value` (for default BatchNorm/LayerNorm weights, ...).
Tensor full_tensor(DType dtype, const std::vector<int64_t>& shape, double value);
// A 0-d constant with the dtype of `like` (Float when like's dtype is unknown).
Value* scalar_like(Graph& g, double value, const Value* like);

// ---------------------------------------------------------------- opset-aware ONNX snippets

// Cast unless v already has that dtype. A constant number becomes a new constant (no Cast node).
Value* cast(Graph& g, Value* v, DType to);
// v cast to float32 when its dtype is integer or bool; a floating v as it is.
Value* to_float(Graph& g, Value* v);
Value* unsqueeze(Graph& g, Value* v, const std::vector<int64_t>& axes);
// Empty axes: squeeze every dimension of size 1.
Value* squeeze(Graph& g, Value* v, const std::vector<int64_t>& axes = {});
Value* reshape(Graph& g, Value* v, const std::vector<int64_t>& shape);
Value* reshape(Graph& g, Value* v, Value* shape);  // shape: a 1-d int64 tensor
Value* transpose(Graph& g, Value* v, const std::vector<int64_t>& perm);
Value* concat(Graph& g, const std::vector<Value*>& values, int64_t axis);
// Constant bounds; steps empty means all 1. Opset 9 (attributes) only supports steps of 1.
Value* slice(Graph& g, Value* v, const std::vector<int64_t>& axes, const std::vector<int64_t>& starts,
             const std::vector<int64_t>& ends, const std::vector<int64_t>& steps = {});
// Dynamic bounds (1-d int64 tensors; axes/steps may be nullptr). Needs opset >= 10.
Value* slice(Graph& g, Value* v, Value* starts, Value* ends, Value* axes, Value* steps);
Value* shape_of(Graph& g, Value* v);
// Size of one dimension as a 0-d int64 tensor (1-d [1] with as_1d). A constant when static.
Value* size(Graph& g, Value* v, int64_t dim, bool as_1d = false);
Value* gather(Graph& g, Value* data, Value* indices, int64_t axis);

// Complex values as real pairs (Value::is_complex): the real and the imaginary part of `z`
// ([..., 2] -> two [...] tensors), and a pair made from two real tensors of one shape.
std::pair<Value*, Value*> complex_parts(Graph& g, Value* z);
Value* complex_from_parts(Graph& g, Value* re, Value* im);
// Reduce over axes (empty: over all dims). op is "ReduceSum", "ReduceMean", "ReduceMax", ...
Value* reduce(Graph& g, const std::string& op, Value* v, const std::vector<int64_t>& axes, bool keepdims);
// Split along axis into pieces of the given sizes.
std::vector<Value*> split(Graph& g, Value* v, const std::vector<int64_t>& sizes, int64_t axis);
// Split along axis into `parts` pieces of equal size (the axis's size a multiple of parts): a Split
// without sizes, which from opset 18 says how many pieces with num_outputs.
std::vector<Value*> split_equal(Graph& g, Value* v, int64_t parts, int64_t axis);
// Pieces of `piece` elements (a 1-d [1] int64 tensor) along `axis`, the last one smaller, where the
// axis has a run-time size: `count` pieces as Slices (opset >= 10; a piece past the end is empty),
// or, with count < 0, as an ONNX sequence of however many there are (SplitToSequence, opset >= 11).
std::vector<Value*> split_in_pieces(Graph& g, Value* v, Value* piece, int64_t count, int64_t axis);
Value* split_in_pieces_to_sequence(Graph& g, Value* v, Value* piece, int64_t axis);
// ceil(size / parts) for a 1-d [1] int64 size: the piece size of torch.chunk (at least 1).
Value* chunk_piece(Graph& g, Value* size_1d, int64_t parts);
Value* chunk_piece(Graph& g, Value* size_1d, Value* parts_1d);  // parts computed at run time
// Constant padding. pads in ONNX order: begins of every dim, then ends of every dim.
Value* pad_constant(Graph& g, Value* v, const std::vector<int64_t>& pads, double value = 0.0);

// A 1-d int64 tensor from a TorchScript int list: a constant list, a list whose elements are
// constants or 0-d/1-d tensors (e.g. from aten::size), or already a 1-d tensor.
Value* int_list(Graph& g, Value* list);

// ---------------------------------------------------------------- type promotion

// torch.promote_types for the dtypes ONNX can carry.
DType promote_types(DType a, DType b);
// torch.result_type: dimensioned tensors win over 0-d tensors, which win over numbers (constant
// ints/floats/bools, TorchScript scalars, 0-d constants recorded by tracing), unless a lower
// group has a higher category (bool < integer < floating); numbers then give the default
// dtype of their category (Float, Int64).
DType result_type(const std::vector<Value*>& operands);
// Every operand cast to result_type(operands) (constant numbers are re-made in that dtype).
std::vector<Value*> promote(Graph& g, const std::vector<Value*>& operands);

// g.op(onnx_op, operands) for Add, Sub, Mul and Div. Before opset 14 these ops take no 8- or 16-bit
// integers: such operands are computed in int32 and the result cast back, which wraps as torch
// does (every sum, difference or product of two such values is exact in int32).
Value* arithmetic(Graph& g, const std::string& onnx_op, const std::vector<Value*>& operands);

// ---------------------------------------------------------------- combinators

// g.op(onnx_op, {arg 0}, attrs).
Symbolic unary(const std::string& onnx_op, Attrs attrs = {});
// Same, but integer/bool inputs are cast to float first (aten::sqrt of an int tensor is float).
Symbolic unary_float(const std::string& onnx_op);
// arithmetic(onnx_op, promote(arg 0, arg 1)). An `alpha` argument (aten::add/sub) scales arg 1.
Symbolic binary(const std::string& onnx_op);
// Returns argument 0 unchanged (aten::detach, aten::contiguous, prim::NumToTensor, ...).
Symbolic identity();

// The results of an in-place op keep self's dtype, as torch casts them back into self
// (x.add_(y) of a float16 x and a float32 y is float16; x.eq_(y) of a float x is float).
std::vector<Value*> in_place_results(Graph& g, const Args& a, std::vector<Value*> results);

// Registers fn for torch_op and for its in-place variant torch_op + "_" (see in_place_results).
template <class F>
void add_with_inplace(Registrar& r, const std::string& torch_op, int since_opset, F fn) {
  r.add(torch_op, since_opset, fn);
  r.add(torch_op + "_", since_opset, [fn](Graph& g, const TorchNode& n, const Args& a) {
    if constexpr (std::is_convertible_v<std::invoke_result_t<const F&, Graph&, const TorchNode&, const Args&>, Value*>)
      return in_place_results(g, a, {fn(g, n, a)});
    else
      return in_place_results(g, a, fn(g, n, a));
  });
}

// ---------------------------------------------------------------- errors

// An ArgumentError about `node`: its op, module path and source line, and what to do next.
[[noreturn]] void fail_node(const TorchNode& node, const std::string& message, const std::string& hint = "");

}  // namespace onnxport::helpers
