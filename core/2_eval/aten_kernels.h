#pragma once
// org.pytorch.aten::ATen nodes (the operator_export_type fallback): the named aten op called
// through the dispatcher, its constant arguments read back from the node's attributes.
#include "2_eval/evaluator.h"

namespace onnxport::core::eval {

constexpr const char* kAtenFallbackDomain = "org.pytorch.aten";

// The kernel for op "ATen" of domain org.pytorch.aten.
const Kernel& aten_fallback_kernel();

}  // namespace onnxport::core::eval
