#pragma once
// Scripted list comprehensions over a fixed range (`[s for _ in range(dim)]`, as torch.nn's
// F.interpolate builds its scale factors) become straight-line code, so the list they build is
// a list of known values instead of an ONNX sequence filled by a Loop.
#include <torch/csrc/jit/ir/ir.h>

namespace onnxport::core {

// Unrolls each top-level prim::Loop whose trip count is a constant of at most kMaxUnrolledTrips,
// whose condition stays true, and whose body appends to a list. Returns how many it unrolled.
constexpr int64_t kMaxUnrolledTrips = 16;
size_t unroll_list_loops(torch::jit::Graph& graph);

}  // namespace onnxport::core
