// Arithmetic on complex values carried as real pairs [..., 2]: each op written with the real
// and imaginary parts, the way spectral models compose them (magnitude, phase, polar form).
#include <cmath>

#include "onnxport/helpers.h"
#include "spectral.h"

namespace onnxport::spectral {
namespace {

using namespace helpers;

constexpr double kPi = 3.14159265358979323846;

// An operand as real and imaginary parts; a real operand has no imaginary part (im == nullptr).
struct Parts {
  Value* re = nullptr;
  Value* im = nullptr;
};

// The real dtype the node computes in: that of its complex operands.
DType pair_dtype(const std::vector<Value*>& operands) {
  for (const Value* v : operands)
    if (v->is_complex()) return v->dtype();
  return DType::Float;
}

Parts parts_of(Graph& g, Value* v, DType dtype) {
  if (v->is_complex()) {
    auto [re, im] = complex_parts(g, v);
    return {re, im};
  }
  if (auto number = constant_number(v); number && v->is_constant() && v->rank().value_or(0) == 0)
    return {g.constant_scalar(dtype, *number), nullptr};
  return {v->dtype() == dtype ? v : cast(g, v, dtype), nullptr};
}

Parts complex_arg(Graph& g, const TorchNode& n, const Args& a, size_t i) {
  Value* z = a.tensor(i);
  if (!z->is_complex()) throw ArgumentError(n.kind + ": expected a complex tensor, got " + z->describe());
  return parts_of(g, z, z->dtype());
}

Value* add(Graph& g, Value* a, Value* b) { return g.op("Add", {a, b}); }
Value* sub(Graph& g, Value* a, Value* b) { return g.op("Sub", {a, b}); }
Value* mul(Graph& g, Value* a, Value* b) { return g.op("Mul", {a, b}); }
Value* div(Graph& g, Value* a, Value* b) { return g.op("Div", {a, b}); }
Value* neg(Graph& g, Value* a) { return g.op("Neg", {a}); }

// re and im broadcast against each other, then joined.
Value* join(Graph& g, Value* re, Value* im) {
  re = g.op("Expand", {re, shape_of(g, im)});
  im = g.op("Expand", {im, shape_of(g, re)});
  return complex_from_parts(g, re, im);
}

Value* magnitude(Graph& g, const Parts& z) {
  return g.op("Sqrt", {add(g, mul(g, z.re, z.re), mul(g, z.im, z.im))});
}

// atan2(im, re) with torch's values on the axes: atan(im/re) moved to the right quadrant; 0 at 0.
Value* phase(Graph& g, const Parts& z) {
  Value* zero = scalar_like(g, 0.0, z.re);
  Value* base = g.op("Atan", {div(g, z.im, z.re)});  // re == 0 gives atan(+-inf) = +-pi/2
  Value* turn = g.op("Where", {g.op("Less", {z.im, zero}), scalar_like(g, -kPi, z.re), scalar_like(g, kPi, z.re)});
  Value* angle = add(g, base, g.op("Where", {g.op("Less", {z.re, zero}), turn, zero}));
  // Less/Greater take floats from opset 9, Equal only from 11.
  auto nonzero = [&](Value* v) { return g.op("Or", {g.op("Less", {v, zero}), g.op("Greater", {v, zero})}); };
  Value* origin = g.op("Not", {g.op("Or", {nonzero(z.re), nonzero(z.im)})});
  return g.op("Where", {origin, zero, angle});
}

Value* from_polar(Graph& g, Value* radius, Value* angle) {
  return join(g, mul(g, radius, g.op("Cos", {angle})), mul(g, radius, g.op("Sin", {angle})));
}

// The `alpha` of add/sub (argument 2), when given and not 1.
Value* scaled_by_alpha(Graph& g, const Args& a, Value* v) {
  if (a.size() < 3 || a.is_none(2)) return v;
  const auto alpha = a.at(2)->maybe_float();
  if (alpha && *alpha == 1.0) return v;
  Value* factor = alpha ? scalar_like(g, *alpha, v) : cast(g, a.tensor(2), v->dtype());
  return mul(g, v, factor);
}

Value* add_or_sub(Graph& g, const Args& a, bool subtract) {
  const DType dtype = pair_dtype({a.at(0), a.at(1)});
  Parts x = parts_of(g, a.at(0), dtype), y = parts_of(g, a.at(1), dtype);
  y.re = scaled_by_alpha(g, a, y.re);
  if (y.im) y.im = scaled_by_alpha(g, a, y.im);
  auto combine = [&](Value* p, Value* q) { return subtract ? sub(g, p, q) : add(g, p, q); };
  Value* re = combine(x.re, y.re);
  Value* im = x.im && y.im ? combine(x.im, y.im)
              : x.im       ? x.im
                           : (subtract ? neg(g, y.im) : y.im);
  return join(g, re, im);
}

Value* multiply(Graph& g, const Args& a) {
  const DType dtype = pair_dtype({a.at(0), a.at(1)});
  const Parts x = parts_of(g, a.at(0), dtype), y = parts_of(g, a.at(1), dtype);
  if (!x.im) return join(g, mul(g, x.re, y.re), mul(g, x.re, y.im));
  if (!y.im) return join(g, mul(g, x.re, y.re), mul(g, x.im, y.re));
  return join(g, sub(g, mul(g, x.re, y.re), mul(g, x.im, y.im)), add(g, mul(g, x.re, y.im), mul(g, x.im, y.re)));
}

Value* divide(Graph& g, const TorchNode& n, const Args& a) {
  if (a.size() > 2 && !a.is_none(2))
    throw ArgumentError(n.kind + ": a rounding_mode is not defined for complex values");
  const DType dtype = pair_dtype({a.at(0), a.at(1)});
  const Parts x = parts_of(g, a.at(0), dtype), y = parts_of(g, a.at(1), dtype);
  if (!y.im) return join(g, div(g, x.re, y.re), div(g, x.im, y.re));
  Value* den = add(g, mul(g, y.re, y.re), mul(g, y.im, y.im));
  if (!x.im) return join(g, div(g, mul(g, x.re, y.re), den), div(g, neg(g, mul(g, x.re, y.im)), den));
  return join(g, div(g, add(g, mul(g, x.re, y.re), mul(g, x.im, y.im)), den),
              div(g, sub(g, mul(g, x.im, y.re), mul(g, x.re, y.im)), den));
}

// z ** p for a real exponent, in polar form (z * z for p == 2, as exact as torch's).
Value* power(Graph& g, const TorchNode& n, const Args& a) {
  if (!a.at(0)->is_complex() || a.at(1)->is_complex())
    throw ArgumentError(n.kind + ": onnxport raises complex values to real powers only, got " +
                        a.at(1)->describe() + " as the exponent");
  const Parts z = parts_of(g, a.at(0), a.at(0)->dtype());
  if (auto p = a.at(1)->maybe_float(); p && *p == 2.0)
    return join(g, sub(g, mul(g, z.re, z.re), mul(g, z.im, z.im)), mul(g, scalar_like(g, 2.0, z.re), mul(g, z.re, z.im)));
  Value* exponent = parts_of(g, a.at(1), z.re->dtype()).re;
  return from_polar(g, g.op("Pow", {magnitude(g, z), exponent}), mul(g, phase(g, z), exponent));
}

// Both operands complex: torch multiplies no complex matrix by a real one.
Value* matmul(Graph& g, const TorchNode& n, const Args& a) {
  const Parts x = complex_arg(g, n, a, 0), y = complex_arg(g, n, a, 1);
  auto mm = [&](Value* p, Value* q) { return g.op("MatMul", {p, q}); };
  return complex_from_parts(g, sub(g, mm(x.re, y.re), mm(x.im, y.im)), add(g, mm(x.re, y.im), mm(x.im, y.re)));
}

// Registers fn for op and for op_ (in place).
template <class F>
void add_with_inplace_complex(Registrar& r, const std::string& op, F fn) {
  r.add_complex(op, 9, fn);
  r.add_complex(op + "_", 9, fn);
}

}  // namespace

void add_complex_arithmetic(Registrar& r) {
  // The pair is the ONNX layout of a complex tensor: these views change only how it is read.
  r.add_complex("aten::view_as_real", 9, [](Graph&, const TorchNode& n, const Args& a) {
    Value* z = a.tensor(0);
    if (!z->is_complex()) throw ArgumentError(n.kind + ": expected a complex tensor, got " + z->describe());
    return z;
  });
  r.add_complex("aten::view_as_complex", 9, [](Graph&, const TorchNode& n, const Args& a) {
    Value* x = a.tensor(0);
    if (x->is_complex() || static_dim(x, -1) != std::optional<int64_t>(2))
      throw ArgumentError(n.kind + ": needs a real tensor whose last dimension is 2, got " + x->describe());
    return x;
  });
  r.add_complex("aten::is_complex", 9, [](Graph& g, const TorchNode&, const Args&) {
    return g.constant(Tensor::scalar_bool(true));
  });
  r.add_complex("aten::real", 9, [](Graph& g, const TorchNode& n, const Args& a) { return complex_arg(g, n, a, 0).re; });
  r.add_complex("aten::imag", 9, [](Graph& g, const TorchNode& n, const Args& a) { return complex_arg(g, n, a, 0).im; });
  r.add_complex("aten::abs", 9, [](Graph& g, const TorchNode& n, const Args& a) {
    return magnitude(g, complex_arg(g, n, a, 0));
  });
  r.add_complex("aten::angle", 9, [](Graph& g, const TorchNode& n, const Args& a) {
    return phase(g, complex_arg(g, n, a, 0));
  });
  r.add_complex("aten::complex", 9, [](Graph& g, const TorchNode&, const Args& a) {
    return join(g, a.tensor(0), a.tensor(1));
  });
  r.add_complex("aten::polar", 9, [](Graph& g, const TorchNode&, const Args& a) {
    return from_polar(g, a.tensor(0), a.tensor(1));
  });
  for (const char* op : {"aten::conj", "aten::_conj", "aten::conj_physical"})
    r.add_complex(op, 9, [](Graph& g, const TorchNode& n, const Args& a) {
      const Parts z = complex_arg(g, n, a, 0);
      return complex_from_parts(g, z.re, neg(g, z.im));
    });
  for (const char* op : {"aten::resolve_conj"})
    r.add_complex(op, 9, [](Graph&, const TorchNode&, const Args& a) { return a.tensor(0); });
  add_with_inplace_complex(r, "aten::add", [](Graph& g, const TorchNode&, const Args& a) { return add_or_sub(g, a, false); });
  add_with_inplace_complex(r, "aten::sub", [](Graph& g, const TorchNode&, const Args& a) { return add_or_sub(g, a, true); });
  add_with_inplace_complex(r, "aten::mul", [](Graph& g, const TorchNode&, const Args& a) { return multiply(g, a); });
  add_with_inplace_complex(r, "aten::div", divide);
  add_with_inplace_complex(r, "aten::pow", power);
  add_with_inplace_complex(r, "aten::neg", [](Graph& g, const TorchNode&, const Args& a) { return neg(g, a.tensor(0)); });
  add_with_inplace_complex(r, "aten::exp", [](Graph& g, const TorchNode& n, const Args& a) {
    const Parts z = complex_arg(g, n, a, 0);
    return from_polar(g, g.op("Exp", {z.re}), z.im);
  });
  r.add_complex("aten::matmul", 9, matmul);
}

}  // namespace onnxport::spectral
