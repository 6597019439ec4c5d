#pragma once
// The elementwise pack: activations, arithmetic with PyTorch type promotion, comparisons,
// bit shifts, float classification (isnan/isinf/...) and special functions.
#include "onnxport/sdk.h"

namespace onnxport::elementwise {

void add_activations(Registrar& r);        // relu, sigmoid, tanh, leaky_relu, hardtanh/clamp (Clip), gelu, ...
void add_activations_extra(Registrar& r);  // hardshrink, softshrink, log_sigmoid, threshold, rrelu, glu
void add_arithmetic(Registrar& r);         // add/sub (alpha), mul, div (rounding modes), pow, exp, log, ...
void add_compare(Registrar& r);            // eq/ne/lt/gt/le/ge, logical ops, where, masked_fill
void add_bitwise(Registrar& r);            // <<, >> (BitShift or powers of 2), __not__
void add_float_classes(Registrar& r);      // isnan, isinf, isfinite, isposinf, isneginf, signbit, nan_to_num
void add_math(Registrar& r);               // maximum/minimum, lerp, logit, xlogy, hypot, logaddexp, sinh, ...

// ---- shared building blocks (common.cpp)

// (is_int_or_bool and to_float, aten::exp of an int tensor is float: onnxport/helpers.h)
// The operands promoted like PyTorch, then to Float when that type is integral or bool.
std::vector<Value*> promote_float(Graph& g, const std::vector<Value*>& operands);
// Floor division of integer tensors (ONNX Div truncates toward zero).
Value* floor_div_integral(Graph& g, Value* x, Value* y);
// x == y for operands of one dtype; float equality before opset 11 is "neither < nor >".
Value* equal(Graph& g, Value* x, Value* y);
// x == 0 (any numeric dtype).
Value* is_zero(Graph& g, Value* x);
// A bool tensor of x's shape filled with `value`.
Value* full_bool_like(Graph& g, Value* x, bool value);
// Largest finite value of a floating dtype.
double max_finite(DType d);

}  // namespace onnxport::elementwise
