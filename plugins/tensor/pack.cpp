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
  // Complex values: these act on the real and imaginary parts alike.
  r.add_complex_componentwise({"aten::view", "aten::reshape", "aten::reshape_as", "aten::view_as", "aten::flatten",
                               "aten::unflatten", "aten::squeeze", "aten::unsqueeze", "aten::transpose", "aten::t",
                               "aten::permute", "aten::movedim", "aten::select", "aten::slice", "aten::narrow",
                               "aten::index", "aten::index_select", "aten::gather", "aten::cat", "aten::stack",
                               "aten::expand", "aten::expand_as", "aten::repeat", "aten::flip", "aten::roll",
                               "aten::unbind", "aten::split", "aten::split_with_sizes", "aten::chunk",
                               "aten::diagonal", "aten::numel"});
}
