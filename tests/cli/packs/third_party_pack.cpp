// A third-party op pack built from the SDK headers alone (no torch include): it overrides
// aten::relu with Clip(min=0), maps aten::lgamma (which ONNX lacks) into a custom domain, and
// overrides aten::abs with control flow built through the SDK's Subgraph attributes.
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

// abs(x) as If(min(x) >= 0, x, Abs(x)): both branches are sub-graphs capturing x.
onnxport::Value* abs_with_branch(onnxport::Graph& g, const onnxport::TorchNode&, const onnxport::Args& a) {
  using namespace onnxport;
  Value* x = a.tensor(0);
  Value* min = g.op("ReduceMin", {x}, {{"keepdims_i", 0}});
  Value* non_negative = g.op("Not", {g.op("Less", {min, g.constant_scalar(x->dtype(), 0.0)})});
  Subgraph keep{{},
                [x](Graph& sub, const std::vector<Value*>&) { return std::vector<Value*>{sub.op("Identity", {x})}; }};
  Subgraph flip{{}, [x](Graph& sub, const std::vector<Value*>&) { return std::vector<Value*>{sub.op("Abs", {x})}; }};
  return g.op("If", {non_negative}, {{"then_branch_g", keep}, {"else_branch_g", flip}});
}

// LogGamma's schema, typed by an inference callback: the output is typed like the input.
onnxport::CustomOpSchema log_gamma_schema() {
  using namespace onnxport;
  return CustomOpSchema("com.example", "LogGamma", 3)
      .input("X", "T")
      .output("Y", "T")
      .type_constraint("T", {DType::Float, DType::Double})
      .attribute("approximation", AttrType::String, "lanczos")
      .infer([](const SchemaInferenceInput& in) {
        const ResolvedAttr* approximation = in.attribute("approximation");
        if (approximation && approximation->value.as_string() != "lanczos")
          throw ArgumentError("LogGamma: unknown approximation '" + approximation->value.as_string() + "'");
        return std::vector<TensorType>{in.inputs.at(0)};
      });
}
}  // namespace

ONNXPORT_OP_PACK(THIRD_PARTY_PACK_ID, "0.1.0") {
  r.add_override("aten::relu", 9, relu_as_clip);
  r.add("aten::lgamma", 9, lgamma_custom);
  r.add_override("aten::abs", 9, abs_with_branch);
  r.declare_domain("com.example", 3);
  r.add_schema(log_gamma_schema());
}
