#pragma once
// An assignment into part of a tensor (`x[:, n:] = v`) traces as aten::copy_ of `v` expanded to
// the slice's sizes at trace time (aten::expand with constant sizes). copy_ broadcasts its source
// to the destination itself, so that expand only fixes the example's sizes: with dynamic axes the
// slice changes size and the expanded source no longer fits. Wherever both run in torch, copying
// the unexpanded source gives the same values (as torch.onnx, which expands it to the slice).
#include <torch/csrc/jit/ir/ir.h>

namespace onnxport::core {

// Makes each aten::copy_ whose source is an aten::expand read by nothing else copy the expand's
// input instead. Returns how many it changed.
size_t copy_unexpanded_sources(torch::jit::Graph& graph);

}  // namespace onnxport::core
