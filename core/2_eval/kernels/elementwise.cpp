// Elementwise ops: unary math, broadcasting arithmetic, comparison and logic, variadic
// Max/Min/Sum/Mean, Where, Clip, Cast/CastLike and the activation functions.
#include <limits>
#include <sstream>

#include "2_eval/kernel.h"

namespace onnxport::core::eval {

namespace {

using at::Tensor;

std::string shape_of(const Tensor& t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
}

void require_floating(const KernelContext& ctx, const Tensor& t) {
  if (!at::isFloatingType(t.scalar_type()))
    ctx.fail(std::string("input of type ") + c10::toString(t.scalar_type()) + " is not a floating-point tensor");
}

void require_bool(const KernelContext& ctx, const Tensor& t) {
  if (t.scalar_type() != at::kBool)
    ctx.fail(std::string("input of type ") + c10::toString(t.scalar_type()) + " is not bool");
}

// ONNX ops with one type parameter T for several inputs; ATen would otherwise promote silently.
void require_same_type(const KernelContext& ctx, const Tensor& a, const Tensor& b) {
  if (a.scalar_type() != b.scalar_type())
    ctx.fail(std::string("inputs have different types (") + c10::toString(a.scalar_type()) + " and " +
             c10::toString(b.scalar_type()) + ")");
}

// Before opset 7 the binary ops broadcast only B to A, and only with broadcast=1: B's dims line
// up with A's from `axis` (default: the trailing dims), each equal to A's or 1.
Tensor legacy_broadcast_rhs(const KernelContext& ctx, const Tensor& a, const Tensor& b) {
  if (ctx.attr_i("broadcast", 0) == 0) {
    if (!a.sizes().equals(b.sizes()))
      ctx.fail("shapes " + shape_of(a) + " and " + shape_of(b) + " differ and broadcast is 0");
    return b;
  }
  const int64_t rank = a.dim();
  int64_t axis = ctx.attr_i("axis", rank - b.dim());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis + b.dim() > rank)
    ctx.fail("B of shape " + shape_of(b) + " does not fit A of shape " + shape_of(a) + " at axis " +
             std::to_string(ctx.attr_i("axis", 0)));
  std::vector<int64_t> shape(static_cast<size_t>(axis), 1);
  shape.insert(shape.end(), b.sizes().begin(), b.sizes().end());
  shape.resize(static_cast<size_t>(rank), 1);
  for (int64_t i = 0; i < rank; ++i)
    if (shape[static_cast<size_t>(i)] != 1 && shape[static_cast<size_t>(i)] != a.size(i))
      ctx.fail("B of shape " + shape_of(b) + " does not broadcast to A of shape " + shape_of(a));
  return b.reshape(shape);
}

// The two operands of a binary op as ATen can broadcast them (numpy rules from opset 7).
std::pair<Tensor, Tensor> binary_operands(const KernelContext& ctx, bool same_type) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (same_type) require_same_type(ctx, a, b);
  if (ctx.opset() < 7) return {a, legacy_broadcast_rhs(ctx, a, b)};
  return {a, b};
}

// --- kernel builders ------------------------------------------------------------------------

// A unary op defined for floating-point inputs only (ATen would return float for integers).
template <class Fn>
Kernel float_unary(Fn fn) {
  return [fn](const KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    require_floating(ctx, x);
    return single(fn(x));
  };
}

// A unary op whose ATen form keeps the input's type for every type ONNX allows.
template <class Fn>
Kernel any_unary(Fn fn) {
  return [fn](const KernelContext& ctx) { return single(fn(ctx.input(0))); };
}

// A binary op with numpy broadcasting (same-typed operands unless `same_type` is false).
template <class Fn>
Kernel binary(Fn fn, bool same_type = true) {
  return [fn, same_type](const KernelContext& ctx) {
    auto [a, b] = binary_operands(ctx, same_type);
    return single(fn(ctx, a, b));
  };
}

// A binary op on bool tensors giving bool.
template <class Fn>
Kernel logical(Fn fn) {
  return binary([fn](const KernelContext& ctx, const Tensor& a, const Tensor& b) {
    require_bool(ctx, a);
    return fn(a, b);
  });
}

