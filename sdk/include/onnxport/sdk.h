#pragma once
// Everything an op pack needs.
#include "onnxport/args.h"
#include "onnxport/attribute.h"
#include "onnxport/dtype.h"
#include "onnxport/errors.h"
#include "onnxport/graph.h"
#include "onnxport/op_evaluator.h"
#include "onnxport/op_pack.h"
#include "onnxport/registrar.h"
#include "onnxport/tensor.h"
#include "onnxport/torch_node.h"
#include "onnxport/types.h"
#include "onnxport/value.h"
