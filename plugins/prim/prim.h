#pragma once
// The prim pack: TorchScript's list/tuple plumbing and number <-> tensor conversions.
#include "onnxport/registrar.h"

namespace onnxport::prim {

void add_lists(Registrar& r);       // prim::ListConstruct/ListUnpack/TupleConstruct/TupleUnpack, ...
void add_scalars(Registrar& r);     // prim::NumToTensor, aten::Int/Float, aten::size, aten::to, ...
void add_script_ops(Registrar& r);  // list mutation, range arithmetic, None tests (scripted graphs)

}  // namespace onnxport::prim