// Max/Min/Sum/Mean: folds 1+ same-typed inputs with `fn`; numpy broadcasting from opset 8,
// equal shapes before.
template <class Fn>
Tensor fold_inputs(const KernelContext& ctx, Fn fn) {
  if (ctx.input_count() == 0) ctx.fail("no inputs");
  Tensor acc = ctx.input(0);
  for (size_t i = 1; i < ctx.input_count(); ++i) {
    const Tensor& t = ctx.input(i);
    require_same_type(ctx, acc, t);
    if (ctx.opset() < 8 && !acc.sizes().equals(t.sizes()))
      ctx.fail("inputs of shapes " + shape_of(acc) + " and " + shape_of(t) + " differ (broadcasting is from opset 8)");
    acc = fn(acc, t);
  }
  return acc;
}

template <class Fn>
Kernel variadic(Fn fn) {
  return [fn](const KernelContext& ctx) { return single(fold_inputs(ctx, fn)); };
}

// --- math -----------------------------------------------------------------------------------

// Integer division truncates toward zero (C), floating division is exact.
Tensor divide(const KernelContext&, const Tensor& a, const Tensor& b) {
  if (at::isIntegralType(a.scalar_type(), /*includeBool=*/true)) return at::div(a, b, "trunc");
  return at::div(a, b);
}

// The result has the base's type; an integer base with a floating exponent is computed in double
// (as numpy does) and truncated back.
Tensor power(const KernelContext& ctx, const Tensor& base, const Tensor& exponent) {
  const at::ScalarType type = base.scalar_type();
  if (type == at::kBool || exponent.scalar_type() == at::kBool) ctx.fail("bool operands");
  if (!at::isFloatingType(type) && at::isFloatingType(exponent.scalar_type()))
    return at::pow(base.to(at::kDouble), exponent.to(at::kDouble)).to(type);
  return at::pow(base, exponent).to(type);
}

// fmod=1: C fmod (sign of the dividend); fmod=0: the sign of the divisor (Python's %).
Tensor modulo(const KernelContext& ctx, const Tensor& a, const Tensor& b) {
  return ctx.attr_i("fmod", 0) ? at::fmod(a, b) : at::remainder(a, b);
}

Tensor bit_shift(const KernelContext& ctx, const Tensor& x, const Tensor& amount) {
  if (at::isFloatingType(x.scalar_type()) || x.scalar_type() == at::kBool) ctx.fail("input is not an integer tensor");
  const std::string direction = ctx.attr_s("direction", "");
  if (direction == "LEFT") return at::bitwise_left_shift(x, amount);
  if (direction == "RIGHT") return at::bitwise_right_shift(x, amount);
  ctx.fail("direction '" + direction + "' is neither LEFT nor RIGHT");
}

// Erf is also defined for integer types: erf of the value, converted back like Cast (truncated).
Tensor erf_any_type(const Tensor& x) {
  if (at::isFloatingType(x.scalar_type())) return at::erf(x);
  return at::erf(x.to(at::kDouble)).to(x.scalar_type());
}

std::vector<EvalValue> is_inf(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const bool negative = ctx.attr_i("detect_negative", 1) != 0;
  const bool positive = ctx.attr_i("detect_positive", 1) != 0;
  if (negative && positive) return single(at::isinf(x));
  if (negative) return single(at::isneginf(x));
  if (positive) return single(at::isposinf(x));
  return single(at::zeros(x.sizes(), at::TensorOptions().dtype(at::kBool)));
}

// --- selection, clipping and casts ---------------------------------------------------------

std::vector<EvalValue> where_op(const KernelContext& ctx) {
  const Tensor& cond = ctx.input(0);
  require_bool(ctx, cond);
  require_same_type(ctx, ctx.input(1), ctx.input(2));
  return single(at::where(cond, ctx.input(1), ctx.input(2)));
}

// A Clip bound given as an input (opset 11+): a scalar, or nullopt when left out.
c10::optional<at::Scalar> clip_bound(const KernelContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return c10::nullopt;
  const Tensor& bound = ctx.input(i);
  require_same_type(ctx, ctx.input(0), bound);
  if (bound.numel() != 1) ctx.fail("bound of shape " + shape_of(bound) + " is not a scalar");
  return bound.item();
}

