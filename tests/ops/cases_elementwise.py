"""elementwise pack rows: arithmetic, activations, comparisons, logic and selection, shifts,
float classification, min/max, special functions and piecewise activations."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from op_framework import NEW_OPSETS, UNREACHABLE, With, bools, case, f32, f64, grid, halves, ints, nonzero, nonzero_ints, pos, unary

# ---- elementwise: arithmetic

case("add", ["add"], [f32(2, 3, 4), f32(2, 3, 4)], lambda x, y: x + y)
case("add_broadcast", ["add"], [f32(2, 3, 4), f32(3, 1)], lambda x, y: x + y)
case("add_alpha", ["add"], [f32(2, 3), f32(2, 3)], lambda x, y: torch.add(x, y, alpha=2.5))
case("add_scalar", ["add"], [f32(2, 3)], lambda x: x + 2.5)
case("add_int", ["add"], [ints(2, 3), ints(2, 3)], lambda i, j: i + j + 3)
case("add_int_float_promotion", ["add"], [ints(2, 3), f32(2, 3)], lambda i, x: i + x)
case("add_int_scalar_float", ["add"], [ints(2, 3)], lambda i: i + 1.5)
case("add_f64_f32", ["add"], [f64(2, 3), f32(2, 3)], lambda x, y: x + y)
case("add_int32", ["add"], [ints(2, 3, dtype=torch.int32), ints(3, dtype=torch.int32)], lambda i, j: i + j)
case("add_0d", ["add"], [f32(2, 3), f32()], lambda x, s: x + s)
# 8- and 16-bit integers: ONNX's Add/Sub/Mul/Div take them from opset 14 only; results wrap as in torch
for _dt, _lo, _hi in ((torch.uint8, 0, 256), (torch.int8, -128, 128), (torch.int16, -32768, 32768)):
    _name = str(_dt).replace("torch.", "")
    case(f"arithmetic_{_name}", ["add", "sub", "mul", "square"],
         [ints(3, 5, low=_lo, high=_hi, dtype=_dt), ints(3, 5, low=_lo, high=_hi, dtype=_dt)],
         lambda i, j: (i + j, i - j, i * j, torch.add(i, j, alpha=3), torch.rsub(i, j), torch.square(i)))
    case(f"pow_{_name}", ["pow"], [ints(3, 5, low=_lo // 8, high=_hi // 8, dtype=_dt), ints(3, 5, high=4, dtype=_dt)],
         lambda i, j: (torch.pow(i, j), i ** 2))
    case(f"division_{_name}", ["div", "remainder"],
         [ints(3, 5, low=_lo, high=_hi, dtype=_dt), nonzero_ints(3, 5, low=-100 if _lo else 1, high=100, dtype=_dt)],
         lambda i, j: (torch.div(i, j, rounding_mode="trunc"), torch.div(i, j, rounding_mode="floor"), i % j))
case("add_int_0d_float", ["add"], [ints(2, 3), f32()], lambda i, s: i + s)
case("add_0d_0d", ["add"], [f32(), f32()], lambda a, b: a + b)
case("add_int_alpha", ["add"], [ints(2, 3), ints(2, 3)], lambda i, j: torch.add(i, j, alpha=2))
case("add_", ["add_"], [f32(2, 3), f32(3)], lambda x, y: (x * 1).add_(y, alpha=2))
# An in-place result keeps self's dtype (PyTorch's test_inplace_arithmetic_half: float16 += float32
# is float16): float32 += float64 is float32, and eq_ of a float tensor gives floats.
case("inplace_keeps_self_dtype", ["add_", "mul_", "eq_"], [f32(2, 3), f32(2, 3)],
     lambda x, y: ((x * 1).add_(y.double()), (x * 1).mul_(y.double()), (x * 1).eq_(y)), since=11)
case("sub", ["sub"], [f32(2, 3), f32(2, 3)], lambda x, y: x - y)
case("sub_alpha", ["sub"], [f32(2, 3), f32(1, 3)], lambda x, y: torch.sub(x, y, alpha=0.5))
case("sub_int", ["sub"], [ints(2, 3), ints(2, 3)], lambda i, j: i - j)
case("sub_", ["sub_"], [f32(2, 3), f32(2, 3)], lambda x, y: (x * 1).sub_(y))
case("rsub", ["rsub"], [f32(2, 3)], lambda x: 1 - x)
case("rsub_int", ["rsub"], [ints(2, 3)], lambda i: 10 - i)
case("rsub_alpha", ["rsub"], [f32(2, 3)], lambda x: torch.rsub(x, 2.0, alpha=3))
case("mul", ["mul"], [f32(2, 3, 4), f32(4)], lambda x, y: x * y)
case("mul_two_bools", ["mul"], [bools(2, 3), bools(3)], lambda a, b: (torch.mul(a, b), a * b, torch.mul(a, b.int())))
case("mul_scalar", ["mul"], [f32(2, 3)], lambda x: x * 1.5)
case("mul_int", ["mul"], [ints(2, 3), ints(2, 3)], lambda i, j: i * j * 2)
case("mul_bool", ["mul"], [bools(2, 3), f32(2, 3)], lambda m, x: m * x)
case("mul_int_float_scalar", ["mul"], [ints(2, 3)], lambda i: i * 1.5)
case("mul_", ["mul_"], [f32(2, 3), f32(2, 3)], lambda x, y: (x * 1).mul_(y))
case("div", ["div"], [f32(2, 3), nonzero(2, 3)], lambda x, y: x / y)
case("div_scalar", ["div"], [f32(2, 3)], lambda x: x / 4)
case("div_int_scalar", ["div"], [ints(2, 3)], lambda i: i / 2)
case("div_int_true", ["div"], [ints(2, 3), nonzero_ints(2, 3)], lambda i, j: i / j)
case("div_floor", ["div"], [f32(2, 3, low=-6, high=6), nonzero(2, 3)],
     lambda x, y: torch.div(x, y, rounding_mode="floor"))
case("div_trunc", ["div"], [f32(2, 3, low=-6, high=6), nonzero(2, 3)],
     lambda x, y: torch.div(x, y, rounding_mode="trunc"))
case("div_int_floor", ["div"], [ints(3, 4, low=-9, high=9), nonzero_ints(3, 4)],
     lambda i, j: torch.div(i, j, rounding_mode="floor"))
case("div_int_trunc", ["div"], [ints(3, 4, low=-9, high=9), nonzero_ints(3, 4)],
     lambda i, j: torch.div(i, j, rounding_mode="trunc"))
case("div_", ["div_"], [f32(2, 3), nonzero(2, 3)], lambda x, y: (x * 1).div_(y))
case("div__floor", ["div_"], [f32(2, 3, low=-6, high=6), nonzero(2, 3)],
     lambda x, y: (x * 1).div_(y, rounding_mode="floor"))
case("floor_divide", ["floor_divide"], [f32(2, 3, low=-6, high=6), nonzero(2, 3)], lambda x, y: x // y)
case("floor_divide_int", ["floor_divide"], [ints(3, 4, low=-9, high=9), nonzero_ints(3, 4)],
     lambda i, j: i // j)
case("floor_divide_scalar", ["floor_divide"], [ints(3, 4, low=-9, high=9)], lambda i: i // 4)
case("floor_divide_float_scalar", ["floor_divide"], [f32(3, 4, low=-6, high=6)], lambda x: x // 2.5)
case("floor_divide_", ["floor_divide_"], [f32(2, 3, low=-6, high=6), nonzero(2, 3)],
     lambda x, y: (x * 1).floor_divide_(y))
case("remainder", ["remainder"], [f32(3, 4, low=-6, high=6), nonzero(3, 4)], lambda x, y: x % y, since=10)
case("remainder_int", ["remainder"], [ints(3, 4, low=-9, high=9), nonzero_ints(3, 4)],
     lambda i, j: torch.remainder(i, j), since=10)
case("remainder_scalar", ["remainder"], [f32(3, 4, low=-6, high=6)], lambda x: x % 1.5, since=10)
case("remainder_int_scalar", ["remainder"], [ints(3, 4, low=-9, high=9)], lambda i: (i % 4, i % -3), since=10)
case("remainder_", ["remainder_"], [f32(3, 4, low=-6, high=6), nonzero(3, 4)],
     lambda x, y: (x * 1).remainder_(y), since=10)
case("fmod", ["fmod"], [f32(3, 4, low=-6, high=6), nonzero(3, 4)], lambda x, y: torch.fmod(x, y), since=10)
case("fmod_int", ["fmod"], [ints(3, 4, low=-9, high=9), nonzero_ints(3, 4)],
     lambda i, j: torch.fmod(i, j), since=10)
case("fmod_", ["fmod_"], [f32(3, 4, low=-6, high=6)], lambda x: (x * 1).fmod_(1.5), since=10)
case("pow", ["pow"], [pos(2, 3), f32(2, 3)], lambda x, y: torch.pow(x, y))
case("pow_scalar", ["pow"], [f32(2, 3)], lambda x: x ** 2 + x ** 3)
case("pow_sqrt", ["pow"], [pos(2, 3)], lambda x: x ** 0.5)
case("pow_scalar_base", ["pow"], [f32(2, 3)], lambda x: 2 ** x)
case("pow_int", ["pow"], [ints(2, 3, low=-3, high=4)], lambda i: i ** 2)
case("pow_int_tensor", ["pow"], [ints(2, 3, low=-3, high=4), ints(2, 3, high=4)], torch.pow)
case("pow_", ["pow_"], [pos(2, 3)], lambda x: (x * 1).pow_(1.5))
unary("neg", lambda x: -x, [f32(2, 3)], inplace=lambda x: x.neg_())
case("neg_int", ["neg"], [ints(2, 3, low=-4, high=4)], lambda i: -i)
unary("abs", torch.abs, [f32(2, 3)], inplace=lambda x: x.abs_())
case("abs_int", ["abs"], [ints(2, 3, low=-4, high=4)], torch.abs)
unary("sign", torch.sign, [grid(3, 4)], inplace=lambda x: x.sign_())
case("sign_int", ["sign"], [ints(3, 4, low=-3, high=3)], torch.sign)
unary("exp", torch.exp, [f32(2, 3)], inplace=lambda x: x.exp_())
case("exp_int", ["exp"], [ints(2, 3)], torch.exp)
unary("log", torch.log, [pos(2, 3)], inplace=lambda x: x.log_())
unary("log2", torch.log2, [pos(2, 3)], inplace=lambda x: x.log2_())
unary("log10", torch.log10, [pos(2, 3)], inplace=lambda x: x.log10_())
unary("log1p", torch.log1p, [f32(2, 3, low=-0.9, high=3)], inplace=lambda x: x.log1p_())
unary("expm1", torch.expm1, [f32(2, 3)], inplace=lambda x: x.expm1_())
unary("sqrt", torch.sqrt, [pos(2, 3)], inplace=lambda x: x.sqrt_())
case("sqrt_int", ["sqrt"], [ints(2, 3)], torch.sqrt)
unary("rsqrt", torch.rsqrt, [pos(2, 3)], inplace=lambda x: x.rsqrt_())
unary("reciprocal", torch.reciprocal, [nonzero(2, 3)], inplace=lambda x: x.reciprocal_())
unary("square", torch.square, [f32(2, 3)], inplace=lambda x: x.square_())
case("square_int", ["square"], [ints(2, 3, low=-4, high=4)], torch.square)
unary("erf", torch.erf, [f32(2, 3)], inplace=lambda x: x.erf_())
unary("sin", torch.sin, [f32(2, 3)], inplace=lambda x: x.sin_())
unary("cos", torch.cos, [f32(2, 3)], inplace=lambda x: x.cos_())
unary("tan", torch.tan, [f32(2, 3, low=-1.2, high=1.2)], inplace=lambda x: x.tan_())
unary("asin", torch.asin, [f32(2, 3, low=-0.95, high=0.95)], inplace=lambda x: x.asin_())
unary("acos", torch.acos, [f32(2, 3, low=-0.95, high=0.95)], inplace=lambda x: x.acos_())
unary("atan", torch.atan, [f32(2, 3, low=-4, high=4)], inplace=lambda x: x.atan_())
unary("floor", torch.floor, [f32(3, 4, low=-4, high=4)], inplace=lambda x: x.floor_())
unary("ceil", torch.ceil, [f32(3, 4, low=-4, high=4)], inplace=lambda x: x.ceil_())
unary("trunc", torch.trunc, [f32(3, 4, low=-4, high=4)], inplace=lambda x: x.trunc_())
case("floor_int", ["floor", "ceil", "trunc"], [ints(2, 3, low=-4, high=4)],
     lambda i: (torch.floor(i), torch.ceil(i), torch.trunc(i)))
unary("round", torch.round, [halves(4, 5)], inplace=lambda x: x.round_(), since=11)
case("round_opset9", ["round"], [halves(4, 5)], torch.round, opsets=[], fails={9: "supported from opset 11"})
case("round_decimals", ["round"], [f32(4, 5, low=-500, high=500)],
     lambda x: (torch.round(x, decimals=2), torch.round(x, decimals=-1), torch.round(x, decimals=0)), since=11)

# ---- elementwise: activations

unary("relu", torch.relu, [f32(2, 3, 4)], inplace=lambda x: x.relu_())
case("relu_int", ["relu"], [ints(2, 3, low=-4, high=4)], torch.relu)
case("relu_0d", ["relu"], [f32()], torch.relu)
unary("sigmoid", torch.sigmoid, [f32(2, 3, 4)], inplace=lambda x: x.sigmoid_())
unary("tanh", torch.tanh, [f32(2, 3, 4)], inplace=lambda x: x.tanh_())
unary("leaky_relu", lambda x: F.leaky_relu(x, 0.1), [f32(2, 3, 4)],
      inplace=lambda x: F.leaky_relu(x, 0.2, inplace=True))
case("leaky_relu_default", ["leaky_relu"], [f32(2, 3)], F.leaky_relu)
unary("elu", lambda x: F.elu(x, 0.5), [f32(2, 3, 4)], inplace=lambda x: F.elu(x, 1.5, inplace=True))
case("elu_scale", ["elu"], [f32(2, 3)], lambda x: torch.ops.aten.elu(x, 1.0, 2.0, 1.0),
     opsets=[], fails={o: "scale/input_scale other than 1" for o in (9, 17)})
unary("selu", F.selu, [f32(2, 3, 4)], inplace=lambda x: F.selu(x, inplace=True))
unary("celu", lambda x: F.celu(x, 0.7), [f32(2, 3, 4)], inplace=lambda x: F.celu(x, 1.3, inplace=True))
case("celu_float64", ["celu"], [f64(2, 3)], lambda x: F.celu(x, 0.7))  # ONNX Celu takes float32 only
unary("hardtanh", lambda x: F.hardtanh(x, -0.5, 0.7), [f32(2, 3, 4)],
      inplace=lambda x: F.hardtanh(x, -0.2, 0.3, inplace=True))
case("hardtanh_default", ["hardtanh"], [f32(2, 3, 4, low=-3, high=3)], F.hardtanh)
unary("relu6", lambda x: F.relu6(x), [f32(2, 3, 4, low=-3, high=9)],
      inplace=lambda x: F.relu6(x, inplace=True))
unary("clamp", lambda x: x.clamp(-0.3, 0.4), [f32(3, 4)], inplace=lambda x: x.clamp_(-0.1, 0.2))
case("clamp_min_only", ["clamp"], [f32(3, 4)], lambda x: torch.clamp(x, min=-0.3))
case("clamp_max_only", ["clamp"], [f32(3, 4)], lambda x: torch.clamp(x, max=0.2))
case("clamp_tensor_bounds", ["clamp"], [f32(3, 4), f32(3, 4, low=-1, high=0), f32(4, low=0, high=1)],
     lambda x, lo, hi: torch.clamp(x, lo, hi))
case("clamp_int", ["clamp"], [ints(3, 4, low=-9, high=9)], lambda i: i.clamp(-3, 4))
case("clamp_int_tensor_bound", ["clamp"], [ints(3, 4, low=-9, high=9), ints(4, low=-3, high=3)],
     lambda i, lo: i.clamp(min=lo))
case("relu6_int", ["relu6", "hardtanh"], [ints(3, 4, low=-9, high=9)],
     lambda i: (F.relu6(i), F.hardtanh(i, -2, 3)))
case("clamp__tensor", ["clamp_"], [f32(3, 4), f32(3, 4, low=-1, high=0)],
     lambda x, lo: (x * 1).clamp_(min=lo))
unary("clamp_min", lambda x: torch.clamp_min(x, 0.1), [f32(3, 4)],
      inplace=lambda x: torch.clamp_min_(x, -0.2))
case("clamp_min_tensor", ["clamp_min"], [f32(3, 4), f32(3, 4)], lambda x, y: torch.clamp_min(x, y))
unary("clamp_max", lambda x: torch.clamp_max(x, 0.1), [f32(3, 4)],
      inplace=lambda x: torch.clamp_max_(x, -0.2))
case("clamp_max_tensor", ["clamp_max"], [f32(3, 4), f32(4)], lambda x, y: torch.clamp_max(x, y))
unary("hardsigmoid", F.hardsigmoid, [f32(2, 3, 4, low=-4, high=4)],
      inplace=lambda x: F.hardsigmoid(x, inplace=True))
unary("hardswish", F.hardswish, [f32(2, 3, 4, low=-4, high=4)],
      inplace=lambda x: F.hardswish(x, inplace=True))
unary("silu", F.silu, [f32(2, 3, 4)], inplace=lambda x: F.silu(x, inplace=True))
unary("mish", F.mish, [f32(2, 3, 4)], inplace=lambda x: F.mish(x, inplace=True))
case("softplus", ["softplus"], [f32(2, 3, 4)], F.softplus)
case("softplus_beta", ["softplus"], [f32(2, 3, 4)], lambda x: F.softplus(x, beta=2.0, threshold=30))
# The threshold: x itself where beta * x > threshold (inputs on both sides of it), with and without
# beta, and large inputs at the default threshold (no linear branch exported there). Not float64:
# ONNX Runtime has no float64 Softplus kernel.
case("softplus_threshold", ["softplus"], [f32(3, 4, 5, low=-3, high=3)],
     lambda x: (F.softplus(x, beta=2.0, threshold=1.5), F.softplus(x, threshold=0.5), F.softplus(x, beta=0.5, threshold=-0.5),
                F.softplus(x, beta=3.0, threshold=2.0)))
case("softplus_large", ["softplus"], [f32(4, 6, low=-150, high=150)], lambda x: (F.softplus(x), F.softplus(x, beta=0.5)))
case("gelu", ["gelu"], [f32(2, 3, 4)], F.gelu)
case("gelu_tanh", ["gelu"], [f32(2, 3, 4)], lambda x: F.gelu(x, approximate="tanh"))
case("prelu", ["prelu"], [f32(2, 3, 4, 5)], module=lambda: nn.PReLU(3, init=0.1))
case("prelu_single", ["prelu"], [f32(2, 3, 4)], module=lambda: nn.PReLU(init=0.3))
case("prelu_0d", ["prelu"], [f32()], module=lambda: nn.PReLU(init=0.3))  # the output stays 0-d
case("prelu_2d", ["prelu"], [f32(4, 3)],
     module=lambda: With(lambda s, x: F.prelu(x, s.w), w=torch.rand(3)))

# ---- elementwise: comparisons, logic, selection

for op, fn in [("eq", torch.eq), ("ne", torch.ne), ("lt", torch.lt), ("gt", torch.gt),
               ("le", torch.le), ("ge", torch.ge)]:
    case(op, [op], [grid(3, 4), grid(3, 4)], fn)
    case(op + "_scalar", [op], [grid(3, 4)], lambda x, fn=fn: fn(x, 1.0))
    case(op + "_int", [op], [ints(3, 4, high=3), ints(4, high=3)], fn)
    case(op + "_int_float", [op], [ints(3, 4, high=3), grid(3, 4)], fn)
    case(op + "_", [op + "_"], [grid(3, 4), grid(3, 4)],
         lambda x, y, op=op: getattr(x * 1, op + "_")(y))
    case(op + "__int_scalar", [op + "_"], [ints(3, 4, high=3)],
         lambda i, op=op: getattr(i * 1, op + "_")(1))
case("eq_bool", ["eq", "ne"], [bools(3, 4), bools(3, 4)], lambda a, b: (a == b, a != b))
case("compare_bool", ["lt", "gt", "le", "ge"], [bools(3, 4), bools(3, 4)],
     lambda a, b: (a < b, a > b, a <= b, a >= b))
case("gt_int_float_scalar", ["gt", "lt"], [ints(3, 4)], lambda i: (i > 2.5, i < 3.5))
for op in ("logical_and", "logical_or", "logical_xor"):
    case(op, [op], [bools(3, 4), bools(3, 4)], getattr(torch, op))
    case(op + "_float", [op], [grid(3, 4, low=-1, high=1), f32(4)], getattr(torch, op))
    case(op + "_", [op + "_"], [bools(3, 4), bools(3, 4)],
         lambda a, b, op=op: getattr(a.clone(), op + "_")(b))
    case(op + "__float", [op + "_"], [grid(3, 4, low=-1, high=1), bools(3, 4)],
         lambda x, b, op=op: getattr(x * 1, op + "_")(b))
case("logical_not", ["logical_not"], [bools(3, 4)], torch.logical_not)
case("logical_not_float", ["logical_not"], [grid(3, 4, low=-1, high=1)], torch.logical_not)
case("logical_not_", ["logical_not_"], [bools(3, 4)], lambda a: a.clone().logical_not_())
case("logical_not__float", ["logical_not_"], [grid(3, 4, low=-1, high=1)], lambda x: (x * 1).logical_not_())
for name, fn in [("and", lambda a, b: a & b), ("or", lambda a, b: a | b), ("xor", lambda a, b: a ^ b)]:
    case(f"__{name}__", [f"__{name}__"], [bools(3, 4), bools(3, 4)], fn)
    case(f"__i{name}__", [f"__i{name}__"], [bools(3, 4), bools(3, 4)],
         lambda a, b, name=name: getattr(a.clone(), f"__i{name}__")(b))
    case(f"bitwise_{name}", [f"bitwise_{name}"], [bools(3, 4), bools(4)],
         getattr(torch, f"bitwise_{name}"))
    case(f"bitwise_{name}_", [f"bitwise_{name}_"], [bools(3, 4), bools(3, 4)],
         lambda a, b, name=name: getattr(a.clone(), f"bitwise_{name}_")(b))
    case(f"bitwise_{name}_int", [f"bitwise_{name}"], [ints(3, 4), ints(3, 4)],
         getattr(torch, f"bitwise_{name}"), opsets=NEW_OPSETS, fails={17: "integer bitwise ops need ONNX opset 18"})
    case(f"__{name}___int_bool", [f"__{name}__"], [ints(3, 4), bools(4)], fn, opsets=NEW_OPSETS)
case("bitwise_not", ["bitwise_not"], [bools(3, 4)], lambda a: ~a)
case("bitwise_not_", ["bitwise_not_"], [bools(3, 4)], lambda a: a.clone().bitwise_not_())
case("bitwise_not_int", ["bitwise_not"], [ints(3, 4)], torch.bitwise_not,
     opsets=NEW_OPSETS, fails={17: "only exported for bool tensors"})
case("where", ["where"], [bools(3, 4), f32(3, 4), f32(3, 4)], torch.where)
case("where_broadcast", ["where", "gt"], [f32(3, 4), f32(4)], lambda x, y: torch.where(x > 0, x, y))
case("where_scalar", ["where", "gt"], [f32(3, 4)], lambda x: torch.where(x > 0, x, 0.5))
case("where_int_float", ["where"], [bools(3, 4), ints(3, 4), f32(3, 4)], torch.where)
case("where_int_scalar", ["where"], [bools(3, 4), ints(3, 4)], lambda m, i: torch.where(m, i, 0))
case("where_two_numbers", ["where"], [bools(3, 4)],
     lambda m: (torch.where(m, 0, 1.0), torch.where(m, 2, 3), torch.where(m, 1.5, 2.5)))
case("masked_fill", ["masked_fill"], [f32(3, 4), bools(3, 4)], lambda x, m: x.masked_fill(m, 2.5))
case("masked_fill_broadcast", ["masked_fill"], [f32(2, 3, 4), bools(4)], lambda x, m: x.masked_fill(m, -1.0))
case("masked_fill_tensor_value", ["masked_fill"], [f32(3, 4)], lambda x: x.masked_fill(x > 0, x[0, 0]))
case("masked_fill_int", ["masked_fill"], [ints(3, 4), bools(3, 4)], lambda i, m: i.masked_fill(m, 7))
case("masked_fill_int_float_value", ["masked_fill"], [ints(3, 4), bools(3, 4)], lambda i, m: i.masked_fill(m, 2.7))
case("masked_fill_", ["masked_fill_"], [f32(3, 4), bools(3, 4)], lambda x, m: (x * 1).masked_fill_(m, 0.0))


def with_nan_inf(x):
    """x with nan where x > 1, +inf where x < -1 and -inf where -0.2 < x < 0."""
    x = torch.where(x > 1, float("nan"), x)
    x = torch.where(x < -1, float("inf"), x)
    return torch.where((x < 0) & (x > -0.2), float("-inf"), x)


# ---- shifts and `not`

case("lshift_int_scalar", ["__lshift__"], [ints(3, 4, low=-9, high=9)], lambda i: i << 3)
case("lshift_int_tensor", ["__lshift__"], [ints(3, 4, low=-9, high=9), ints(4, high=5)], lambda i, s: i << s)
case("rshift_int_scalar", ["__rshift__"], [ints(3, 4, low=-40, high=40)], lambda i: i >> 2)
case("rshift_int_tensor", ["__rshift__"], [ints(3, 4, low=-40, high=40), ints(3, 4, high=5)], lambda i, s: i >> s)
case("rshift_int32", ["__rshift__"], [ints(3, 4, low=-40, high=40, dtype=torch.int32)], lambda i: i >> 3)
case("shift_uint8", ["__lshift__", "__rshift__"], [ints(3, 4, high=255, dtype=torch.uint8)],
     lambda u: (u << 2, u >> 3), since=11, fails={9: "supported from opset 11"})
case("ilshift", ["__ilshift__"], [ints(3, 4, low=-9, high=9)], lambda i: i.clone().__ilshift__(2))
case("irshift", ["__irshift__"], [ints(3, 4, low=-40, high=40)], lambda i: i.clone().__irshift__(2))
case("bitwise_left_shift", ["bitwise_left_shift"], [ints(3, 4, low=-9, high=9), ints(3, 4, high=4)],
     torch.bitwise_left_shift)
case("bitwise_left_shift_", ["bitwise_left_shift_"], [ints(3, 4, low=-9, high=9)],
     lambda i: i.clone().bitwise_left_shift_(1))
case("bitwise_right_shift", ["bitwise_right_shift"], [ints(3, 4, low=-40, high=40), ints(3, 4, high=4)],
     torch.bitwise_right_shift)
case("bitwise_right_shift_", ["bitwise_right_shift_"], [ints(3, 4, low=-40, high=40)],
     lambda i: i.clone().bitwise_right_shift_(2))


def s_not(x: Tensor):
    return x * float(not bool(x[0, 0] > 0))


case("not", ["__not__"], [f32(2, 3)], s_not, script=True)

# ---- nan / inf classification

case("isnan", ["isnan"], [f32(3, 4)], lambda x: torch.isnan(with_nan_inf(x)))
case("isnan_int", ["isnan"], [ints(3, 4)], torch.isnan)
case("isinf", ["isinf"], [f32(3, 4)], lambda x: torch.isinf(with_nan_inf(x)))
case("isinf_f64", ["isinf"], [f64(3, 4)], lambda x: torch.isinf(with_nan_inf(x)))
case("isinf_int", ["isinf"], [ints(3, 4)], torch.isinf)
case("isposinf_isneginf", ["isposinf", "isneginf"], [f32(3, 4)],
     lambda x: (torch.isposinf(with_nan_inf(x)), torch.isneginf(with_nan_inf(x))))
case("isfinite", ["isfinite"], [f32(3, 4)], lambda x: torch.isfinite(with_nan_inf(x)))
case("isfinite_int", ["isfinite"], [ints(3, 4)], torch.isfinite)
def signed_zeros(x):
    """x with its small elements replaced by zeros of their sign (-0.0 for negative ones)."""
    return x * (x.abs() >= 0.3).float()


case("signbit", ["signbit"], [f32(3, 4)], lambda x: torch.signbit(signed_zeros(x)))
case("signbit_int", ["signbit"], [ints(3, 4, low=-4, high=4)], torch.signbit)
case("nan_to_num", ["nan_to_num"], [f32(3, 4)], lambda x: torch.nan_to_num(with_nan_inf(x)))
case("nan_to_num_values", ["nan_to_num"], [f32(3, 4)],
     lambda x: torch.nan_to_num(with_nan_inf(x), nan=7.0, posinf=100.0, neginf=-50.0))
case("nan_to_num_int", ["nan_to_num"], [ints(3, 4)], lambda i: torch.nan_to_num(i) + 1)
case("nan_to_num_", ["nan_to_num_"], [f32(3, 4)], lambda x: with_nan_inf(x).nan_to_num_(1.0, 2.0, 3.0))

# ---- min/max, interpolation, fused arithmetic

case("maximum", ["maximum"], [f32(3, 4), f32(4)], torch.maximum)
case("minimum", ["minimum"], [f32(3, 4), f32(3, 1)], torch.minimum)
case("maximum_int", ["maximum", "minimum"], [ints(3, 4, low=-5, high=5), ints(3, 4, low=-5, high=5)],
     lambda i, j: (torch.maximum(i, j), torch.minimum(i, j)))
case("maximum_bool", ["maximum", "minimum"], [bools(3, 4), bools(3, 4)],
     lambda a, b: (torch.maximum(a, b), torch.minimum(a, b)))
case("maximum_promote", ["maximum"], [ints(3, 4, low=-5, high=5), f32(3, 4)], torch.maximum)
case("fmax_fmin", ["fmax", "fmin"], [f32(3, 4), f32(3, 4)],
     lambda x, y: (torch.fmax(torch.where(x > 1, float("nan"), x), y),
                   torch.fmin(x, torch.where(y > 1, float("nan"), y))))
case("lerp_scalar", ["lerp"], [f32(3, 4), f32(3, 4)], lambda a, b: (torch.lerp(a, b, 0.3), torch.lerp(a, b, 0.8)))
case("lerp_tensor", ["lerp"], [f32(3, 4), f32(3, 4), f32(3, 4, low=-0.5, high=1.5)], torch.lerp)
case("lerp_", ["lerp_"], [f32(3, 4), f32(3, 4)], lambda a, b: a.clone().lerp_(b, 0.25))
case("addcmul", ["addcmul"], [f32(3, 4), f32(3, 4), f32(4)], lambda x, a, b: torch.addcmul(x, a, b, value=0.5))
case("addcmul_", ["addcmul_"], [f32(3, 4), f32(3, 4), f32(3, 4)], lambda x, a, b: x.clone().addcmul_(a, b))
case("addcdiv", ["addcdiv"], [f32(3, 4), f32(3, 4), nonzero(3, 4)], lambda x, a, b: torch.addcdiv(x, a, b, value=2))
case("addcdiv_", ["addcdiv_"], [f32(3, 4), f32(3, 4), nonzero(3, 4)], lambda x, a, b: x.clone().addcdiv_(a, b))


def s_floordiv(x: Tensor):
    n = x.size(0) // 2
    m = float(x.size(1)) // 1.5
    k = -x.size(1) // 2
    return x * n + m + k


case("floordiv", ["floordiv"], [f32(5, 4)], s_floordiv, script=True)

# ---- special functions (unary)

unary("exp2", torch.exp2, [f32(3, 4)], inplace=lambda x: x.exp2_())
case("exp2_int", ["exp2"], [ints(3, 4)], torch.exp2)
unary("erfc", torch.erfc, [f32(3, 4)], inplace=lambda x: x.erfc_())
unary("deg2rad", torch.deg2rad, [f32(3, 4, low=-360, high=360)], inplace=lambda x: x.deg2rad_())
unary("rad2deg", torch.rad2deg, [f32(3, 4)], inplace=lambda x: x.rad2deg_(), rtol=1e-3, atol=1e-4)
case("deg2rad_int", ["deg2rad"], [ints(3, 4, high=360)], torch.deg2rad)
unary("frac", torch.frac, [f32(3, 4, low=-5, high=5)], inplace=lambda x: x.frac_())
unary("sinc", lambda x: torch.sinc(x * (x.abs() > 0.5)), [f32(3, 4)], inplace=lambda x: x.sinc_())
unary("logit", torch.logit, [f32(3, 4, low=0.05, high=0.95)], inplace=lambda x: x.logit_())
case("logit_eps", ["logit"], [f32(3, 4, low=-0.5, high=1.5)], lambda x: torch.logit(x, eps=0.1))
case("special_ndtr", ["special_ndtr"], [f32(3, 4)], torch.special.ndtr)
case("special_log_ndtr", ["special_log_ndtr"], [f32(3, 4, low=-3, high=3)], torch.special.log_ndtr)
case("special_entr", ["special_entr"], [f32(3, 4, low=0, high=3)],
     lambda x: torch.special.entr(torch.where(x < 0.5, 0.0 * x, x)))
unary("sgn", torch.sgn, [grid(3, 4)], inplace=lambda x: x.sgn_())
case("sgn_int", ["sgn"], [ints(3, 4, low=-3, high=3)], torch.sgn)
case("positive", ["positive"], [f32(3, 4)], lambda x: torch.positive(x) * 2)
for fn in ("sinh", "cosh", "asinh", "atanh"):
    low, high = (-0.9, 0.9) if fn == "atanh" else (-2, 2)
    unary(fn, getattr(torch, fn), [f32(3, 4, low=low, high=high)],
          inplace=lambda x, fn=fn: getattr(x, fn + "_")())
unary("acosh", torch.acosh, [f32(3, 4, low=1, high=4)], inplace=lambda x: x.acosh_())
case("sinh_int", ["sinh"], [ints(3, 4, high=3)], torch.sinh)

# ---- special functions (binary)

case("xlogy", ["xlogy"], [grid(3, 4, low=-1, high=2), pos(3, 4)], torch.xlogy)
case("xlogy_zero", ["xlogy"], [grid(3, 4, low=0, high=1), f32(3, 4, low=0, high=2)],
     lambda x, y: torch.xlogy(x, torch.where(y < 0.5, 0.0 * y, y)))
case("xlogy_scalar", ["xlogy"], [pos(3, 4)], lambda y: torch.xlogy(2.0, y))
case("xlogy_", ["xlogy_"], [f32(3, 4), pos(3, 4)], lambda x, y: x.clone().xlogy_(y))
case("special_xlog1py", ["special_xlog1py"], [grid(3, 4), f32(3, 4, low=-0.5, high=2)], torch.special.xlog1py)
case("hypot", ["hypot"], [f32(3, 4), f32(4)], torch.hypot)
case("hypot_", ["hypot_"], [f32(3, 4), f32(3, 4)], lambda x, y: x.clone().hypot_(y))
case("logaddexp", ["logaddexp"], [f32(3, 4, low=-20, high=20), f32(3, 4, low=-20, high=20)], torch.logaddexp)
case("logaddexp2", ["logaddexp2"], [f32(3, 4, low=-20, high=20), f32(4)], torch.logaddexp2)
case("copysign", ["copysign"], [f32(3, 4), f32(3, 4)],
     lambda x, y: torch.copysign(x, signed_zeros(y)))
case("copysign_int", ["copysign"], [ints(3, 4, low=-4, high=4), ints(3, 4, low=-4, high=4)], torch.copysign)
case("copysign_", ["copysign_"], [f32(3, 4)], lambda x: x.clone().copysign_(-1.0))
case("atan2", ["atan2"], [f32(3, 4), f32(3, 4)], torch.atan2)
case("atan2_", ["atan2_"], [f32(3, 4), f32(3, 4)], lambda y, x: y.clone().atan2_(x))
case("heaviside", ["heaviside"], [grid(3, 4), f32(4)], torch.heaviside)
case("heaviside_", ["heaviside_"], [grid(3, 4), f32(3, 4)], lambda x, v: x.clone().heaviside_(v))
case("float_power", ["float_power"], [pos(3, 4), f32(3, 4)], torch.float_power)
case("float_power_", ["float_power_"], [f64(3, 4, low=0.1, high=3)], lambda x: x.clone().float_power_(2))
case("ldexp", ["ldexp"], [f32(3, 4), ints(3, 4, low=-3, high=4)], torch.ldexp)
case("ldexp_", ["ldexp_"], [f32(3, 4), ints(4, high=3)], lambda x, e: x.clone().ldexp_(e))

# ---- piecewise activations

case("hardshrink", ["hardshrink"], [halves(3, 4)], lambda x: (F.hardshrink(x), F.hardshrink(x, 1.0)))
case("softshrink", ["softshrink"], [halves(3, 4)], lambda x: (F.softshrink(x), F.softshrink(x, 1.0)))
case("log_sigmoid", ["log_sigmoid"], [f32(3, 4, low=-30, high=30)], F.logsigmoid)
case("threshold", ["threshold"], [halves(3, 4)], lambda x: F.threshold(x, 0.5, -2.0))
case("threshold_int", ["threshold"], [ints(3, 4, low=-4, high=4)], lambda i: F.threshold(i, 1, -7))
case("threshold_", ["threshold_"], [halves(3, 4)], lambda x: F.threshold(x.clone(), 0.0, 3.0, inplace=True))
case("rrelu_eval", ["rrelu"], [f32(3, 4)], lambda x: F.rrelu(x, 0.1, 0.3))
case("rrelu_", ["rrelu_"], [f32(3, 4)], lambda x: F.rrelu(x.clone(), inplace=True))


def rrelu_training_bounds(x):
    """Random slopes: the model returns whether each negative output lies in [0.1, 0.3] * x."""
    ratio = F.rrelu(x, 0.1, 0.3, training=True) / x
    return (ratio >= 0.1 - 1e-6) & (ratio <= 0.3 + 1e-6)


case("rrelu_training", ["rrelu"], [f32(3, 4, low=-3, high=-0.5)], rrelu_training_bounds)
case("glu", ["glu"], [f32(4, 4, 6)], lambda x: (F.glu(x), F.glu(x, 1), F.glu(x, 0), F.glu(x, -2)))

# ---- torch.onnx 1.13's lowest opsets: lt/gt/prelu at 8 (Less/Greater-7 take floats only, so
# integers are compared as floats), remainder at 9 (no Mod before opset 10)

case("lt_gt_opset8", ["lt", "gt"], [grid(3, 4), grid(4)], lambda x, y: (x < y, x > y, x < 0.5), opsets=[8])
case("lt_gt_int_opset8", ["lt", "gt"], [ints(3, 4, high=3), ints(3, 4, high=3)],
     lambda i, j: (i < j, i > j, i > 1), opsets=[8])
case("prelu_opset8", ["prelu"], [f32(2, 3, 4, 5)], module=lambda: nn.PReLU(3, init=0.1), opsets=[8])
case("remainder_opset9", ["remainder"], [f32(3, 4, low=-6, high=6), nonzero(3, 4)],
     lambda x, y: (x % y, x % 1.5, x % -2.5), opsets=[9])
case("remainder_int_opset9", ["remainder"], [ints(3, 4, low=-9, high=9), nonzero_ints(3, 4)],
     lambda i, j: (i % j, i % 4, i % -3), opsets=[9])

NOT_IN_LIBTORCH = "torch 1.13 has no aten::{} operator ({}), so no loadable graph contains it; registered for " \
                  "parity with torch.onnx 1.13, which registers the name"
UNREACHABLE.update({
    "aten::tanhshrink": NOT_IN_LIBTORCH.format("tanhshrink", "F.tanhshrink is traced as aten::tanh and aten::sub"),
    "aten::_floor_divide": NOT_IN_LIBTORCH.format("_floor_divide", "x // y is aten::floor_divide"),
})
