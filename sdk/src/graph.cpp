#include "onnxport/graph.h"

#include "onnxport/errors.h"

namespace onnxport {

Graph::~Graph() = default;

Value* Graph::op(const std::string& name, const std::vector<Value*>& inputs, const Attrs& attrs) {
  return add_node(name, inputs, attrs, 1).at(0);
}

std::vector<Value*> Graph::op(const std::string& name, const std::vector<Value*>& inputs, const Attrs& attrs,
                              int num_outputs) {
  if (num_outputs < 1) throw ArgumentError("g.op(\"" + name + "\"): num_outputs must be >= 1");
  return add_node(name, inputs, attrs, num_outputs);
}

Value* Graph::constant(const Tensor& t) { return add_constant(t); }
Value* Graph::none() { return make_none(); }
Value* Graph::list(const std::vector<Value*>& items) { return make_list(items); }

}  // namespace onnxport