// Bounds are attributes (absent: unbounded) before opset 11 and optional inputs from 11.
std::vector<EvalValue> clip(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  c10::optional<at::Scalar> low, high;
  if (ctx.opset() < 11) {
    require_floating(ctx, x);
    if (ctx.has_attr("min")) low = ctx.attr_f("min", 0);
    if (ctx.has_attr("max")) high = ctx.attr_f("max", 0);
  } else {
    low = clip_bound(ctx, 1);
    high = clip_bound(ctx, 2);
  }
  if (!low && !high) return single(x);
  return single(at::clamp(x, low, high));
}

// `to` is a type name ("FLOAT") in Cast-1 and a TensorProto data type from Cast-6.
std::vector<EvalValue> cast(const KernelContext& ctx) {
  const std::string name = ctx.attr_s("to", "");
  int32_t onnx_type = 0;
  if (!name.empty()) {
    onnx::TensorProto_DataType parsed{};
    if (!onnx::TensorProto_DataType_Parse(name, &parsed)) ctx.fail("unknown type name '" + name + "'");
    onnx_type = parsed;
  } else {
    if (!ctx.has_attr("to")) ctx.fail("attribute 'to' is missing");
    onnx_type = static_cast<int32_t>(ctx.attr_i("to", 0));
  }
  return single(ctx.input(0).to(scalar_type_of_onnx(onnx_type)));
}

// --- activations ---------------------------------------------------------------------------

// From opset 7 the slope broadcasts to X (unidirectionally); before, it had X's shape or one
// element (other shapes meant per-channel slopes in frameworks of the time, ambiguous in ONNX).
std::vector<EvalValue> prelu(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& slope = ctx.input(1);
  require_same_type(ctx, x, slope);
  if (ctx.opset() < 7) {
    if (slope.numel() != 1 && !slope.sizes().equals(x.sizes()))
      ctx.fail("slope of shape " + shape_of(slope) + " is neither one value nor of X's shape " + shape_of(x) +
               " (before opset 7)");
  } else if (!x.sizes().equals(at::infer_size(x.sizes(), slope.sizes()))) {
    ctx.fail("slope of shape " + shape_of(slope) + " does not broadcast to X of shape " + shape_of(x));
  }
  const Tensor s = ctx.opset() < 7 && slope.numel() == 1 ? slope.reshape({}) : slope;
  return single(at::where(x < 0, x * s, x));
}

std::vector<EvalValue> hard_sigmoid(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_floating(ctx, x);
  return single((x * ctx.attr_f("alpha", 0.2F) + ctx.attr_f("beta", 0.5F)).clamp_(0, 1));
}

// y = x + bias below -lambd, x - bias above lambd, 0 between; integer inputs keep their type.
std::vector<EvalValue> shrink(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const double lambd = ctx.attr_f("lambd", 0.5F);
  const double bias = ctx.attr_f("bias", 0.0F);
  const Tensor shifted = at::where(x < -lambd, x + bias, at::where(x > lambd, x - bias, at::zeros_like(x)));
  return single(shifted.to(x.scalar_type()));
}

Tensor softsign(const Tensor& x) { return x / (at::abs(x) + 1); }

}  // namespace

