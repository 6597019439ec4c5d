#pragma once
// Kernels for custom-domain ops from the op packs' evaluators (the SDK's OpEvaluator, over
// plain buffers): the lookup a ModelEvaluator takes for domains other than ONNX's.
#include "2_eval/evaluator.h"
#include "onnxport/registry/registry.h"

namespace onnxport::core::eval {

// The registry must outlive the lookup (and the packs stay loaded while it lives).
DomainKernelLookup pack_kernels(const Registry& registry);

}  // namespace onnxport::core::eval
