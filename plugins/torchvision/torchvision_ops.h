#pragma once
// The torchvision pack: torchvision's TORCH_LIBRARY ops (detection models) mapped to ONNX.
#include "onnxport/registrar.h"
#include "onnxport/sdk.h"

namespace onnxport::torchvision {

void add_nms(Registrar& r);          // nms
void add_roi(Registrar& r);          // roi_align, roi_pool, ps_roi_align, ps_roi_pool
void add_deform_conv(Registrar& r);  // deform_conv2d

// The dtype of a floating-point input, Float when it is unknown.
inline DType float_dtype(const Value* v) { return v->dtype() == DType::Undefined ? DType::Float : v->dtype(); }

}  // namespace onnxport::torchvision
