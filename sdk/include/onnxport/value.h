#pragma once
// A value flowing through the conversion: a tensor (ONNX value), None, a TorchScript list known
// element by element, an ONNX sequence (a list whose length is only known at run time), or an
// ONNX optional (a tensor or nothing, known at run time).
// Symbolics only read Values and pass them to g.op; the host creates and names them.
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "onnxport/tensor.h"
#include "onnxport/types.h"

namespace onnxport {

class Value {
 public:
  enum class Kind { Tensor, None, List, Sequence, Optional };
  // Compile-time payload of a TorchScript constant or an ONNX Constant.
  using Constant = std::variant<std::monostate, int64_t, double, bool, std::string, std::vector<int64_t>,
                                std::vector<double>, onnxport::Tensor>;

  virtual ~Value();

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_list() const { return kind_ == Kind::List; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  // An ONNX sequence value (lists built in loops); type() is the element type.
  bool is_sequence() const { return kind_ == Kind::Sequence; }
  // An ONNX optional value (type() is the element type): a maybe-None value the core returns
  // from the graph (opset 16 and later). Symbolics never receive one.
  bool is_optional() const { return kind_ == Kind::Optional; }
  // A TorchScript number (int/float/bool) carried as a 0-d tensor of type().dtype.
  bool is_scalar() const { return scalar_; }
  // A complex tensor carried as a real one with a trailing dimension of 2 (real, imaginary), ONNX's
  // DFT layout: type() is that real tensor's. Only symbolics registered with
  // Registrar::add_complex receive such values.
  bool is_complex() const { return complex_; }

  bool is_constant() const { return !std::holds_alternative<std::monostate>(constant_); }
  const Constant& constant() const { return constant_; }

  // _maybe_get_const analogues: the payload if this value is a compile-time constant of that
  // shape (a 1-element tensor counts as a scalar, a 1-d tensor or a list of constants as a
  // list), nullopt otherwise. They never throw.
  std::optional<int64_t> maybe_int() const;
  std::optional<double> maybe_float() const;  // ints convert
  std::optional<bool> maybe_bool() const;
  std::optional<std::string> maybe_string() const;
  std::optional<std::vector<int64_t>> maybe_ints() const;
  std::optional<std::vector<double>> maybe_floats() const;
  const onnxport::Tensor* maybe_tensor() const;  // constant tensor payload, or nullptr

  const std::vector<Value*>& elements() const { return elements_; }  // List kind only

  // dtype + shape; for g.op results from ONNX's per-node inference, for graph inputs from
  // the example inputs, for other torch values from the traced types.
  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  std::optional<int64_t> rank() const { return type_.rank(); }

  // The ONNX value name once the value exists in the ONNX graph ("" for an unmaterialized
  // constant, None or list).
  const std::string& name() const { return name_; }
  std::string describe() const;  // for messages: "constant int 3", "tensor float32[1,3,?,?]"

 protected:
  Value() = default;
  Kind kind_ = Kind::Tensor;
  bool scalar_ = false;
  Constant constant_;
  std::vector<Value*> elements_;
  TensorType type_;
  std::string name_;
  bool complex_ = false;  // last: packs built before it keep reading the fields above
};

}  // namespace onnxport
