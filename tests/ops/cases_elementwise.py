"""Rows for the elementwise pack's shifts, float classification, min/max, special functions and
piecewise activations (plugins/elementwise/{bitwise,float_classes,math,activations_extra}.cpp)."""
from op_cases import *  # noqa: F401,F403


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
