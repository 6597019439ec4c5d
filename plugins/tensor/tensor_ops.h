#pragma once
// The tensor pack: shape manipulation, joining/splitting, indexing, gather/scatter, sorting,
// triangular/diagonal views and layout changes (flip, roll, movedim, unfold, ...).
#include <string>
#include <vector>

#include "onnxport/helpers.h"
#include "onnxport/registrar.h"

namespace onnxport::tensor {

void add_shape(Registrar& r);           // view/reshape/flatten, (un)squeeze, transpose/permute/t, expand, repeat, numel
void add_join(Registrar& r);            // cat/stack, chunk/split/unbind
void add_indexing(Registrar& r);        // slice/select/narrow/index_select
void add_advanced_index(Registrar& r);  // index/index_put (tensor indices, bool masks), nonzero
void add_gather_scatter(Registrar& r);  // gather/scatter*, index_add/copy/fill, take, masked_select/scatter
void add_sort(Registrar& r);            // topk/sort/argsort, unique, bucketize
void add_triangular(Registrar& r);      // tril/triu, diagonal, diag_embed, diag
void add_layout(Registrar& r);          // flip/roll/rot90, movedim, unfold, repeat_interleave, tensor_split, ...
void add_view_scatter(Registrar& r);    // slice_scatter/select_scatter (also writes through views)

// ---- helpers shared by the files above (common.cpp)

// dim normalized against x's rank; ArgumentError naming `what` when the rank is unknown.
int64_t dim_of(const Value* x, int64_t dim, const std::string& what);
std::vector<int64_t> iota(int64_t n, int64_t from = 0);
// Static size of dim, or ArgumentError saying that `what` needs it.
int64_t static_size(const Value* x, int64_t dim, const std::string& what);
// Shape(x)[begin:end] as a 1-d int64 value (a constant when those dims are static).
Value* shape_range(Graph& g, Value* x, int64_t begin, int64_t end);
// idx with negative entries wrapped by `size` (a 0-d int64 value); no-op for non-negative constants.
Value* wrap_negative(Graph& g, Value* idx, Value* size);
// An index tensor as int64, bool masks rejected by callers.
Value* as_index(Graph& g, Value* idx);
// Scatter (opset 9/10) or ScatterElements (11+); reduction "add"/"mul" needs opset 16.
Value* scatter_elements(Graph& g, Value* data, Value* index, Value* updates, int64_t axis, const std::string& reduction,
                        const std::string& what);
// A 1-d int64 index of length n reshaped to run along `dim` of a rank-`rank` tensor and
// expanded to `shape` (1-d int64), as Scatter/Gather-Elements indices.
Value* index_along(Graph& g, Value* index, int64_t dim, int64_t rank, Value* shape);
// Reverse x along each of dims (Slice with step -1 from opset 10, Gather with a constant index before).
Value* flip_dims(Graph& g, Value* x, const std::vector<int64_t>& dims, const std::string& what);
// Bidirectional broadcast of every value in vs; returns the common shape (1-d int64).
Value* broadcast_shape(Graph& g, const std::vector<Value*>& vs);

}  // namespace onnxport::tensor
