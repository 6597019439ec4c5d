// Embedding lookups. padding_idx only affects gradients, so inference needs just the Gather.
#include "nn.h"
#include "onnxport/helpers.h"

namespace onnxport::nn {
namespace {

using namespace helpers;

// embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False)
Value* embedding(Graph& g, const TorchNode&, const Args& a) {
  Value* indices = a.tensor(1);
  const DType d = dtype_of(indices);
  if (d != DType::Undefined && d != DType::Int32 && d != DType::Int64) indices = cast(g, indices, DType::Int64);
  return gather(g, a.tensor(0), indices, 0);
}

}  // namespace

void add_embedding(Registrar& r) { r.add("aten::embedding", 9, embedding); }

}  // namespace onnxport::nn
