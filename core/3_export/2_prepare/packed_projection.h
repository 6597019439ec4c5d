#pragma once
// PyTorch 2's multi-head attention splits its packed in-projection (torch.nn.functional's
// _in_projection_packed) as
//   proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
// and takes [0], [1], [2] (2 parts for an encoder-decoder's key and value): what
// proj.chunk(3, -1) gives, written for memory layout. Mapped op by op that is seven ONNX nodes
// per attention layer where a chunk is one Split; torch.export programs and scripted or traced
// attention (outside the fused inference path) hold it.
#include <torch/csrc/jit/ir/ir.h>

namespace onnxport::core {

// Rewrites each such chain whose every use is a select of a constant part along dim 0 into
// aten::unsafe_chunk(proj, n, -1) and its parts. Needs the graph's ranks (types recorded or
// adopted). Returns how many chains it rewrote.
size_t fold_packed_projection_splits(torch::jit::Graph& graph);

}  // namespace onnxport::core
