#include "linalg.h"
#include "onnxport/op_pack.h"

ONNXPORT_OP_PACK(linalg, "1.0.0") {
  onnxport::linalg::add_products(r);
  onnxport::linalg::add_scaled(r);
  onnxport::linalg::add_cross(r);
  onnxport::linalg::add_det(r);
  onnxport::linalg::add_distance(r);
}
