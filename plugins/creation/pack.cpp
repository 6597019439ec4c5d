#include "creation.h"
#include "onnxport/op_pack.h"

ONNXPORT_OP_PACK(creation, "1.0.0") {
  onnxport::creation::add_factories(r);
  onnxport::creation::add_ranges(r);
  onnxport::creation::add_random(r);
  onnxport::creation::add_casts(r);
}
