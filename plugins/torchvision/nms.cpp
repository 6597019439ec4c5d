// torchvision::nms(dets[N,4], scores[N], iou_threshold) -> kept indices (int64), by descending
// score. ONNX NonMaxSuppression (opset 10) does the same per (batch, class) and returns
// [M, 3] (batch, class, box) triples in that order: one batch, one class, keep the box column.
// Boxes are (x1, y1, x2, y2) while ONNX's default box format is (y1, x1, y2, x2); IoU is
// symmetric in x and y, so the coordinates pass through unchanged.
#include "onnxport/helpers.h"
#include "torchvision_ops.h"

namespace onnxport::torchvision {
namespace {

using namespace helpers;

// iou_threshold as the 1-element float tensor NonMaxSuppression takes.
Value* iou_threshold(Graph& g, const Args& a) {
  if (auto t = a.at(2)->maybe_float()) return g.constant(Tensor::floats({static_cast<float>(*t)}));
  return reshape(g, cast(g, a.tensor(2), DType::Float), std::vector<int64_t>{1});
}

Value* nms(Graph& g, const TorchNode&, const Args& a) {
  // NonMaxSuppression only takes float32 (torch also accepts float64/float16).
  Value* boxes = cast(g, a.tensor(0), DType::Float);
  Value* scores = cast(g, a.tensor(1), DType::Float);
  // Every box may be kept: the per-class limit is the number of boxes.
  Value* max_per_class = size(g, boxes, 0, /*as_1d=*/true);
  Value* selected = g.op("NonMaxSuppression",
                         {unsqueeze(g, boxes, {0}), unsqueeze(g, scores, {0, 1}), max_per_class, iou_threshold(g, a)});
  return squeeze(g, slice(g, selected, {1}, {2}, {3}), {1});
}

}  // namespace

void add_nms(Registrar& r) { r.add("torchvision::nms", 10, nms); }

}  // namespace onnxport::torchvision
