// The vendor's op pack: maps vendor::fancy to com.vendor::FancyOp (domain version 2).
// Built out of tree against the installed SDK only: no libtorch, no onnxport sources.
#include <onnxport/sdk.h>

namespace {
onnxport::Value* fancy(onnxport::Graph& g, const onnxport::TorchNode&, const onnxport::Args& a) {
  return g.op("com.vendor::FancyOp", {a.tensor(0)}, {{"alpha_f", a.f(1)}});
}

// Optional: FancyOp's ONNX schema. With it, strict mode checks every FancyOp node (one float
// input, a float attribute "alpha"), ONNX's inference gives its output the input's type and
// shape, and the final checker covers it. Without it the node is written unchecked.
onnxport::CustomOpSchema fancy_schema() {
  using onnxport::AttrType;
  using onnxport::DType;
  return onnxport::CustomOpSchema("com.vendor", "FancyOp", 2)
      .doc("Y = X * sigmoid(alpha * X)")
      .input("X", "T")
      .output("Y", "T")
      .type_constraint("T", {DType::Float, DType::Double, DType::Float16})
      .attribute("alpha", AttrType::Float, 1.0)
      .output_like_input(0, 0);
}
}  // namespace

ONNXPORT_OP_PACK(vendor, "2.0.0") {
  r.declare_domain("com.vendor", 2);
  r.add_schema(fancy_schema());
  r.add("vendor::fancy", 9, fancy);
}