void register_elementwise_kernels(KernelTable& table) {
  // Unary math. Opset 1 versions only add the ignored `consumed_inputs` attribute.
  table["Abs"] = {any_unary([](const Tensor& x) { return at::abs(x); }), 1};
  table["Neg"] = {any_unary([](const Tensor& x) { return at::neg(x); }), 1};
  table["Sign"] = {any_unary([](const Tensor& x) { return at::sign(x); }), 9};
  table["Erf"] = {any_unary(erf_any_type), 9};
  table["IsNaN"] = {any_unary([](const Tensor& x) { return at::isnan(x); }), 9};
  table["IsInf"] = {is_inf, 10};
  table["Not"] = {[](const KernelContext& ctx) {
                    require_bool(ctx, ctx.input(0));
                    return single(at::logical_not(ctx.input(0)));
                  },
                  1};
  table["Acos"] = {float_unary([](const Tensor& x) { return at::acos(x); }), 7};
  table["Acosh"] = {float_unary([](const Tensor& x) { return at::acosh(x); }), 9};
  table["Asin"] = {float_unary([](const Tensor& x) { return at::asin(x); }), 7};
  table["Asinh"] = {float_unary([](const Tensor& x) { return at::asinh(x); }), 9};
  table["Atan"] = {float_unary([](const Tensor& x) { return at::atan(x); }), 7};
  table["Atanh"] = {float_unary([](const Tensor& x) { return at::atanh(x); }), 9};
  table["Cos"] = {float_unary([](const Tensor& x) { return at::cos(x); }), 7};
  table["Cosh"] = {float_unary([](const Tensor& x) { return at::cosh(x); }), 9};
  table["Sin"] = {float_unary([](const Tensor& x) { return at::sin(x); }), 7};
  table["Sinh"] = {float_unary([](const Tensor& x) { return at::sinh(x); }), 9};
  table["Tan"] = {float_unary([](const Tensor& x) { return at::tan(x); }), 7};
  table["Tanh"] = {float_unary([](const Tensor& x) { return at::tanh(x); }), 1};
  table["Ceil"] = {float_unary([](const Tensor& x) { return at::ceil(x); }), 1};
  table["Floor"] = {float_unary([](const Tensor& x) { return at::floor(x); }), 1};
  table["Round"] = {float_unary([](const Tensor& x) { return at::round(x); }), 11};  // half to even
  table["Exp"] = {float_unary([](const Tensor& x) { return at::exp(x); }), 1};
  table["Log"] = {float_unary([](const Tensor& x) { return at::log(x); }), 1};
  table["Sqrt"] = {float_unary([](const Tensor& x) { return at::sqrt(x); }), 1};
  table["Reciprocal"] = {float_unary([](const Tensor& x) { return at::reciprocal(x); }), 1};
  table["Sigmoid"] = {float_unary([](const Tensor& x) { return at::sigmoid(x); }), 1};

  // Binary ops: the `broadcast`/`axis` attributes before opset 7, numpy broadcasting from 7.
  table["Add"] = {binary([](const KernelContext&, const Tensor& a, const Tensor& b) { return at::add(a, b); }), 1};
  table["Sub"] = {binary([](const KernelContext&, const Tensor& a, const Tensor& b) { return at::sub(a, b); }), 1};
  table["Mul"] = {binary([](const KernelContext&, const Tensor& a, const Tensor& b) { return at::mul(a, b); }), 1};
  table["Div"] = {binary(divide), 1};
  table["Pow"] = {binary(power, /*same_type=*/false), 1};
  table["Mod"] = {binary(modulo), 10};
  table["BitShift"] = {binary(bit_shift), 11};
  table["And"] = {logical([](const Tensor& a, const Tensor& b) { return at::logical_and(a, b); }), 1};
  table["Or"] = {logical([](const Tensor& a, const Tensor& b) { return at::logical_or(a, b); }), 1};
  table["Xor"] = {logical([](const Tensor& a, const Tensor& b) { return at::logical_xor(a, b); }), 1};
  // Opset 18's bitwise ops (integer tensors; ONNX types them so, as ATen computes them).
  table["BitwiseAnd"] = {binary([](const KernelContext&, const Tensor& a, const Tensor& b) { return at::bitwise_and(a, b); }), 18};
  table["BitwiseOr"] = {binary([](const KernelContext&, const Tensor& a, const Tensor& b) { return at::bitwise_or(a, b); }), 18};
  table["BitwiseXor"] = {binary([](const KernelContext&, const Tensor& a, const Tensor& b) { return at::bitwise_xor(a, b); }), 18};
  table["BitwiseNot"] = {any_unary([](const Tensor& x) { return at::bitwise_not(x); }), 18};
  table["Equal"] = {binary([](const KernelContext&, const Tensor& a, const Tensor& b) { return at::eq(a, b); }), 1};
  table["Greater"] = {binary([](const KernelContext&, const Tensor& a, const Tensor& b) { return at::gt(a, b); }), 1};
  table["Less"] = {binary([](const KernelContext&, const Tensor& a, const Tensor& b) { return at::lt(a, b); }), 1};
  table["GreaterOrEqual"] = {
      binary([](const KernelContext&, const Tensor& a, const Tensor& b) { return at::ge(a, b); }), 12};
  table["LessOrEqual"] = {binary([](const KernelContext&, const Tensor& a, const Tensor& b) { return at::le(a, b); }),
                          12};

  // Variadic ops: equal shapes before opset 8, numpy broadcasting from 8.
  table["Max"] = {variadic([](const Tensor& a, const Tensor& b) { return at::maximum(a, b); }), 1};
  table["Min"] = {variadic([](const Tensor& a, const Tensor& b) { return at::minimum(a, b); }), 1};
  table["Sum"] = {variadic([](const Tensor& a, const Tensor& b) { return at::add(a, b); }), 1};
  table["Mean"] = {[](const KernelContext& ctx) {
                     const Tensor sum =
                         fold_inputs(ctx, [](const Tensor& a, const Tensor& b) { return at::add(a, b); });
                     require_floating(ctx, sum);
                     return single(sum / static_cast<double>(ctx.input_count()));
                   },
                   1};
  table["Where"] = {where_op, 9};

  table["Clip"] = {clip, 1};
  table["Cast"] = {cast, 1, 19};  // Cast-19's saturate acts on float8 targets, which are refused
  table["CastLike"] = {[](const KernelContext& ctx) { return single(ctx.input(0).to(ctx.input(1).scalar_type())); },
                       15, 19};

  // Activations.
  table["Relu"] = {any_unary([](const Tensor& x) { return at::relu(x); }), 1};
  table["Gelu"] = {[](const KernelContext& ctx) {
                     const std::string approximate = ctx.attr_s("approximate", "none");
                     if (approximate != "none" && approximate != "tanh")
                       ctx.fail("approximate '" + approximate + "' is not none or tanh");
                     const Tensor& x = ctx.input(0);
                     return single(at::gelu(widened(x), approximate).to(x.scalar_type()));
                   },
                   20};
  table["LeakyRelu"] = {[](const KernelContext& ctx) {
                          require_floating(ctx, ctx.input(0));
                          return single(at::leaky_relu(ctx.input(0), ctx.attr_f("alpha", 0.01F)));
                        },
                        1};
  table["PRelu"] = {prelu, 1};
  table["Elu"] = {[](const KernelContext& ctx) {
                    require_floating(ctx, ctx.input(0));
                    return single(at::elu(ctx.input(0), ctx.attr_f("alpha", 1.0F)));
                  },
                  1};
  // Selu-1 had other default coefficients (1.6732, 1.0507) than Selu-6.
  table["Selu"] = {[](const KernelContext& ctx) {
                     require_floating(ctx, ctx.input(0));
                     const bool v1 = ctx.opset() < 6;
                     const float alpha = ctx.attr_f("alpha", v1 ? 1.6732F : 1.67326319217681884765625F);
                     const float gamma = ctx.attr_f("gamma", v1 ? 1.0507F : 1.05070102214813232421875F);
                     return single(at::elu(ctx.input(0), alpha, gamma));
                   },
                   1};
  table["Celu"] = {[](const KernelContext& ctx) {
                     require_floating(ctx, ctx.input(0));
                     return single(at::celu(ctx.input(0), ctx.attr_f("alpha", 1.0F)));
                   },
                   12};
  table["HardSigmoid"] = {hard_sigmoid, 1};
  table["HardSwish"] = {float_unary([](const Tensor& x) { return at::hardswish(x); }), 14};
  table["Softplus"] = {float_unary([](const Tensor& x) { return at::softplus(x); }), 1};
  table["Softsign"] = {float_unary(softsign), 1};
  table["ThresholdedRelu"] = {[](const KernelContext& ctx) {
                                require_floating(ctx, ctx.input(0));
                                return single(at::threshold(ctx.input(0), ctx.attr_f("alpha", 1.0F), 0));
                              },
                              10};
  table["Shrink"] = {shrink, 9};
}

}  // namespace onnxport::core::eval
