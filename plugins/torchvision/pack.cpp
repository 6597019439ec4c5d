#include "onnxport/op_pack.h"
#include "torchvision_ops.h"

ONNXPORT_OP_PACK(torchvision, "1.0.0") {
  onnxport::torchvision::add_nms(r);
  onnxport::torchvision::add_roi(r);
  onnxport::torchvision::add_deform_conv(r);
}
