#include "onnxport/op_pack.h"
#include "prim.h"

ONNXPORT_OP_PACK(prim, "1.0.0") {
  onnxport::prim::add_lists(r);
  onnxport::prim::add_scalars(r);
  onnxport::prim::add_script_ops(r);
  // Complex values: shape queries and copies act on either part alike.
  r.add_complex_componentwise({"aten::size", "aten::contiguous", "aten::clone"});
}
