// A well-formed op pack using only SDK headers: two opset versions of one op and a custom
// domain. Each symbolic tags its node with the since-opset it was registered for, so tests
// can see which version the registry dispatched to.
#include "onnxport/sdk.h"

using namespace onnxport;

namespace {

Value* relu_9(Graph& g, const TorchNode&, const Args& a) { return g.op("Relu", {a.tensor(0)}, {{"since_i", 9}}); }

Value* relu_13(Graph& g, const TorchNode&, const Args& a) { return g.op("Relu", {a.tensor(0)}, {{"since_i", 13}}); }

std::vector<Value*> fancy(Graph& g, const TorchNode&, const Args& a) {
  return g.op("com.test::Fancy", {a.tensor(0)}, {{"alpha_f", a.f(1)}}, 2);
}

}  // namespace

ONNXPORT_OP_PACK(unit_good, "1.2.3") {
  r.add("test::relu", 9, relu_9);
  r.add("test::relu", 13, relu_13);
  r.add("test::fancy", 1, fancy);
  r.declare_domain("com.test", 2);
}
