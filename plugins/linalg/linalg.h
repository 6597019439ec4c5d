#pragma once
// The linalg pack: products and contractions, scaled products (addmv/addr/baddbmm), cross
// products, determinants and distances.
#include <vector>

#include "onnxport/registrar.h"
#include "onnxport/sdk.h"

namespace onnxport::linalg {

void add_products(Registrar& r);  // dot, vdot, mv, outer, ger, inner, tensordot, einsum, kron, trace
void add_scaled(Registrar& r);    // addmv, addr, baddbmm
void add_cross(Registrar& r);     // cross, linalg_cross
void add_det(Registrar& r);       // linalg_det, det, logdet
void add_distance(Registrar& r);  // cdist, pairwise_distance, cosine_similarity

// Shared by the files above (products.cpp).

// The outer product of two 1-d tensors.
Value* outer_product(Graph& g, Value* a, Value* b);
// tensordot: sums the products over a's dims da and b's dims db (pairwise, same sizes); the
// result has a's remaining dims, then b's. Transpose + MatMul for static shapes, Einsum
// (opset 12) otherwise.
Value* contract(Graph& g, const TorchNode& n, Value* a, Value* b, std::vector<int64_t> da, std::vector<int64_t> db);

// Dim `dim` of the broadcast of `operands`, as an axis of v (one of them, maybe of lower rank).
// Negative dims count from the end in every operand and stay negative from opset 11.
int64_t broadcast_axis(Graph& g, const TorchNode& n, Value* v, int64_t dim, const std::vector<Value*>& operands);

}  // namespace onnxport::linalg
