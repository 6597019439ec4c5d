#include "onnxport/op_pack.h"
#include "tensor_ops.h"

ONNXPORT_OP_PACK(tensor, "1.0.0") {
  onnxport::tensor::add_shape(r);
  onnxport::tensor::add_join(r);
  onnxport::tensor::add_indexing(r);
  onnxport::tensor::add_advanced_index(r);
  onnxport::tensor::add_gather_scatter(r);
  onnxport::tensor::add_sort(r);
  onnxport::tensor::add_triangular(r);
  onnxport::tensor::add_layout(r);
  onnxport::tensor::add_view_scatter(r);
}
