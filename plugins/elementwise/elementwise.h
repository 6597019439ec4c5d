#pragma once
// The elementwise pack: activations, arithmetic with PyTorch type promotion, comparisons.
#include "onnxport/registrar.h"

namespace onnxport::elementwise {

void add_activations(Registrar& r);  // relu, sigmoid, tanh, leaky_relu, hardtanh/clamp (Clip), gelu, ...
void add_arithmetic(Registrar& r);   // add/sub (alpha), mul, div (rounding modes), pow, exp, log, ...
void add_compare(Registrar& r);      // eq/ne/lt/gt/le/ge, logical ops, where, masked_fill

}  // namespace onnxport::elementwise
