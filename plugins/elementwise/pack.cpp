#include "elementwise.h"
#include "onnxport/op_pack.h"

ONNXPORT_OP_PACK(elementwise, "1.0.0") {
  onnxport::elementwise::add_activations(r);
  onnxport::elementwise::add_activations_extra(r);
  onnxport::elementwise::add_arithmetic(r);
  onnxport::elementwise::add_compare(r);
  onnxport::elementwise::add_bitwise(r);
  onnxport::elementwise::add_float_classes(r);
  onnxport::elementwise::add_math(r);
}
