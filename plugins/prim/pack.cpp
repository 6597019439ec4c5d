#include "onnxport/op_pack.h"
#include "prim.h"

ONNXPORT_OP_PACK(prim, "1.0.0") {
  onnxport::prim::add_lists(r);
  onnxport::prim::add_scalars(r);
  onnxport::prim::add_script_ops(r);
}
