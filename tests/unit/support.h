#pragma once
// Test doubles for the SDK's host-side classes: Values with settable state and a Graph that
// records the nodes symbolics create.
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "onnxport/graph.h"
#include "onnxport/registry/registry.h"
#include "onnxport/value.h"

namespace onnxport::test {

// Value's constructor is protected (only hosts create Values); this one exposes its state.
class TestValue : public Value {
 public:
  TestValue& kind(Kind k) {
    kind_ = k;
    return *this;
  }
  TestValue& constant(Constant c) {
    constant_ = std::move(c);
    return *this;
  }
  TestValue& elements(std::vector<Value*> e) {
    kind_ = Kind::List;
    elements_ = std::move(e);
    return *this;
  }
  TestValue& type(TensorType t) {
    type_ = std::move(t);
    return *this;
  }
  TestValue& scalar(bool s) {
    scalar_ = s;
    return *this;
  }
  TestValue& name(std::string n) {
    name_ = std::move(n);
    return *this;
  }
};

// Owns the values of one test.
class ValuePool {
 public:
  TestValue* make() {
    values_.push_back(std::make_unique<TestValue>());
    return values_.back().get();
  }
  TestValue* constant(Value::Constant c) { return &make()->constant(std::move(c)); }
  TestValue* none() { return &make()->kind(Value::Kind::None); }
  TestValue* list(std::vector<Value*> items) { return &make()->elements(std::move(items)); }
  TestValue* tensor(DType dtype, std::vector<int64_t> dims, std::string name = "x") {
    std::vector<Dim> shape;
    for (int64_t d : dims) shape.push_back(Dim::fixed(d));
    return &make()->type(TensorType{dtype, std::move(shape)}).name(std::move(name));
  }

 private:
  std::vector<std::unique_ptr<TestValue>> values_;
};

struct RecordedNode {
  std::string name;
  std::vector<Value*> inputs;
  Attrs attrs;
};

// Records every node; each output is a fresh float tensor of unknown shape.
class RecordingGraph : public Graph {
 public:
  explicit RecordingGraph(int opset = 17) : opset_(opset) {}
  int opset() const override { return opset_; }
  bool training() const override { return false; }
  const std::vector<RecordedNode>& nodes() const { return nodes_; }

 protected:
  std::vector<Value*> add_node(const std::string& name, const std::vector<Value*>& inputs, const Attrs& attrs,
                               int num_outputs) override {
    nodes_.push_back(RecordedNode{name, inputs, attrs});
    std::vector<Value*> outs;
    for (int i = 0; i < num_outputs; ++i) {
      outs.push_back(&pool_.make()->type(TensorType{DType::Float, std::nullopt}).name(name));
    }
    return outs;
  }
  Value* add_constant(const Tensor& t) override { return pool_.constant(t); }
  Value* make_none() override { return pool_.none(); }
  Value* make_list(const std::vector<Value*>& items) override { return pool_.list(items); }

 private:
  int opset_;
  ValuePool pool_;
  std::vector<RecordedNode> nodes_;
};

// The attribute called `name` (with its suffix) on a recorded node; throws if it is absent.
inline const AttrValue& attr(const RecordedNode& node, const std::string& name) {
  for (const Attr& a : node.attrs) {
    if (a.name == name) return a.value;
  }
  throw std::out_of_range(node.name + " has no attribute " + name);
}

// The entry the registry dispatches (op, opset) to; fails the test if there is none.
inline const RegistryEntry& entry_for(const Registry& reg, const std::string& op, int opset) {
  const RegistryEntry* e = reg.lookup(op, opset);
  REQUIRE_MESSAGE(e != nullptr, op << " has no entry for opset " << opset);
  return *e;
}

}  // namespace onnxport::test
