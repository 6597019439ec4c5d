// The public listing of the ops convert.cpp handles itself.
#include "onnxport/core_ops.h"

#include "3_export/3_convert/convert.h"

namespace onnxport {

std::vector<CoreOp> core_converted_ops() {
  std::vector<CoreOp> out;
  for (const auto& [op, since] : core::core_builtin_ops()) out.push_back({op, since});
  return out;
}

}  // namespace onnxport
