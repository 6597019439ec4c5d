#pragma once
// The TorchScript ops the core converts itself, without an op pack: control flow, constants
// and attribute reads.
#include <string>
#include <vector>

namespace onnxport {

struct CoreOp {
  std::string torch_op;  // "prim::If"
  int since_opset = 0;   // the lowest opset the core converts it at
};

std::vector<CoreOp> core_converted_ops();

}  // namespace onnxport
