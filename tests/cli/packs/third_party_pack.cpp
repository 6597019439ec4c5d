// A third-party op pack built from the SDK headers alone (no torch include): it overrides
// aten::relu with Clip(min=0) and maps aten::lgamma (which ONNX lacks) into a custom domain.
#include <onnxport/sdk.h>

#ifndef THIRD_PARTY_PACK_ID
#define THIRD_PARTY_PACK_ID third_party
#endif

namespace {
onnxport::Value* relu_as_clip(onnxport::Graph& g, const onnxport::TorchNode&, const onnxport::Args& a) {
  onnxport::Value* x = a.tensor(0);
  if (g.opset() < 11) return g.op("Clip", {x}, {{"min_f", 0.0}});  // bounds were attributes before 11
  return g.op("Clip", {x, g.constant_scalar(x->dtype(), 0.0)});
}

onnxport::Value* lgamma_custom(onnxport::Graph& g, const onnxport::TorchNode&, const onnxport::Args& a) {
  return g.op("com.example::LogGamma", {a.tensor(0)}, {{"approximation_s", "lanczos"}});
}
}  // namespace

ONNXPORT_OP_PACK(THIRD_PARTY_PACK_ID, "0.1.0") {
  r.add_override("aten::relu", 9, relu_as_clip);
  r.add("aten::lgamma", 9, lgamma_custom);
  r.declare_domain("com.example", 3);
}
