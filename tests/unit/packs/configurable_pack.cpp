// One small op pack, built in several variants by tests/unit/CMakeLists.txt through compile
// definitions:
//   UNIT_PACK_ID        pack id (an identifier)
//   UNIT_PACK_OP        torch op registered for opset 9 (a string literal)
//   UNIT_PACK_OVERRIDE  1: register it with add_override
//   UNIT_PACK_THROWS    1: the register function throws instead of registering
// plus, for the broken variants, ONNXPORT_SDK_API_VERSION / ONNXPORT_ABI_TAG overrides.
// The symbolic emits Identity tagged with the pack id, so tests can see which pack won.
#include <stdexcept>

#include "onnxport/sdk.h"

#ifndef UNIT_PACK_OVERRIDE
#define UNIT_PACK_OVERRIDE 0
#endif
#ifndef UNIT_PACK_THROWS
#define UNIT_PACK_THROWS 0
#endif

// ONNXPORT_OP_PACK stringizes its id argument; this indirection expands UNIT_PACK_ID first.
#define UNIT_OP_PACK(id, version) ONNXPORT_OP_PACK(id, version)
#define UNIT_STR_(x) #x
#define UNIT_STR(x) UNIT_STR_(x)

using namespace onnxport;

namespace {

Value* tagged_identity(Graph& g, const TorchNode&, const Args& a) {
  return g.op("Identity", {a.tensor(0)}, {{"pack_s", UNIT_STR(UNIT_PACK_ID)}});
}

}  // namespace

UNIT_OP_PACK(UNIT_PACK_ID, "0.1.0") {
  if (UNIT_PACK_THROWS) {
    throw std::runtime_error("pack " UNIT_STR(UNIT_PACK_ID) " refuses to register");
  }
  if (UNIT_PACK_OVERRIDE) {
    r.add_override(UNIT_PACK_OP, 9, tagged_identity);
  } else {
    r.add(UNIT_PACK_OP, 9, tagged_identity);
  }
}
