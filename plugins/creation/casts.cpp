// Casts (_cast_*), dtype queries, conjugation/negation views that are identities for real
// tensors, and the prim ops that read a tensor's dtype/device/layout/data.
#include "creation.h"
#include "onnxport/helpers.h"
#include "onnxport/sdk.h"

namespace onnxport::creation {
namespace {

using namespace helpers;

// aten::_cast_<Type>(self, non_blocking=False).
Symbolic cast_to(DType to) {
  return [to](Graph& g, const TorchNode& n, const Args& a) -> std::vector<Value*> {
    check_supported(n, to);
    if (to == DType::BFloat16 && g.opset() < 13)
      throw ArgumentError(n.kind + ": Cast to bfloat16 needs opset 13 or later (export with --opset 13+)");
    return {cast(g, a.tensor(0), to)};
  };
}

// A real tensor: conj/resolve_conj/resolve_neg/lift/... return it unchanged. A complex one
// cannot come this far in ONNX, so say so instead of silently dropping the conjugation.
Value* real_identity(Graph&, const TorchNode& n, const Args& a) {
  Value* self = a.tensor(0);
  check_supported(n, self->dtype() == DType::Undefined ? DType::Float : self->dtype());
  return self;
}

DType known_dtype(const TorchNode& n, const Value* v) {
  const DType d = dtype_of(v);
  if (d == DType::Undefined)
    throw ArgumentError(n.kind + ": the dtype of " + v->describe() +
                        " is unknown at export time (give example inputs so that tracing records it)");
  return d;
}

Value* is_floating_point(Graph& g, const TorchNode& n, const Args& a) {
  return g.constant(Tensor::scalar_bool(is_floating(known_dtype(n, a.tensor(0)))));
}

Value* is_complex(Graph& g, const TorchNode& n, const Args& a) {
  const DType d = known_dtype(n, a.tensor(0));
  return g.constant(Tensor::scalar_bool(d == DType::Complex64 || d == DType::Complex128));
}

Value* is_signed(Graph& g, const TorchNode& n, const Args& a) {
  const DType d = known_dtype(n, a.tensor(0));
  const bool unsigned_type =
      d == DType::Bool || d == DType::UInt8 || d == DType::UInt16 || d == DType::UInt32 || d == DType::UInt64;
  return g.constant(Tensor::scalar_bool(!unsigned_type));
}

// is_pinned(self, device=None): an exported graph's tensors are never in page-locked host memory.
Value* is_pinned(Graph& g, const TorchNode&, const Args&) { return g.constant(Tensor::scalar_bool(false)); }

// aten::item(self): the one element as a TorchScript number (a 0-d tensor).
Value* item(Graph& g, const TorchNode&, const Args& a) { return to_scalar(g, a.tensor(0)); }

// prim::dtype(self): the torch ScalarType number, a compile-time constant.
Value* prim_dtype(Graph& g, const TorchNode& n, const Args& a) {
  return g.constant_int(scalar_type_of(known_dtype(n, a.tensor(0))));
}

// prim::device: devices mean nothing in ONNX; factories ignore their device argument.
Value* prim_device(Graph& g, const TorchNode&, const Args&) { return g.none(); }

// prim::layout: always torch.strided (0); sparse tensors cannot be exported.
Value* prim_layout(Graph& g, const TorchNode&, const Args&) { return g.constant_int(0); }

}  // namespace

void add_casts(Registrar& r) {
  const std::pair<const char*, DType> casts[] = {
      {"Byte", DType::UInt8},
      {"Char", DType::Int8},
      {"Short", DType::Int16},
      {"Int", DType::Int32},
      {"Long", DType::Int64},
      {"Half", DType::Float16},
      {"Float", DType::Float},
      {"Double", DType::Double},
      {"Bool", DType::Bool},
      {"BFloat16", DType::BFloat16},
      {"ComplexFloat", DType::Complex64},
      {"ComplexDouble", DType::Complex128},
  };
  for (const auto& [name, dtype] : casts) r.add(std::string("aten::_cast_") + name, 9, cast_to(dtype));
  for (const char* op : {"aten::lift", "aten::resolve_conj", "aten::resolve_neg", "aten::conj", "aten::_conj",
                         "aten::conj_physical", "aten::_conj_physical", "prim::data"})
    r.add(op, 9, real_identity);
  r.add("aten::is_floating_point", 9, is_floating_point);
  r.add("aten::is_complex", 9, is_complex);
  r.add("aten::is_signed", 9, is_signed);
  r.add("aten::is_pinned", 9, is_pinned);
  r.add("aten::item", 9, item);
  r.add("prim::dtype", 9, prim_dtype);
  r.add("prim::device", 9, prim_device);
  r.add("prim::layout", 9, prim_layout);
}

}  // namespace onnxport::creation
