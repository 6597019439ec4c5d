// The vendor's op pack: maps vendor::fancy to com.vendor::FancyOp (domain version 2).
// Built out of tree against the installed SDK only: no libtorch, no onnxport sources.
#include <onnxport/sdk.h>

#include <cmath>

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

// Optional: how to compute FancyOp, so that `onnxport run` and `onnxport verify` can run models
// that contain it. Inputs arrive as plain buffers (no torch types); this one computes float32.
std::vector<onnxport::Tensor> evaluate_fancy(const onnxport::EvalNode& node,
                                             const std::vector<onnxport::Tensor>& inputs) {
  const onnxport::Tensor& x = inputs.at(0);
  if (x.dtype() != onnxport::DType::Float) throw onnxport::ArgumentError("FancyOp is evaluated for float32 only");
  const float alpha = static_cast<float>(node.attr_float("alpha").value_or(1.0));
  std::vector<uint8_t> bytes(x.nbytes());
  const auto* in = static_cast<const float*>(x.data());
  auto* out = reinterpret_cast<float*>(bytes.data());
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] / (1.0f + std::exp(-alpha * in[i]));
  return {onnxport::Tensor(x.dtype(), x.shape(), std::move(bytes))};
}
}  // namespace

ONNXPORT_OP_PACK(vendor, "2.0.0") {
  r.declare_domain("com.vendor", 2);
  r.add_schema(fancy_schema());
  r.add("vendor::fancy", 9, fancy);
  r.add_evaluator("com.vendor", "FancyOp", evaluate_fancy);
}
