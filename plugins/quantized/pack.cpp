#include "onnxport/op_pack.h"
#include "quantized.h"

ONNXPORT_OP_PACK(quantized, "1.0.0") {
  onnxport::quantized::add_quantize(r);
  onnxport::quantized::add_ops(r);
  onnxport::quantized::add_weighted(r);
}
