#pragma once
// The tensor pack: shape manipulation, joining/splitting and indexing.
#include "onnxport/registrar.h"

namespace onnxport::tensor {

void add_shape(Registrar& r);     // view/reshape/flatten, (un)squeeze, transpose/permute/t, expand, repeat, numel
void add_join(Registrar& r);      // cat/stack, chunk/split/unbind
void add_indexing(Registrar& r);  // slice/select/narrow/index_select

}  // namespace onnxport::tensor
