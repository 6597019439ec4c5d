#pragma once
// The ONNX graph a symbolic builds into. Implemented by the host (core); op packs only call it.
#include <string>
#include <vector>

#include "onnxport/attribute.h"
#include "onnxport/value.h"

namespace onnxport {

class Graph {
 public:
  virtual ~Graph();

  // g.op("Conv", {x, w, b}, {{"kernel_shape_i", {3, 3}}, {"group_i", 1}})
  // g.op("com.vendor::FancyOp", {x}, {{"alpha_f", 0.5}}, 2)   // custom domain, 2 outputs
  // A nullptr input is an omitted optional input. A constant Value used as an input is
  // materialized as an ONNX constant. Result types come from ONNX's per-node inference.
  Value* op(const std::string& name, const std::vector<Value*>& inputs, const Attrs& attrs = {});
  std::vector<Value*> op(const std::string& name, const std::vector<Value*>& inputs, const Attrs& attrs,
                         int num_outputs);

  // Constants (ONNX Constant nodes / initializers, with the payload visible to maybe_*()).
  Value* constant(const Tensor& t);
  Value* constant_int(int64_t v) { return constant(Tensor::scalar_int64(v)); }
  Value* constant_ints(const std::vector<int64_t>& v) { return constant(Tensor::ints(v)); }
  Value* constant_float(float v) { return constant(Tensor::scalar_float(v)); }
  Value* constant_scalar(DType dtype, double v) { return constant(Tensor::scalar_of(dtype, v)); }

  Value* none();                                  // a None value
  Value* list(const std::vector<Value*>& items);  // a TorchScript list/tuple of values

  virtual int opset() const = 0;      // target opset of the default domain
  virtual bool training() const = 0;  // export in training mode (Dropout, BatchNorm)

 protected:
  virtual std::vector<Value*> add_node(const std::string& name, const std::vector<Value*>& inputs, const Attrs& attrs,
                                       int num_outputs) = 0;
  virtual Value* add_constant(const Tensor& t) = 0;
  virtual Value* make_none() = 0;
  virtual Value* make_list(const std::vector<Value*>& items) = 0;
};

}  // namespace onnxport
