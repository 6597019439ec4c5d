// An op pack whose symbolics misbehave in every way the host must survive. Each overrides one
// built-in mapping so that a tiny model reaches it.
#include <onnxport/sdk.h>

#include <stdexcept>

namespace {
using onnxport::Args;
using onnxport::Graph;
using onnxport::TorchNode;
using onnxport::Value;

Value* throws(Graph&, const TorchNode&, const Args&) { throw std::logic_error("tanh kernel table is empty"); }

std::vector<Value*> too_many_outputs(Graph& g, const TorchNode&, const Args& a) {
  Value* y = g.op("Sigmoid", {a.tensor(0)});
  return {y, y};
}

Value* undeclared_domain(Graph& g, const TorchNode&, const Args& a) {
  return g.op("com.undeclared::Neg", {a.tensor(0)});
}

Value* schema_violation(Graph& g, const TorchNode&, const Args& a) {
  // Exp has no attributes: strict mode must reject "alpha".
  return g.op("Exp", {a.tensor(0)}, {{"alpha_f", 1.0}});
}

Value* bad_suffix(Graph& g, const TorchNode&, const Args& a) {
  return g.op("LeakyRelu", {a.tensor(0)}, {{"alpha_i", 0.5}});
}

Value* violates_own_schema(Graph& g, const TorchNode&, const Args& a) {
  // The pack's own schema for com.misbehaving::Amplify has "factor", not "gain".
  return g.op("com.misbehaving::Amplify", {a.tensor(0)}, {{"gain_f", 2.0}});
}
}  // namespace

ONNXPORT_OP_PACK(misbehaving, "0.0.1") {
  r.add_override("aten::tanh", 9, throws);
  r.add_override("aten::sigmoid", 9, too_many_outputs);
  r.add_override("aten::neg", 9, undeclared_domain);
  r.add_override("aten::exp", 9, schema_violation);
  r.add_override("aten::leaky_relu", 9, bad_suffix);
  r.declare_domain("com.misbehaving", 1);
  r.add_schema(onnxport::CustomOpSchema("com.misbehaving", "Amplify", 1)
                   .input("X", "T")
                   .output("Y", "T")
                   .type_constraint("T", {onnxport::DType::Float})
                   .attribute("factor", onnxport::AttrType::Float, 1.0)
                   .output_like_input(0, 0));
  r.add_override("aten::abs", 9, violates_own_schema);
}
