#include "1_base/onnx_release.h"

#include <onnx/defs/schema.h>

namespace onnxport::core::onnx_release {

int newest_opset() {
  static const int newest = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
  return newest;
}

std::string first_release_with_opset(int opset) {
  // ONNX 1.13 brought opset 18 and every release since has brought one more (1.17: opset 22).
  if (opset <= 17) return "1.12";
  return "1." + std::to_string(opset - 5);
}

}  // namespace onnxport::core::onnx_release
