// Tensor factories: zeros/ones/full/empty from a size list, from another tensor (_like) or with
// another tensor's dtype (new_), in-place fills, eye, one_hot and tensors built from numbers.
// Layout, device, pin_memory, memory_format and requires_grad have no meaning in ONNX and are
// ignored. empty* gives zeros: its contents are unspecified in PyTorch.
#include "creation.h"
#include "onnxport/helpers.h"
#include "onnxport/sdk.h"

namespace onnxport::creation {
namespace {

using namespace helpers;

// The dtype PyTorch infers for a fill value when no dtype is given (full(size, 2) is int64).
DType dtype_of_number(const Value* v) {
  const DType d = dtype_of(v);
  if (d == DType::Bool || is_integral(d)) return d == DType::Bool ? DType::Bool : DType::Int64;
  return DType::Float;
}

// aten::zeros/ones/empty(size, *, dtype, layout, device, pin_memory[, memory_format]).
Symbolic sized(double value) {
  return [value](Graph& g, const TorchNode& n, const Args& a) -> std::vector<Value*> {
    const DType dtype = result_dtype(n, a, DType::Float, 1);
    return {filled(g, int_list(g, a.at(0)), value, dtype)};
  };
}

// aten::zeros_like/ones_like/empty_like(self, *, dtype, layout, device, pin_memory, memory_format).
Symbolic like(double value) {
  return [value](Graph& g, const TorchNode& n, const Args& a) -> std::vector<Value*> {
    Value* self = a.tensor(0);
    const DType dtype = result_dtype(n, a, dtype_of(self), 1);
    return {filled(g, shape_of(g, self), value, dtype)};
  };
}

// aten::new_zeros/new_ones/new_empty(self, size, *, dtype, ...): the dtype defaults to self's.
Symbolic new_sized(double value) {
  return [value](Graph& g, const TorchNode& n, const Args& a) -> std::vector<Value*> {
    const DType dtype = result_dtype(n, a, dtype_of(a.tensor(0)), 2);
    return {filled(g, int_list(g, a.at(1)), value, dtype)};
  };
}

// aten::full(size, fill_value, *, dtype, ...).
Value* full(Graph& g, const TorchNode& n, const Args& a) {
  const DType dtype = result_dtype(n, a, dtype_of_number(a.at(1)), 2);
  return filled(g, int_list(g, a.at(0)), a.at(1), dtype);
}

// aten::full_like(self, fill_value, *, dtype, ...).
Value* full_like(Graph& g, const TorchNode& n, const Args& a) {
  Value* self = a.tensor(0);
  const DType dtype = result_dtype(n, a, dtype_of(self), 2);
  return filled(g, shape_of(g, self), a.at(1), dtype);
}

// aten::new_full(self, size, fill_value, *, dtype, ...).
Value* new_full(Graph& g, const TorchNode& n, const Args& a) {
  const DType dtype = result_dtype(n, a, dtype_of(a.tensor(0)), 3);
  return filled(g, int_list(g, a.at(1)), a.at(2), dtype);
}

// aten::empty_strided(size, stride, *, dtype, ...) / new_empty_strided(self, size, stride, ...):
// ONNX tensors have no strides, so these are zeros of the given size.
Value* empty_strided(Graph& g, const TorchNode& n, const Args& a) {
  const DType dtype = result_dtype(n, a, DType::Float, 2);
  return filled(g, int_list(g, a.at(0)), 0.0, dtype);
}

Value* new_empty_strided(Graph& g, const TorchNode& n, const Args& a) {
  const DType dtype = result_dtype(n, a, dtype_of(a.tensor(0)), 3);
  return filled(g, int_list(g, a.at(1)), 0.0, dtype);
}

// aten::fill(self, value) and fill_: self's shape and dtype, every element `value` (a number or
// a 0-d tensor).
Value* fill(Graph& g, const TorchNode& n, const Args& a) {
  Value* self = a.tensor(0);
  const DType dtype = dtype_of(self);
  check_supported(n, dtype);
  return filled(g, shape_of(g, self), a.at(1), dtype);
}

Value* zero(Graph& g, const TorchNode& n, const Args& a) {
  Value* self = a.tensor(0);
  check_supported(n, dtype_of(self));
  return filled(g, shape_of(g, self), 0.0, dtype_of(self));
}

// aten::eye(n, *, dtype, ...) and eye.m(n, m, *, dtype, ...): EyeLike over zeros of that shape.
// EyeLike is made in float or int64 (types every runtime implements), then cast.
Value* eye(Graph& g, const TorchNode& n, const Args& a) {
  const bool has_m = arg_index(n, "m", a.size() == 6 ? std::optional<size_t>(1) : std::nullopt).has_value();
  const DType dtype = result_dtype(n, a, DType::Float, has_m ? 2 : 1);
  Value* rows = a.at(0);
  Value* shape = int_list(g, g.list({rows, has_m ? a.at(1) : rows}));
  const DType made = is_floating(dtype) ? DType::Float : DType::Int64;
  Value* eye = g.op("EyeLike", {filled(g, shape, 0.0, made)});
  return cast(g, eye, dtype);
}

// aten::one_hot(self, num_classes=-1): int64 output with a new last dim; -1 means max(self)+1.
Value* one_hot(Graph& g, const TorchNode&, const Args& a) {
  Value* self = cast(g, a.tensor(0), DType::Int64);
  const bool run_time = !a.is_none(1) && !a.at(1)->maybe_int();  // a number computed from tensors
  const int64_t num_classes = a.is_none(1) ? -1 : run_time ? 0 : a.i(1);
  Value* depth = run_time             ? cast(g, a.tensor(1), DType::Int64)
                 : num_classes >= 0 ? g.constant_int(num_classes)
                                    : g.op("Add", {reduce(g, "ReduceMax", self, {}, false), g.constant_int(1)});
  return g.op("OneHot", {self, depth, g.constant_ints({0, 1})}, {{"axis_i", -1}});
}

// aten::scalar_tensor(s, *, dtype, ...): a 0-d tensor holding a number.
Value* scalar_tensor(Graph& g, const TorchNode& n, const Args& a) {
  const DType dtype = result_dtype(n, a, DType::Float, 1);
  return cast(g, to_scalar(g, a.tensor(0)), dtype);
}

// Nested TorchScript lists of numbers -> a tensor of `dtype` (each level stacks its elements).
Value* stack_numbers(Graph& g, const TorchNode& n, Value* data, DType dtype) {
  if (!data->is_list()) {
    if (!data->is_tensor())
      throw ArgumentError(n.kind + ": a data element is " + data->describe() + ", expected a number");
    // A constant list of numbers (TorchScript's float[] / int[] constant) is a whole row; a
    // number held in a 1-element tensor (float(x) of an x of shape [1]) is not.
    const auto& payload = data->constant();
    if (std::holds_alternative<std::vector<double>>(payload) || std::holds_alternative<std::vector<int64_t>>(payload))
      return cast(g, data, dtype);
    return cast(g, to_scalar(g, data), dtype);
  }
  const auto& items = data->elements();
  if (items.empty()) {
    if (dtype == DType::BFloat16) throw ArgumentError(n.kind + ": an empty bfloat16 tensor cannot be a constant");
    return g.constant(Tensor(dtype, {0}, {}));
  }
  std::vector<Value*> rows;
  for (Value* item : items) rows.push_back(unsqueeze(g, stack_numbers(g, n, item, dtype), {0}));
  return rows.size() == 1 ? rows[0] : concat(g, rows, 0);
}

// The dtype torch.tensor infers from its data: the first leaf's number kind.
DType dtype_of_data(const Value* data) {
  while (data->is_list() && !data->elements().empty()) data = data->elements().front();
  return data->is_list() ? DType::Float : dtype_of_number(data);
}

// aten::tensor(data, *, dtype, device, requires_grad) for numbers and (nested) lists of numbers;
// aten::as_tensor(data, *, dtype, device) also for a tensor, which it casts.
Value* tensor(Graph& g, const TorchNode& n, const Args& a) {
  Value* data = a.at(0);
  if (data->is_sequence()) {  // a list of numbers built at run time (in a loop)
    const DType element = dtype_of(data);
    const DType dtype = result_dtype(n, a, is_floating(element) ? DType::Float : element, 1);
    return cast(g, g.op("ConcatFromSequence", {data}, {{"axis_i", 0}, {"new_axis_i", 1}}), dtype);
  }
  const bool is_tensor_data = data->is_tensor() && !data->is_scalar() && !constant_number(data);
  const DType fallback = is_tensor_data ? dtype_of(data) : dtype_of_data(data);
  const DType dtype = result_dtype(n, a, fallback, 1);
  if (is_tensor_data) return cast(g, data, dtype);
  return stack_numbers(g, n, data, dtype);
}

}  // namespace

void add_factories(Registrar& r) {
  r.add("aten::zeros", 8, sized(0.0));
  r.add("aten::ones", 8, sized(1.0));
  r.add("aten::empty", 8, sized(0.0));
  r.add("aten::full", 8, full);
  r.add("aten::zeros_like", 8, like(0.0));
  r.add("aten::ones_like", 8, like(1.0));
  r.add("aten::empty_like", 8, like(0.0));
  r.add("aten::full_like", 8, full_like);
  r.add("aten::new_zeros", 8, new_sized(0.0));
  r.add("aten::new_ones", 8, new_sized(1.0));
  r.add("aten::new_empty", 8, new_sized(0.0));
  r.add("aten::new_full", 8, new_full);
  r.add("aten::empty_strided", 8, empty_strided);
  r.add("aten::new_empty_strided", 8, new_empty_strided);
  helpers::add_with_inplace(r, "aten::fill", 8, fill);
  r.add("aten::zero_", 8, zero);
  r.add("aten::eye", 9, eye);
  r.add("aten::one_hot", 9, one_hot);
  r.add("aten::scalar_tensor", 8, scalar_tensor);
  r.add("aten::tensor", 8, tensor);
  r.add("aten::as_tensor", 8, tensor);
}

}  // namespace onnxport::creation
