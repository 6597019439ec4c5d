#include "onnxport/op_pack.h"

namespace onnxport {

int host_sdk_api_version() { return ONNXPORT_SDK_API_VERSION; }
const char* host_abi_tag() { return ONNXPORT_ABI_TAG; }

}  // namespace onnxport
