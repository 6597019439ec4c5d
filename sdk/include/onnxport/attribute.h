#pragma once
// Node attributes, torch.onnx style: the name carries the ONNX type as a suffix
// ("kernel_shape_i", "alpha_f", "mode_s", "value_t", "body_g") and the value's shape
// (scalar or list) picks the single or list form.
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "onnxport/tensor.h"
#include "onnxport/types.h"

namespace onnxport {

class Graph;
class Value;

// A sub-graph attribute ("then_branch_g", "body_g"): the host creates one graph input per
// entry of `inputs`, calls `build` with them while every g.op goes into the sub-graph, and
// uses what `build` returns as the sub-graph's outputs. Values of the enclosing graph may be
// used inside (ONNX outer-scope capture).
struct Subgraph {
  struct Input {
    TensorType type;
    bool sequence = false;  // an ONNX sequence of `type` elements
  };
  std::vector<Input> inputs;
  std::function<std::vector<Value*>(Graph& g, const std::vector<Value*>& inputs)> build;
};

class AttrValue {
 public:
  enum class Kind { Int, Ints, Float, Floats, String, Strings, Tensor, Tensors, Graph };

  AttrValue(int v) : v_(int64_t{v}) {}
  AttrValue(long v) : v_(int64_t{v}) {}
  AttrValue(long long v) : v_(static_cast<int64_t>(v)) {}
  AttrValue(unsigned long v) : v_(static_cast<int64_t>(v)) {}
  AttrValue(bool v) : v_(int64_t{v ? 1 : 0}) {}
  AttrValue(double v) : v_(v) {}
  AttrValue(float v) : v_(double{v}) {}
  AttrValue(const char* v) : v_(std::string(v)) {}
  AttrValue(std::string v) : v_(std::move(v)) {}
  AttrValue(std::initializer_list<int> v) : v_(std::vector<int64_t>(v.begin(), v.end())) {}
  AttrValue(std::initializer_list<int64_t> v) : v_(std::vector<int64_t>(v)) {}
  AttrValue(std::initializer_list<double> v) : v_(std::vector<double>(v)) {}
  AttrValue(std::vector<int64_t> v) : v_(std::move(v)) {}
  AttrValue(std::vector<double> v) : v_(std::move(v)) {}
  AttrValue(std::vector<std::string> v) : v_(std::move(v)) {}
  AttrValue(onnxport::Tensor v) : v_(std::move(v)) {}
  AttrValue(std::vector<onnxport::Tensor> v) : v_(std::move(v)) {}
  AttrValue(Subgraph v) : v_(std::make_shared<const Subgraph>(std::move(v))) {}

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  const char* kind_name() const;  // "int", "ints", "float", ...
  int64_t as_int() const { return std::get<int64_t>(v_); }
  const std::vector<int64_t>& as_ints() const { return std::get<std::vector<int64_t>>(v_); }
  double as_float() const { return std::get<double>(v_); }
  const std::vector<double>& as_floats() const { return std::get<std::vector<double>>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const std::vector<std::string>& as_strings() const { return std::get<std::vector<std::string>>(v_); }
  const onnxport::Tensor& as_tensor() const { return std::get<onnxport::Tensor>(v_); }
  const std::vector<onnxport::Tensor>& as_tensors() const { return std::get<std::vector<onnxport::Tensor>>(v_); }
  const Subgraph& as_graph() const { return *std::get<std::shared_ptr<const Subgraph>>(v_); }

 private:
  // Order matches Kind.
  std::variant<int64_t, std::vector<int64_t>, double, std::vector<double>, std::string, std::vector<std::string>,
               onnxport::Tensor, std::vector<onnxport::Tensor>, std::shared_ptr<const Subgraph>>
      v_;
};

struct Attr {
  std::string name;  // with suffix: "kernel_shape_i"
  AttrValue value;
  Attr(std::string n, AttrValue v) : name(std::move(n)), value(std::move(v)) {}
};
using Attrs = std::vector<Attr>;

// The ONNX attribute an Attr becomes, after suffix checking.
struct ResolvedAttr {
  enum class Type { Int, Ints, Float, Floats, String, Strings, Tensor, Tensors, Graph };
  std::string name;  // suffix stripped: "kernel_shape"
  Type type;
  AttrValue value;  // ints widened to floats where the suffix asks for floats
};

// Checks the suffix against the value and strips it. Throws AttributeError naming the
// attribute, the suffix and the value kind on a mismatch (e.g. "alpha_i" with 0.5) or an
// unknown suffix. "_g" takes a Subgraph.
ResolvedAttr resolve_attr(const Attr& a);

}  // namespace onnxport
