#include "onnxport/op_pack.h"
#include "reduce.h"

ONNXPORT_OP_PACK(reduce, "1.0.0") {
  onnxport::reduce::add_sums(r);
  onnxport::reduce::add_extrema(r);
  onnxport::reduce::add_statistics(r);
  onnxport::reduce::add_norms(r);
  onnxport::reduce::add_cumulative(r);
}
