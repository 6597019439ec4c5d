// Numbers and tensors: TorchScript numbers are 0-d tensors during conversion, so the
// conversions between them are identities or Casts. Also aten::size/dim and dtype changes.
#include "onnxport/helpers.h"
#include "prim.h"

namespace onnxport::prim {
namespace {

using namespace helpers;

// aten::Int truncates like a C cast; ONNX Cast from float to int truncates too.
Value* to_int(Graph& g, const TorchNode&, const Args& a) {
  if (auto n = constant_number(a.at(0))) return g.constant_int(static_cast<int64_t>(*n));
  return cast(g, a.tensor(0), DType::Int64);
}

Value* to_float(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  return is_floating(dtype_of(x)) ? x : cast(g, x, DType::Float);
}

Value* to_bool(Graph& g, const TorchNode&, const Args& a) { return cast(g, a.tensor(0), DType::Bool); }

// aten::size(x) -> Shape; aten::size(x, dim) -> a 0-d int64. Static sizes are constants (as
// helpers::size makes a single one), so that what a script computes from them folds: torchaudio's
// compute_deltas reshapes to (1, -1, shape[-1]) and convolves with groups=shape[1], which ONNX's
// Conv needs as a number.
Value* size_of(Graph& g, const TorchNode&, const Args& a) {
  if (a.size() < 2) {
    if (auto shape = static_shape(a.tensor(0))) return g.constant_ints(*shape);
    return shape_of(g, a.tensor(0));
  }
  return size(g, a.tensor(0), a.i(1));
}

// math.ceil / math.floor of a TorchScript float: an int (aten::ceil.float(float a) -> int). The
// tensor mapping of aten::ceil keeps ONNX Ceil's float type, and such a float in an int list
// (Emformer's attention-mask column widths hold rc * ceil(utterance_length / segment_length))
// made ONNX reject the sequence the list became when indexed at run time.
Symbolic rounded_to_int(const std::string& onnx_op) {
  return [onnx_op](Graph& g, const TorchNode&, const Args& a) {
    return std::vector<Value*>{cast(g, g.op(onnx_op, {a.tensor(0)}), DType::Int64)};
  };
}

// A known rank is a constant, so that the script's branches on it fold. An unknown one (a value
// nested control flow made: PyTorch 2's multi_head_attention_forward asks it of the masks it
// merges) is Shape's length at run time.
Value* dim_of(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  if (auto rank = x->rank()) return g.constant_int(*rank);
  return g.op("Size", {shape_of(g, x)});
}

// aten::to has seven overloads; the dtype is the argument named "dtype", or the dtype of "other".
Value* to(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  std::optional<size_t> dtype_arg = n.input_index("dtype");
  std::optional<size_t> other_arg = n.input_index("other");
  if (!dtype_arg && !other_arg && n.input_names.empty()) {
    // No schema names: tell the overloads apart by arity (see aten::to's schemas).
    if (a.size() > 1 && a.at(1)->is_tensor() && !a.at(1)->is_constant())
      other_arg = 1;
    else if (a.size() == 6 || (a.size() == 5 && !a.at(1)->maybe_int() && !a.is_none(1)))
      dtype_arg = 2;
    else if (a.size() >= 4)
      dtype_arg = 1;
  }
  if (other_arg) return cast(g, x, dtype_of(a.tensor(*other_arg)));
  if (!dtype_arg || a.is_none(*dtype_arg)) return x;  // only device/layout/memory format change
  return cast(g, x, dtype_from_scalar_type(a.i(*dtype_arg)));
}

Value* type_as(Graph& g, const TorchNode&, const Args& a) { return cast(g, a.tensor(0), dtype_of(a.tensor(1))); }

}  // namespace

void add_scalars(Registrar& r) {
  for (const char* op : {"prim::NumToTensor", "aten::ScalarImplicit", "aten::detach", "aten::cpu", "aten::contiguous",
                         "aten::clone", "aten::alias", "aten::lift_fresh", "aten::lift_fresh_copy"})
    r.add(op, 1, identity());
  r.add("aten::Int", 1, to_int);
  r.add("aten::Float", 1, to_float);
  // A 0-d tensor passed where TorchScript wants an int/float (torch.zeros(d[0]), linspace(a, b, n)).
  r.add("aten::IntImplicit", 1, to_int);
  r.add("aten::FloatImplicit", 1, to_float);
  r.add("aten::Bool", 1, to_bool);
  r.add("aten::size", 1, size_of);
  r.add("aten::dim", 1, dim_of);
  r.add("aten::to", 1, to);
  r.add("aten::type_as", 1, type_as);
  r.add("aten::ceil.float", 9, rounded_to_int("Ceil"));
  r.add("aten::floor.float", 9, rounded_to_int("Floor"));
}

}  // namespace onnxport::prim
