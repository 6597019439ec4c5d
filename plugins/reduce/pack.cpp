#include "onnxport/op_pack.h"
#include "reduce.h"

ONNXPORT_OP_PACK(reduce, "1.0.0") {
  onnxport::reduce::add_sums(r);
  onnxport::reduce::add_extrema(r);
  onnxport::reduce::add_statistics(r);
  onnxport::reduce::add_norms(r);
  onnxport::reduce::add_cumulative(r);
  // Complex values: sums act on the real and imaginary parts alike.
  r.add_complex_componentwise({"aten::sum", "aten::mean", "aten::cumsum"});
}
