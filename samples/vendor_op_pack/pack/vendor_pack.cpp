// The vendor's op pack: maps vendor::fancy to com.vendor::FancyOp (domain version 2).
// Built out of tree against the installed SDK only: no libtorch, no onnxport sources.
#include <onnxport/sdk.h>

namespace {
onnxport::Value* fancy(onnxport::Graph& g, const onnxport::TorchNode&, const onnxport::Args& a) {
  return g.op("com.vendor::FancyOp", {a.tensor(0)}, {{"alpha_f", a.f(1)}});
}
}  // namespace

ONNXPORT_OP_PACK(vendor, "2.0.0") {
  r.declare_domain("com.vendor", 2);
  r.add("vendor::fancy", 9, fancy);
}
