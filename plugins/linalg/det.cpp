// Determinants: ONNX Det (opset 11) over the last two dims, batched like PyTorch. logdet is
// log(det): NaN for a negative determinant and -inf for a singular matrix, as in PyTorch.
#include "linalg.h"
#include "onnxport/helpers.h"

namespace onnxport::linalg {
namespace {

Value* det(Graph& g, const TorchNode&, const Args& a) { return g.op("Det", {a.tensor(0)}); }

Value* logdet(Graph& g, const TorchNode&, const Args& a) { return g.op("Log", {g.op("Det", {a.tensor(0)})}); }

}  // namespace

void add_det(Registrar& r) {
  r.add("aten::linalg_det", 11, det);
  r.add("aten::det", 11, det);
  r.add("aten::logdet", 11, logdet);
}

}  // namespace onnxport::linalg
