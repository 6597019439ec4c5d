"""The per-operator test table: one row per case, every registered op mapping exercised.

A row (see `case`) names the TorchScript ops it exercises, a tiny model, its inputs and the
opsets to export at. tests/ops/make_op_fixtures.py turns every row into a .pt (or .ir) file,
input and expected-output .npy files and a manifest; onnxport_export_cases exports each case at
each opset in one process and checks that every declared op really went through its registered
symbolic; ONNX Runtime then compares the outputs with eager PyTorch. ops.coverage fails for any
op registered by a built-in pack that no row declares.

Models come in three modes:
  trace   (default) `fn(*inputs)` or the module built by `module()`, traced with torch.jit.trace
  script  the module built by `module()` (or `fn` wrapped in Script1..Script3), torch.jit.script;
          for ops that only scripted graphs contain (aten::len, aten::__getitem__, aten::dim ...)
  ir      a TorchScript IR graph (`ir=`), for ops that TorchScript's alias normalization rewrites
          whenever Python code is traced, scripted or loaded (aten::divide -> aten::div ...):
          the mapping is still registered (graphs built in C++ keep them), so it is tested
          through a graph built directly from IR in the export process.
Ops are written "aten::relu" or just "relu" (the aten:: namespace is implied).

Inputs are generated per case from a fixed seed (crc32 of the case id), so adding a row never
changes another row's data. `fails={opset: "text"}` declares an expected failure: the export at
that opset must fail with an error containing the text (an op not supported below some opset, a
variant with no ONNX equivalent); it is never skipped silently.
"""
import zlib

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

OPSETS = (9, 11, 13, 14, 16, 17)
# Opsets a row may list explicitly (opsets=/fails=) but that rows do not get by default: 8 for the
# ops torch.onnx 1.13 maps from opset 8, 10 for forms that change at 10 or 11.
EXPLICIT_OPSETS = (8, 10)
DEFAULT_RTOL = 1e-3
DEFAULT_ATOL = 1e-5


# ---------------------------------------------------------------- input specs

class Input:
    """How to draw one example input: shape, dtype and value distribution."""

    def __init__(self, shape, dtype, draw):
        self.shape, self.dtype, self.draw = tuple(shape), dtype, draw

    def make(self, gen):
        return self.draw(self.shape, gen).to(self.dtype).contiguous()


def f32(*shape, low=None, high=None, dtype=torch.float32):
    """Standard normal values, or uniform in [low, high)."""
    if low is None:
        return Input(shape, dtype, lambda s, g: torch.randn(s, generator=g, dtype=torch.float64))
    return Input(shape, dtype,
                 lambda s, g: low + (high - low) * torch.rand(s, generator=g, dtype=torch.float64))


def f64(*shape, low=None, high=None):
    return f32(*shape, low=low, high=high, dtype=torch.float64)


def pos(*shape, low=0.1, high=3.0):
    """Positive floats (log, sqrt, pow bases)."""
    return f32(*shape, low=low, high=high)


def nonzero(*shape):
    """Floats with magnitude in [0.5, 2) and random sign (divisors, reciprocals)."""
    def draw(s, g):
        mag = 0.5 + 1.5 * torch.rand(s, generator=g, dtype=torch.float64)
        sign = torch.randint(0, 2, s, generator=g) * 2 - 1
        return mag * sign
    return Input(shape, torch.float32, draw)


def grid(*shape, low=-2, high=2, dtype=torch.float32):
    """Floats holding small integers: ties for comparisons and rounding, exact equality."""
    return Input(shape, dtype, lambda s, g: torch.randint(low, high + 1, s, generator=g).double())


def halves(*shape):
    """Floats k/2 (rounding ties) with random offsets of up to 0.3."""
    return Input(shape, torch.float32, lambda s, g: torch.randint(-6, 7, s, generator=g).double() / 2
                 + (torch.rand(s, generator=g, dtype=torch.float64) - 0.5) * 0.6 *
                 torch.randint(0, 2, s, generator=g))


def ints(*shape, low=0, high=8, dtype=torch.int64):
    """Integers in [low, high)."""
    return Input(shape, dtype, lambda s, g: torch.randint(low, high, s, generator=g))


def nonzero_ints(*shape, low=-6, high=7, dtype=torch.int64):
    """Integers in [low, high) except 0 (integer divisors)."""
    def draw(s, g):
        v = torch.randint(low, high - 1, s, generator=g)
        return torch.where(v >= 0, v + 1, v)
    return Input(shape, dtype, draw)


def bools(*shape):
    return Input(shape, torch.bool, lambda s, g: torch.randint(0, 2, s, generator=g))


# ---------------------------------------------------------------- model wrappers

class Fn(nn.Module):
    """forward(*inputs) = fn(*inputs): the traced model of most rows."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


class With(nn.Module):
    """forward(*inputs) = fn(self, *inputs) with submodules and tensor buffers as attributes."""

    def __init__(self, fn, **attrs):
        super().__init__()
        self.fn = fn
        for name, value in attrs.items():
            if isinstance(value, nn.Module):
                self.add_module(name, value)
            else:
                self.register_buffer(name, value)

    def forward(self, *xs):
        return self.fn(self, *xs)


# Scripted wrappers: TorchScript compiles a function attribute called from forward.
class Script1(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class Script2(Script1):
    def forward(self, x, y):
        return self.fn(x, y)


class Script3(Script1):
    def forward(self, x, y, z):
        return self.fn(x, y, z)


SCRIPT_WRAPPERS = {1: Script1, 2: Script2, 3: Script3}


# ---------------------------------------------------------------- the table

class Case:
    """One row of the table (built by `case`, which documents the fields)."""

    def __init__(self, id, ops, inputs, *, fn, module, mode, ir, opsets, fails, rtol, atol, training, via,
                 dynamic, dynamic_check=True):
        self.id = id
        self.ops = tuple(op if "::" in op else "aten::" + op for op in ops)
        self.inputs = tuple(inputs)
        self.fn, self.module, self.mode, self.ir = fn, module, mode, ir
        self.opsets = tuple(sorted(set(opsets) | set(fails)))
        self.fails = dict(fails)
        self.rtol, self.atol = rtol, atol
        self.training = training
        self.via = via
        self.dynamic = {int(k): sorted(v) for k, v in dynamic.items()}
        self.dynamic_check = dynamic_check

    @property
    def seed(self):
        return zlib.crc32(self.id.encode())

    def build(self):
        """The nn.Module to trace/script (call under the case's seed)."""
        if self.module is not None:
            return self.module()
        if self.mode == "script":
            return SCRIPT_WRAPPERS[len(self.inputs)](self.fn)
        return Fn(self.fn)


CASES = []


def case(id, ops, inputs, fn=None, *, module=None, script=False, ir=None, since=9, opsets=None,
         fails=None, rtol=None, atol=None, training=False, via="file", dynamic=None, dynamic_check=True):
    """Add one row. `since` drops the opsets below an op's first mapping; `opsets` lists them
    explicitly; `fails` adds expected-failure opsets; `training` exports in training mode;
    via="function" exports through Exporter::export_function (the C++ tracer running the saved
    module, no freezing) instead of export_file; `dynamic` = {input index: [axes]} exports those
    axes as dynamic (dynamic_axes), so symbolics take their unknown-size branches; dynamic_check=False
    for models that only run at the example's sizes (the export's re-run at other sizes would fail)."""
    if isinstance(ops, str):
        ops = [ops]
    if sum(x is not None for x in (fn, module, ir)) != 1:
        raise ValueError(f"case {id}: give exactly one of fn, module, ir")
    if via not in ("file", "function") or (via == "function" and ir is not None):
        raise ValueError(f"case {id}: via is 'file' or 'function' (not for IR rows)")
    mode = "ir" if ir is not None else "script" if script else "trace"
    chosen = opsets if opsets is not None else [o for o in OPSETS if o >= since]
    CASES.append(Case(id, ops, inputs, fn=fn, module=module, mode=mode, ir=ir, opsets=chosen, fails=fails or {},
                      rtol=rtol, atol=atol, training=training, via=via, dynamic=dynamic or {},
                      dynamic_check=dynamic_check))


def unary(name, fn, inputs, inplace=None, **kw):
    """A unary op and, with `inplace` (a function of a fresh tensor), its in-place form."""
    case(name, [name], inputs, fn, **kw)
    if inplace is not None:
        case(name + "_", [name + "_"], inputs, lambda x: inplace(x * 1), **kw)


# Registered ops no graph that reaches the converter can contain, with the reason. ops.coverage
# accepts these (and prints them) instead of a row; it fails if one is also exercised by a row.
UNREACHABLE = {
    "prim::TupleConstruct": "the core's LowerAllTuples pass removes every tuple (graph outputs are flattened) "
                            "or fails before conversion",
    "prim::TupleUnpack": "the core's LowerAllTuples pass removes every tuple or fails before conversion",
    "prim::TupleIndex": "the core's LowerAllTuples pass removes every tuple or fails before conversion; "
                        "TorchScript rejects non-constant tuple indices",
    "aten::softsign": "torch 1.13 has no aten::softsign operator (F.softsign is traced as abs/add/div), so "
                      "no runnable graph contains it",
}

# ---- prim: scalars, lists, shapes, dtype changes

case("size_view", ["size", "prim::ListConstruct", "view"],
     [f32(2, 3, 4)], lambda x: x.view(x.size(0), -1))
case("size_neg_dim", ["size", "view"], [f32(2, 3, 4)], lambda x: x.view(-1, x.size(-1)))
case("size_arith", ["size", "prim::NumToTensor", "Int", "floor_divide", "mul"], [f32(2, 3, 4)],
     lambda x: x.view(x.size(0) * x.size(1), x.size(2) // 2, -1))
case("num_to_tensor_add", ["prim::NumToTensor", "add"], [f32(2, 3)], lambda x: x + x.size(0))


def s_size_list(x: Tensor):
    a, b, c = x.size()
    return x.view(a * b, c)


case("size_list_unpack", ["size", "prim::ListUnpack", "prim::ListConstruct"], [f32(2, 3, 4)],
     s_size_list, script=True)
case("chunk_list_unpack", ["chunk", "prim::ListUnpack"], [f32(2, 6)],
     lambda x: (lambda a, b, c: a * b - c)(*x.chunk(3, 1)))


def s_getitem_size(x: Tensor):
    return x * x.size()[-1]


def s_getitem_list(x: Tensor):
    return x.chunk(3, 1)[1] + x.split(2, 1)[-1]


def s_len(x: Tensor):
    return x * len(x.size()) + len(x.chunk(3, 1))


def s_dim(x: Tensor):
    return x * x.dim()


def s_float_int(x: Tensor):
    return x * float(x.size(1))


def s_float_tensor(x: Tensor):
    return x * float(x[0, 1])


def s_int_tensor(x: Tensor):
    return x * int(x[0, 1])


def s_bool(x: Tensor):
    return x * float(bool(x[0, 0] > 0.0)) + x * float(bool(x[0, 1] < 0.0))


def s_list_concat(x: Tensor):
    return x.expand(x.size() + x.size())


def s_len_tensor(x: Tensor):
    return x * len(x)


case("list_concat", ["add", "size", "expand"], [f32(2, 3)], s_list_concat, script=True)
case("len_tensor", ["len"], [f32(3, 2)], s_len_tensor, script=True)
case("getitem_size", ["__getitem__", "size"], [f32(2, 3)], s_getitem_size, script=True)
case("getitem_list", ["__getitem__", "chunk", "split"], [f32(2, 6)], s_getitem_list, script=True)
case("len", ["len", "size", "chunk"], [f32(2, 6)], s_len, script=True)
case("dim", ["dim"], [f32(2, 3, 4)], s_dim, script=True)
case("float_of_int", ["Float", "size"], [f32(2, 3)], s_float_int, script=True)
case("float_of_tensor", ["Float"], [f32(2, 3)], s_float_tensor, script=True)
case("int_of_tensor", ["Int"], [f32(2, 3, low=-4, high=4)], s_int_tensor, script=True)
case("bool", ["Bool", "Float"], [f32(2, 3)], s_bool, script=True)
case("scalar_implicit", ["ScalarImplicit", "clamp"], [f32(2, 3, 4)],
     lambda x: x.clamp(min=x[0, 0, 0], max=1.0))
case("tuple_outputs", ["add", "mul"], [f32(2, 3)], lambda x: (x + 1, (x * 2, x - 1)))
case("list_output", ["add", "mul"], [f32(2, 3)], lambda x: [x + 1, x * 2])
# Freezing (export_file/export_module) removes aten::detach; the C++ tracer keeps it.
case("detach", ["detach"], [f32(2, 3)], lambda x: x.detach() * 2, via="function")
case("contiguous", ["contiguous", "t"], [f32(3, 4)], lambda x: x.t().contiguous() + 1)
case("clone", ["clone"], [f32(2, 3)], lambda x: x.clone() * 3)
case("alias", ["alias"], [f32(2, 3)], lambda x: torch.ops.aten.alias(x) + 1)
case("lift_fresh", ["lift_fresh"], [f32(2, 3)], lambda x: torch.ops.aten.lift_fresh(x) - 1)
case("lift_fresh_copy", ["lift_fresh_copy"], [f32(2, 3)], lambda x: torch.ops.aten.lift_fresh_copy(x) * 2)
case("to_dtype", ["to"], [f32(2, 3, low=-5, high=5)],
     lambda x: (x.to(torch.int64), x.to(torch.float64), x.to(torch.int32), x.to(torch.bool)))
case("to_other", ["to"], [f32(2, 3, low=-5, high=5), ints(2, 3)],
     lambda x, i: (i.to(x), x.to(i)))
case("to_method_forms", ["to"], [f32(2, 3, low=-5, high=5)],
     lambda x: (x.long(), x.double(), x.int().float(), x.to("cpu", torch.float64)))
case("to_int_to_float", ["to"], [ints(2, 3)], lambda i: i.float() / 3)
case("type_as", ["type_as"], [f32(2, 3, low=-5, high=5), ints(2, 3)],
     lambda x, i: (x.type_as(i), i.type_as(x)))

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
case("add_int_0d_float", ["add"], [ints(2, 3), f32()], lambda i, s: i + s)
case("add_0d_0d", ["add"], [f32(), f32()], lambda a, b: a + b)
case("add_int_alpha", ["add"], [ints(2, 3), ints(2, 3)], lambda i, j: torch.add(i, j, alpha=2))
case("add_", ["add_"], [f32(2, 3), f32(3)], lambda x, y: (x * 1).add_(y, alpha=2))
case("sub", ["sub"], [f32(2, 3), f32(2, 3)], lambda x, y: x - y)
case("sub_alpha", ["sub"], [f32(2, 3), f32(1, 3)], lambda x, y: torch.sub(x, y, alpha=0.5))
case("sub_int", ["sub"], [ints(2, 3), ints(2, 3)], lambda i, j: i - j)
case("sub_", ["sub_"], [f32(2, 3), f32(2, 3)], lambda x, y: (x * 1).sub_(y))
case("rsub", ["rsub"], [f32(2, 3)], lambda x: 1 - x)
case("rsub_int", ["rsub"], [ints(2, 3)], lambda i: 10 - i)
case("rsub_alpha", ["rsub"], [f32(2, 3)], lambda x: torch.rsub(x, 2.0, alpha=3))
case("mul", ["mul"], [f32(2, 3, 4), f32(4)], lambda x, y: x * y)
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
unary("celu", lambda x: F.celu(x, 0.7), [f32(2, 3, 4)], inplace=lambda x: F.celu(x, 1.3, inplace=True),
      since=12, fails={11: "supported from opset 12"})
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
case("gelu", ["gelu"], [f32(2, 3, 4)], F.gelu)
case("gelu_tanh", ["gelu"], [f32(2, 3, 4)], lambda x: F.gelu(x, approximate="tanh"))
case("prelu", ["prelu"], [f32(2, 3, 4, 5)], module=lambda: nn.PReLU(3, init=0.1))
case("prelu_single", ["prelu"], [f32(2, 3, 4)], module=lambda: nn.PReLU(init=0.3))
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
         getattr(torch, f"bitwise_{name}"), opsets=[], fails={17: "integer bitwise ops need ONNX opset 18"})
case("bitwise_not", ["bitwise_not"], [bools(3, 4)], lambda a: ~a)
case("bitwise_not_", ["bitwise_not_"], [bools(3, 4)], lambda a: a.clone().bitwise_not_())
case("bitwise_not_int", ["bitwise_not"], [ints(3, 4)], torch.bitwise_not,
     opsets=[], fails={17: "only exported for bool tensors"})
case("where", ["where"], [bools(3, 4), f32(3, 4), f32(3, 4)], torch.where)
case("where_broadcast", ["where", "gt"], [f32(3, 4), f32(4)], lambda x, y: torch.where(x > 0, x, y))
case("where_scalar", ["where", "gt"], [f32(3, 4)], lambda x: torch.where(x > 0, x, 0.5))
case("where_int_float", ["where"], [bools(3, 4), ints(3, 4), f32(3, 4)], torch.where)
case("where_int_scalar", ["where"], [bools(3, 4), ints(3, 4)], lambda m, i: torch.where(m, i, 0))
case("masked_fill", ["masked_fill"], [f32(3, 4), bools(3, 4)], lambda x, m: x.masked_fill(m, 2.5))
case("masked_fill_broadcast", ["masked_fill"], [f32(2, 3, 4), bools(4)], lambda x, m: x.masked_fill(m, -1.0))
case("masked_fill_tensor_value", ["masked_fill"], [f32(3, 4)], lambda x: x.masked_fill(x > 0, x[0, 0]))
case("masked_fill_int", ["masked_fill"], [ints(3, 4), bools(3, 4)], lambda i, m: i.masked_fill(m, 7))
case("masked_fill_int_float_value", ["masked_fill"], [ints(3, 4), bools(3, 4)], lambda i, m: i.masked_fill(m, 2.7))
case("masked_fill_", ["masked_fill_"], [f32(3, 4), bools(3, 4)], lambda x, m: (x * 1).masked_fill_(m, 0.0))

# ---- alias ops TorchScript always normalizes away: TorchScript IR graphs

IR_BINARY = """graph(%x : Tensor, %y : Tensor):
  %z : Tensor = aten::{op}(%x, %y)
  return (%z)"""
IR_UNARY_2INTS = """graph(%x : Tensor):
  %a : int = prim::Constant[value={a}]()
  %b : int = prim::Constant[value={b}]()
  %z : Tensor = aten::{op}(%x, %a, %b)
  return (%z)"""
case("divide", ["divide"], [f32(2, 3), nonzero(2, 3)], ir=IR_BINARY.format(op="divide"))
case("divide_", ["divide_"], [f32(2, 3), nonzero(2, 3)], ir=IR_BINARY.format(op="divide_"))
case("divide_floor", ["divide"], [f32(2, 3, low=-6, high=6), nonzero(2, 3)], ir="""graph(%x : Tensor, %y : Tensor):
  %mode : str = prim::Constant[value="floor"]()
  %z : Tensor = aten::divide(%x, %y, %mode)
  return (%z)""")
case("true_divide", ["true_divide"], [ints(2, 3), nonzero_ints(2, 3)], ir=IR_BINARY.format(op="true_divide"))
case("true_divide_", ["true_divide_"], [f32(2, 3), nonzero(2, 3)], ir=IR_BINARY.format(op="true_divide_"))
case("multiply", ["multiply"], [f32(2, 3), f32(3)], ir=IR_BINARY.format(op="multiply"))
case("multiply_", ["multiply_"], [f32(2, 3), f32(2, 3)], ir=IR_BINARY.format(op="multiply_"))
case("subtract", ["subtract"], [f32(2, 3), f32(2, 3)], ir="""graph(%x : Tensor, %y : Tensor):
  %alpha : float = prim::Constant[value=2.]()
  %z : Tensor = aten::subtract(%x, %y, %alpha)
  return (%z)""")
case("subtract_", ["subtract_"], [f32(2, 3), f32(2, 3)], ir="""graph(%x : Tensor, %y : Tensor):
  %alpha : int = prim::Constant[value=1]()
  %z : Tensor = aten::subtract_(%x, %y, %alpha)
  return (%z)""")
case("clip", ["clip"], [f32(3, 4)], ir="""graph(%x : Tensor):
  %lo : float = prim::Constant[value=-0.3]()
  %hi : float = prim::Constant[value=0.4]()
  %z : Tensor = aten::clip(%x, %lo, %hi)
  return (%z)""")
case("clip_", ["clip_"], [f32(3, 4)], ir="""graph(%x : Tensor):
  %lo : float = prim::Constant[value=-0.3]()
  %none : NoneType = prim::Constant()
  %z : Tensor = aten::clip_(%x, %lo, %none)
  return (%z)""")
case("swapaxes", ["swapaxes"], [f32(2, 3, 4)], ir=IR_UNARY_2INTS.format(op="swapaxes", a=0, b=-1))
case("swapdims", ["swapdims"], [f32(2, 3, 4)], ir=IR_UNARY_2INTS.format(op="swapdims", a=2, b=1))
case("concat", ["concat", "prim::ListConstruct"], [f32(2, 3), f32(2, 5)], ir="""graph(%x : Tensor, %y : Tensor):
  %dim : int = prim::Constant[value=-1]()
  %l : Tensor[] = prim::ListConstruct(%x, %y)
  %z : Tensor = aten::concat(%l, %dim)
  return (%z)""")

# ---- tensor: shapes

case("view", ["view"], [f32(2, 3, 4)], lambda x: x.view(4, 6))
case("view_infer", ["view"], [f32(2, 3, 4)], lambda x: x.view(-1, 2, 2))
case("view_infer_middle", ["view"], [f32(2, 3, 4)], lambda x: x.view(2, -1, 3))
case("view_0d", ["view"], [f32()], lambda x: (x.view(1), x.view(1, 1)))
case("reshape_to_0d", ["reshape"], [f32(1, 1)], lambda x: x.reshape(()))
case("reshape", ["reshape"], [f32(2, 3, 4)], lambda x: x.reshape(3, 2, 4))
case("reshape_dynamic", ["reshape", "size"], [f32(2, 3, 4)], lambda x: x.reshape(x.size(0), -1))
case("view_as", ["view_as"], [f32(2, 3, 4), f32(6, 4)], lambda x, y: x.view_as(y))
case("reshape_as", ["reshape_as"], [f32(2, 3, 4), f32(4, 6)], lambda x, y: x.reshape_as(y))
case("flatten", ["flatten"], [f32(2, 3, 4, 5)],
     lambda x: (torch.flatten(x, 1), torch.flatten(x), torch.flatten(x, 1, 2), torch.flatten(x, 0, 2),
                torch.flatten(x, 2), torch.flatten(x, -2, -1), torch.flatten(x, 0, 0)))
case("flatten_1d", ["flatten"], [f32(5)], lambda x: torch.flatten(x) * 2)
case("t", ["t"], [f32(3, 4)], lambda x: x.t())
case("t_1d", ["t"], [f32(4)], lambda x: x.t() + 1)
case("t_", ["t_"], [f32(3, 4)], lambda x: (x * 1).t_())
case("transpose", ["transpose"], [f32(2, 3, 4)], lambda x: x.transpose(0, 1))
case("transpose_neg", ["transpose"], [f32(2, 3, 4, 5)], lambda x: x.transpose(-1, 1))
case("transpose_", ["transpose_"], [f32(2, 3, 4)], lambda x: (x * 1).transpose_(2, 0))
case("permute", ["permute"], [f32(2, 3, 4, 5)], lambda x: x.permute(2, 0, 3, 1))
case("permute_neg", ["permute"], [f32(2, 3, 4)], lambda x: x.permute(-1, 0, -2))
case("unsqueeze", ["unsqueeze"], [f32(2, 3)], lambda x: (x.unsqueeze(0), x.unsqueeze(-1), x.unsqueeze(1)))
case("unsqueeze_", ["unsqueeze_"], [f32(2, 3)], lambda x: (x * 1).unsqueeze_(-2))
case("unsqueeze_0d", ["unsqueeze"], [f32()], lambda x: (x.unsqueeze(0), x.unsqueeze(-1)))
case("unsqueeze_neg_first", ["unsqueeze"], [f32(2, 3)], lambda x: x.unsqueeze(-3))
case("squeeze", ["squeeze"], [f32(2, 1, 3, 1)], lambda x: (x.squeeze(), x.squeeze(1), x.squeeze(-1), x.squeeze(0)))
case("squeeze_", ["squeeze_"], [f32(2, 1, 3)], lambda x: (x * 1).squeeze_(1))
case("squeeze__all", ["squeeze_"], [f32(1, 2, 1, 3)], lambda x: (x * 1).squeeze_())
case("expand", ["expand"], [f32(1, 2, 1)], lambda x: x.expand(3, -1, 4))
case("expand_new_dims", ["expand"], [f32(3, 1)], lambda x: x.expand(2, 3, 4))
case("expand_0d", ["expand"], [f32()], lambda x: x.expand(3, 4))
case("expand_as", ["expand_as"], [f32(1, 2, 1), f32(3, 2, 4)], lambda x, y: x.expand_as(y))
case("repeat", ["repeat"], [f32(2, 3)], lambda x: x.repeat(2, 1, 3))
case("repeat_same_rank", ["repeat"], [f32(2, 3)], lambda x: x.repeat(3, 2))
case("numel", ["numel"], [f32(2, 3)], lambda x: x * x.numel())

# ---- tensor: indexing

case("slice", ["slice"], [f32(2, 4, 6)], lambda x: x[:, 1:3, 1:])
case("slice_step", ["slice"], [f32(2, 4, 6)], lambda x: x[:, 1:3, ::2],
     since=10, fails={9: "Slice with steps other than 1 needs opset 10"})
case("slice_negative", ["slice"], [f32(2, 4, 6)], lambda x: x[:, -3:, 1:-1])
case("slice_open_ended", ["slice"], [f32(2, 4, 6)], lambda x: (x[..., 2:], x[:, :2]))
case("slice_out_of_range", ["slice"], [f32(2, 4, 6)], lambda x: (x[:, :100], x[:, -100:2], x[:, 3:-10]))
case("slice_dynamic_end", ["slice", "size"], [f32(2, 6)], lambda x: x[:, : x.size(1) // 2],
     since=10, fails={9: "Slice with bounds computed at run time needs opset 10"}, dynamic={0: [1]})
case("select", ["select"], [f32(2, 4, 6)], lambda x: (x[1], x[:, 2], x[..., -1]))
case("narrow", ["narrow"], [f32(2, 4, 6)], lambda x: (x.narrow(1, 1, 2), x.narrow(-1, 3, 3)))
case("narrow_negative_start", ["narrow"], [f32(2, 4, 6)], lambda x: (x.narrow(1, -2, 2), x.narrow(2, -3, 2)))
case("select_1d", ["select"], [f32(5)], lambda x: (x[2], x[-1]))
case("index_select", ["index_select"], [f32(3, 4, 5), ints(3, high=4)],
     lambda x, i: x.index_select(1, i))
case("index_select_const", ["index_select"], [f32(3, 4, 5)],
     lambda x: x.index_select(-1, torch.tensor([4, 0, 2])))
case("index_select_int32", ["index_select"], [f32(3, 4), ints(5, high=3, dtype=torch.int32)],
     lambda x, i: x.index_select(0, i))

# ---- tensor: joining and splitting

case("cat", ["cat", "prim::ListConstruct"], [f32(2, 3), f32(2, 5)], lambda x, y: torch.cat([x, y], 1))
case("cat_neg_dim", ["cat"], [f32(2, 3, 4), f32(2, 3, 2)], lambda x, y: torch.cat((x, y), -1))
case("cat_three", ["cat"], [f32(1, 3), f32(2, 3), f32(3, 3)], lambda x, y, z: torch.cat([x, y, z]))
case("cat_int", ["cat"], [ints(2, 3), ints(1, 3)], lambda i, j: torch.cat([i, j], 0))
case("cat_mixed_dtypes", ["cat"], [ints(2, 3), f32(1, 3)], lambda i, x: torch.cat([i, x], 0))
case("stack_0d", ["stack"], [f32(), f32()], lambda a, b: torch.stack([a, b]))
case("stack", ["stack"], [f32(2, 3), f32(2, 3)], lambda x, y: (torch.stack([x, y]), torch.stack([x, y], 1)))
case("stack_neg_dim", ["stack"], [f32(2, 3), f32(2, 3), f32(2, 3)], lambda x, y, z: torch.stack([x, y, z], -1))
case("chunk", ["chunk"], [f32(2, 6)], lambda x: x.chunk(3, 1))
case("chunk_uneven", ["chunk"], [f32(5, 2)], lambda x: x.chunk(3))
case("chunk_neg_dim", ["chunk"], [f32(2, 3, 4)], lambda x: x.chunk(2, -1))
case("chunk_more_than_size", ["chunk"], [f32(2, 3)], lambda x: x.chunk(4, 1))
case("unsafe_chunk", ["unsafe_chunk"], [f32(2, 3, 4)], lambda x: torch.unsafe_chunk(x, 2, 2))
case("split", ["split"], [f32(2, 5)], lambda x: x.split(2, 1))
case("split_even", ["split"], [f32(6, 2)], lambda x: x.split(3))
case("split_larger_than_dim", ["split"], [f32(2, 5)], lambda x: x.split(10, 1))
case("split_with_sizes", ["split_with_sizes"], [f32(2, 5)], lambda x: x.split([1, 4], 1))
case("split_with_sizes_neg", ["split_with_sizes"], [f32(2, 3, 6)], lambda x: torch.split(x, [3, 1, 2], -1))
case("unsafe_split", ["unsafe_split"], [f32(2, 3, 4)], lambda x: torch.unsafe_split(x, 3, 2))
case("unsafe_split_with_sizes", ["unsafe_split_with_sizes"], [f32(2, 3, 4)],
     lambda x: torch.unsafe_split_with_sizes(x, [1, 3], 2))
case("unbind", ["unbind"], [f32(2, 3, 4)], lambda x: x.unbind(1))
case("unbind_sum", ["unbind", "prim::ListUnpack"], [f32(3, 4)],
     lambda x: sum(t * (i + 1) for i, t in enumerate(x.unbind(0))))
case("unbind_neg", ["unbind"], [f32(2, 3)], lambda x: torch.unbind(x, -1))

# ---- nn: convolution

CONV_RTOL = dict(rtol=1e-3, atol=1e-4)
case("conv2d", ["_convolution"], [f32(1, 4, 8, 8)], module=lambda: nn.Conv2d(4, 6, 3, padding=1), **CONV_RTOL)
case("conv2d_strided_dilated_groups", ["_convolution"], [f32(2, 4, 9, 9)],
     module=lambda: nn.Conv2d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2, bias=False), **CONV_RTOL)
case("conv2d_depthwise", ["_convolution"], [f32(1, 4, 6, 6)],
     module=lambda: nn.Conv2d(4, 8, 3, groups=4, padding=(0, 1)), **CONV_RTOL)
case("conv2d_asymmetric", ["_convolution"], [f32(1, 2, 7, 9)],
     module=lambda: nn.Conv2d(2, 3, (3, 2), stride=(2, 1), padding=(1, 0)), **CONV_RTOL)
case("conv1d", ["_convolution"], [f32(1, 2, 9)], module=lambda: nn.Conv1d(2, 3, 3, stride=2), **CONV_RTOL)
case("conv3d", ["_convolution"], [f32(1, 2, 4, 5, 4)], module=lambda: nn.Conv3d(2, 3, 2, padding=1), **CONV_RTOL)
case("conv_transpose2d", ["_convolution"], [f32(1, 4, 5, 5)],
     module=lambda: nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1, groups=2), **CONV_RTOL)
case("conv_transpose1d", ["_convolution"], [f32(1, 3, 6)],
     module=lambda: nn.ConvTranspose1d(3, 2, 4, stride=2, padding=1), **CONV_RTOL)
case("conv_transpose3d", ["_convolution"], [f32(1, 2, 3, 3, 3)],
     module=lambda: nn.ConvTranspose3d(2, 2, 2, stride=2, bias=False), **CONV_RTOL)
case("conv2d_same", ["_convolution_mode"], [f32(1, 2, 7, 7)],
     module=lambda: nn.Conv2d(2, 3, 4, padding="same"), **CONV_RTOL)
case("conv1d_same_dilated", ["_convolution_mode"], [f32(1, 2, 10)],
     module=lambda: nn.Conv1d(2, 3, 3, padding="same", dilation=2), **CONV_RTOL)
case("conv2d_valid", ["_convolution_mode"], [f32(1, 2, 6, 6)],
     module=lambda: nn.Conv2d(2, 3, 3, padding="valid"), **CONV_RTOL)


class ConvFunctional(nn.Module):
    """Scripted F.convNd / F.conv_transposeNd: the aten::convNd nodes tracing never records."""

    def __init__(self, nd, transposed, cin=2, cout=4, k=3):
        super().__init__()
        shape = (cin, cout // 2) if transposed else (cout, cin // 2)
        self.weight = nn.Parameter(torch.randn(*shape, *([k] * nd)) * 0.3)
        self.bias = nn.Parameter(torch.randn(cout) * 0.1)
        self.nd = nd
        self.transposed = transposed

    def forward(self, x):
        if self.transposed:
            if self.nd == 1:
                return torch.conv_transpose1d(x, self.weight, self.bias, 2, 1, 1, 2)
            if self.nd == 2:
                return torch.conv_transpose2d(x, self.weight, self.bias, 2, 1, 1, 2)
            return torch.conv_transpose3d(x, self.weight, self.bias, 2, 1, 1, 2)
        if self.nd == 1:
            return torch.conv1d(x, self.weight, self.bias, 1, 1, 1, 2)
        if self.nd == 2:
            return torch.conv2d(x, self.weight, self.bias, 2, 1, 1, 2)
        return torch.conv3d(x, self.weight, self.bias, 1, 0, 2, 2)


class ConvSame(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3, 2, 2, 3) * 0.3)

    def forward(self, x):
        return torch.conv2d(x, self.weight, None, 1, "same")


for nd, shape in [(1, (1, 2, 7)), (2, (1, 2, 6, 6)), (3, (1, 2, 5, 5, 5))]:
    case(f"conv{nd}d_scripted", [f"conv{nd}d"], [f32(*shape)],
         module=lambda nd=nd: ConvFunctional(nd, False), script=True, **CONV_RTOL)
    case(f"conv_transpose{nd}d_scripted", [f"conv_transpose{nd}d"], [f32(*shape)],
         module=lambda nd=nd: ConvFunctional(nd, True), script=True, **CONV_RTOL)
case("conv2d_scripted_same", ["conv2d"], [f32(1, 2, 6, 5)], module=ConvSame, script=True, **CONV_RTOL)

# ---- nn: pooling

case("max_pool2d", ["max_pool2d"], [f32(1, 2, 9, 9)], lambda x: F.max_pool2d(x, 3, 2))
case("max_pool2d_pad_ceil", ["max_pool2d"], [f32(1, 2, 10, 10)],
     lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True))
case("max_pool2d_dilation", ["max_pool2d"], [f32(1, 2, 7, 7)], lambda x: F.max_pool2d(x, 2, 1, dilation=2),
     since=11, fails={9: "with dilation needs opset 10"})
case("max_pool2d_rect", ["max_pool2d"], [f32(2, 1, 6, 8)], lambda x: F.max_pool2d(x, (2, 3), (1, 2)))
case("max_pool1d", ["max_pool1d"], [f32(1, 2, 8)], lambda x: F.max_pool1d(x, 2))
case("max_pool1d_ceil", ["max_pool1d"], [f32(1, 2, 9)], lambda x: F.max_pool1d(x, 2, ceil_mode=True))
case("max_pool3d", ["max_pool3d"], [f32(1, 2, 5, 5, 5)], lambda x: F.max_pool3d(x, 2, 2, 1))
case("avg_pool2d", ["avg_pool2d"], [f32(1, 2, 9, 9)],
     lambda x: (F.avg_pool2d(x, 3, 2, 1), F.avg_pool2d(x, 3, 2, 1, count_include_pad=False)))
case("avg_pool2d_ceil", ["avg_pool2d"], [f32(1, 2, 5, 5)],
     lambda x: (F.avg_pool2d(x, 2, 2, 1, ceil_mode=True),
                F.avg_pool2d(x, 2, 2, 1, ceil_mode=True, count_include_pad=False)))
case("avg_pool2d_divisor", ["avg_pool2d"], [f32(1, 2, 4, 4)], lambda x: F.avg_pool2d(x, 2, divisor_override=3),
     opsets=[], fails={13: "divisor_override has no ONNX equivalent"})
case("avg_pool1d", ["avg_pool1d"], [f32(1, 2, 8)], lambda x: (F.avg_pool1d(x, 3, 1), F.avg_pool1d(x, 2, 2, 1)))
case("avg_pool1d_ceil_exclude_pad", ["avg_pool1d"], [f32(1, 2, 7)],
     lambda x: F.avg_pool1d(x, 2, 2, 1, ceil_mode=True, count_include_pad=False))
case("max_pool2d_pad_tuple_stride_default", ["max_pool2d"], [f32(1, 2, 7, 6)],
     lambda x: F.max_pool2d(x, (3, 2), padding=(1, 0)))
case("avg_pool3d", ["avg_pool3d"], [f32(1, 2, 4, 5, 6)], lambda x: F.avg_pool3d(x, 2, 2))
case("adaptive_avg_pool2d", ["adaptive_avg_pool2d"], [f32(1, 2, 6, 6)],
     lambda x: (F.adaptive_avg_pool2d(x, (2, 3)), F.adaptive_avg_pool2d(x, 1), F.adaptive_avg_pool2d(x, (6, None))))
# Uneven adaptive windows (7 -> 3) have no ONNX pooling equivalent: a clear error, as in torch.onnx.
case("adaptive_avg_pool2d_uneven", ["adaptive_avg_pool2d"], [f32(1, 2, 7, 6)],
     lambda x: F.adaptive_avg_pool2d(x, (3, 4)), opsets=[], fails={o: "is not a multiple of output size" for o in (9, 17)})
case("adaptive_max_pool1d_uneven", ["adaptive_max_pool1d"], [f32(1, 2, 7)], lambda x: F.adaptive_max_pool1d(x, 3),
     opsets=[], fails={17: "is not a multiple of output size"})
case("adaptive_avg_pool1d", ["adaptive_avg_pool1d"], [f32(1, 2, 8)],
     lambda x: (F.adaptive_avg_pool1d(x, 4), F.adaptive_avg_pool1d(x, 1)))
case("adaptive_avg_pool3d", ["adaptive_avg_pool3d"], [f32(1, 2, 4, 4, 6)],
     lambda x: (F.adaptive_avg_pool3d(x, (2, 1, 3)), F.adaptive_avg_pool3d(x, 1)))
case("adaptive_max_pool2d", ["adaptive_max_pool2d"], [f32(1, 2, 6, 6)],
     lambda x: (F.adaptive_max_pool2d(x, (3, 1)), F.adaptive_max_pool2d(x, 1)))
case("adaptive_max_pool1d", ["adaptive_max_pool1d"], [f32(1, 2, 8)], lambda x: F.adaptive_max_pool1d(x, 2))
case("adaptive_max_pool3d", ["adaptive_max_pool3d"], [f32(1, 2, 4, 4, 4)],
     lambda x: (F.adaptive_max_pool3d(x, 2), F.adaptive_max_pool3d(x, 1)))

# ---- nn: normalization


def bn_with_stats(bn):
    with torch.no_grad():
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        if bn.affine:
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.5, 0.5)
    return bn.eval()


case("batch_norm2d", ["batch_norm"], [f32(2, 3, 4, 4)], module=lambda: bn_with_stats(nn.BatchNorm2d(3)))
case("batch_norm1d", ["batch_norm"], [f32(4, 3)], module=lambda: bn_with_stats(nn.BatchNorm1d(3)))
case("batch_norm1d_seq", ["batch_norm"], [f32(2, 3, 5)], module=lambda: bn_with_stats(nn.BatchNorm1d(3)))
case("batch_norm3d", ["batch_norm"], [f32(1, 2, 3, 3, 3)], module=lambda: bn_with_stats(nn.BatchNorm3d(2)))
case("batch_norm_no_affine", ["batch_norm"], [f32(2, 3, 4)],
     module=lambda: bn_with_stats(nn.BatchNorm1d(3, affine=False)))
case("batch_norm_batch_stats", ["batch_norm"], [f32(2, 3, 4, 4)],
     module=lambda: nn.BatchNorm2d(3, track_running_stats=False, affine=False))
case("instance_norm", ["instance_norm"], [f32(2, 3, 4, 4)], module=lambda: nn.InstanceNorm2d(3, affine=True))
case("instance_norm_plain", ["instance_norm"], [f32(2, 3, 5)], module=lambda: nn.InstanceNorm1d(3))
case("instance_norm_running_stats", ["instance_norm"], [f32(2, 3, 4, 4)],
     module=lambda: bn_with_stats(nn.InstanceNorm2d(3, affine=True, track_running_stats=True)))
case("batch_norm_training", ["batch_norm"], [f32(4, 3, 2, 2)], module=lambda: bn_with_stats(nn.BatchNorm2d(3)),
     training=True)
case("layer_norm", ["layer_norm"], [f32(2, 3, 4)], module=lambda: nn.LayerNorm([3, 4]))
case("layer_norm_last", ["layer_norm"], [f32(2, 3, 4)], lambda x: F.layer_norm(x, [4]))
case("layer_norm_affine", ["layer_norm"], [f32(2, 5)],
     module=lambda: With(lambda s, x: F.layer_norm(x, [5], s.w, s.b, 1e-3), w=torch.rand(5) + 0.5,
                         b=torch.randn(5)))
case("group_norm", ["group_norm"], [f32(2, 4, 3, 3)], module=lambda: nn.GroupNorm(2, 4))
case("group_norm_plain", ["group_norm"], [f32(2, 6, 5)], lambda x: F.group_norm(x, 3))
case("group_norm_extremes", ["group_norm"], [f32(2, 4, 3)], lambda x: (F.group_norm(x, 1), F.group_norm(x, 4)))

# ---- nn: linear algebra, embedding, shuffles, softmax

case("linear", ["linear"], [f32(3, 4)], module=lambda: nn.Linear(4, 5))
case("linear_3d_no_bias", ["linear"], [f32(2, 3, 4)], module=lambda: nn.Linear(4, 2, bias=False))
case("linear_1d", ["linear"], [f32(4)], module=lambda: nn.Linear(4, 3))
case("addmm", ["addmm"], [f32(3, 4), f32(4, 5), f32(5)], lambda a, b, c: torch.addmm(c, a, b))
case("addmm_beta_alpha", ["addmm"], [f32(3, 4), f32(4, 5), f32(3, 5)],
     lambda a, b, c: torch.addmm(c, a, b, beta=0.5, alpha=2.0))
case("addmm_beta0", ["addmm"], [f32(3, 4), f32(4, 5), f32(3, 5)],
     lambda a, b, c: torch.addmm(c, a, b, beta=0.0, alpha=1.5))
case("mm", ["mm"], [f32(3, 4), f32(4, 5)], torch.mm)
case("bmm", ["bmm"], [f32(2, 3, 4), f32(2, 4, 5)], torch.bmm)
case("matmul", ["matmul"], [f32(2, 3, 4), f32(4, 5)], torch.matmul)
case("matmul_batched_broadcast", ["matmul"], [f32(2, 1, 3, 4), f32(3, 4, 2)], torch.matmul)
case("matmul_vector", ["matmul"], [f32(3, 4), f32(4)], torch.matmul)
case("matmul_vector_matrix", ["matmul"], [f32(4), f32(4, 3)], torch.matmul)
case("matmul_vector_vector", ["matmul"], [f32(4), f32(4)], torch.matmul)
case("matmul_vector_batched", ["matmul"], [f32(4), f32(2, 4, 3)], torch.matmul)
case("embedding", ["embedding"], [ints(2, 3, high=10)], module=lambda: nn.Embedding(10, 4))
case("embedding_padding_idx", ["embedding"], [ints(2, 3, high=10)], module=lambda: nn.Embedding(10, 4, padding_idx=0))
case("embedding_1d", ["embedding"], [ints(5, high=6)],
     module=lambda: With(lambda s, i: F.embedding(i, s.w), w=torch.randn(6, 3)))
case("pixel_shuffle", ["pixel_shuffle"], [f32(1, 8, 3, 3)], lambda x: F.pixel_shuffle(x, 2))
case("pixel_shuffle_3", ["pixel_shuffle"], [f32(2, 9, 2, 3)], lambda x: F.pixel_shuffle(x, 3))
case("pixel_unshuffle", ["pixel_unshuffle"], [f32(1, 2, 4, 6)], lambda x: F.pixel_unshuffle(x, 2))
case("softmax", ["softmax"], [f32(2, 3, 4)], lambda x: (F.softmax(x, 1), F.softmax(x, -1), F.softmax(x, 0)))
case("softmax_dtype", ["softmax"], [f32(2, 3)], lambda x: F.softmax(x, 1, dtype=torch.float64))
case("softmax_int_input", ["softmax"], [ints(2, 3)], lambda i: F.softmax(i, 1, dtype=torch.float32))
case("log_softmax", ["log_softmax"], [f32(2, 3, 4)], lambda x: (F.log_softmax(x, 1), F.log_softmax(x, -1)))
case("log_softmax_dtype", ["log_softmax"], [f32(2, 3)], lambda x: F.log_softmax(x, 0, dtype=torch.float64))
case("_softmax", ["_softmax"], [f32(2, 3, 4)], lambda x: (torch._softmax(x, 1, False), torch._softmax(x, -1, False)))
case("_log_softmax", ["_log_softmax"], [f32(2, 3, 4)],
     lambda x: (torch._log_softmax(x, 2, False), torch._log_softmax(x, 0, False)))

# ---- nn: dropout (identity in eval; ONNX Dropout in a training export)

case("dropout", ["dropout"], [f32(2, 3, 4)], module=lambda: nn.Dropout(0.5).eval())
case("dropout_functional", ["dropout"], [f32(2, 3)], lambda x: F.dropout(x, 0.3, training=False) * 2)
case("dropout_", ["dropout_"], [f32(2, 3)], lambda x: F.dropout(x * 1, 0.3, training=False, inplace=True))
case("dropout_train_p0", ["dropout"], [f32(2, 3)], lambda x: F.dropout(x, 0.0, training=True) + 1,
     training=True)
case("dropout__train_p0", ["dropout_"], [f32(2, 3)],
     lambda x: F.dropout(x * 1, 0.0, training=True, inplace=True), training=True)
case("feature_dropout", ["feature_dropout"], [f32(2, 3, 4, 4)], module=lambda: nn.Dropout2d(0.2).eval())
case("feature_dropout_", ["feature_dropout_"], [f32(2, 3, 4, 4)],
     lambda x: F.dropout2d(x * 1, 0.2, training=False, inplace=True))
case("alpha_dropout", ["alpha_dropout"], [f32(2, 3)], module=lambda: nn.AlphaDropout(0.2).eval())
case("alpha_dropout_", ["alpha_dropout_"], [f32(2, 3)],
     lambda x: F.alpha_dropout(x * 1, 0.2, training=False, inplace=True))
case("feature_alpha_dropout", ["feature_alpha_dropout"], [f32(2, 3, 4)],
     module=lambda: nn.FeatureAlphaDropout(0.2).eval())
case("feature_alpha_dropout_", ["feature_alpha_dropout_"], [f32(2, 3, 4)],
     lambda x: F.feature_alpha_dropout(x * 1, 0.2, training=False, inplace=True))
case("feature_dropout_train", ["feature_dropout"], [f32(2, 3, 4, 4)],
     lambda x: F.dropout2d(x, 0.0, training=True), training=True,
     opsets=[], fails={13: "in training mode has no ONNX equivalent"})

# ---- rnn


class Seq(nn.Module):
    """An nn.LSTM/GRU/RNN called with an explicit initial state; returns output and states."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x, h0, c0=None):
        if c0 is None:
            out, h = self.rnn(x, h0)
            return out, h
        out, (h, c) = self.rnn(x, (h0, c0))
        return out, h, c


def rnn_inputs(kind, layers=1, bidirectional=False, batch_first=False, seq=5, batch=3, feat=4, hidden=6):
    d = 2 if bidirectional else 1
    x = f32(batch, seq, feat) if batch_first else f32(seq, batch, feat)
    state = [f32(layers * d, batch, hidden, low=-1, high=1)]
    return [x] + state * (2 if kind == "lstm" else 1)


def rnn_case(id, kind, op, layers=1, bidirectional=False, batch_first=False, bias=True, **kw):
    cls = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}[kind]
    case(id, [op], rnn_inputs(kind, layers, bidirectional, batch_first),
         module=lambda: Seq(cls(4, 6, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first,
                                bias=bias, **kw)).eval())


rnn_case("lstm", "lstm", "lstm")
rnn_case("lstm_2layer_dropout", "lstm", "lstm", layers=2, dropout=0.3)
rnn_case("lstm_bidirectional", "lstm", "lstm", bidirectional=True)
rnn_case("lstm_2layer_bidir_batch_first", "lstm", "lstm", layers=2, bidirectional=True, batch_first=True)
rnn_case("lstm_3layer_bidir_no_bias", "lstm", "lstm", layers=3, bidirectional=True, bias=False)
# Without an initial state the traced nn.LSTM creates it with aten::zeros, which no pack maps yet.
case("lstm_no_state", ["lstm", "zeros"], [f32(5, 3, 4)],
     module=lambda: With(lambda s, x: s.rnn(x)[0], rnn=nn.LSTM(4, 6, num_layers=2, bidirectional=True)))
rnn_case("gru", "gru", "gru")
rnn_case("gru_2layer_bidir_batch_first", "gru", "gru", layers=2, bidirectional=True, batch_first=True)
rnn_case("gru_no_bias", "gru", "gru", bias=False)
rnn_case("rnn_tanh", "rnn", "rnn_tanh", layers=2)
rnn_case("rnn_tanh_bidir", "rnn", "rnn_tanh", bidirectional=True)
rnn_case("rnn_relu_bidir_batch_first", "rnn", "rnn_relu", bidirectional=True, batch_first=True,
         nonlinearity="relu")
rnn_case("rnn_relu_2layer", "rnn", "rnn_relu", layers=2, nonlinearity="relu")
rnn_case("rnn_tanh_no_bias_batch_first", "rnn", "rnn_tanh", batch_first=True, bias=False)
rnn_case("lstm_batch_first", "lstm", "lstm", batch_first=True)
case("lstm_proj", ["lstm"], [f32(5, 3, 4), f32(1, 3, 3, low=-1, high=1), f32(1, 3, 6, low=-1, high=1)],
     module=lambda: Seq(nn.LSTM(4, 6, proj_size=3)).eval(), opsets=[], fails={17: "proj_size > 0"})


class CellWeights(nn.Module):
    """Weights of a hand-called RNN cell (tracing nn.LSTMCell & co. decomposes them)."""

    def __init__(self, gates, bias=True, feat=4, hidden=6):
        super().__init__()
        self.w_ih = nn.Parameter(torch.randn(gates * hidden, feat) * 0.4)
        self.w_hh = nn.Parameter(torch.randn(gates * hidden, hidden) * 0.4)
        self.b_ih = nn.Parameter(torch.randn(gates * hidden) * 0.4) if bias else None
        self.b_hh = nn.Parameter(torch.randn(gates * hidden) * 0.4) if bias else None


class LstmCell(CellWeights):
    def __init__(self, bias=True):
        super().__init__(4, bias)

    def forward(self, x, h, c):
        hc = torch.lstm_cell(x, [h, c], self.w_ih, self.w_hh, self.b_ih, self.b_hh)
        return hc[0], hc[1]


class GruCell(CellWeights):
    def __init__(self, bias=True):
        super().__init__(3, bias)

    def forward(self, x, h):
        return torch.gru_cell(x, h, self.w_ih, self.w_hh, self.b_ih, self.b_hh)


class RnnTanhCell(CellWeights):
    def __init__(self, bias=True):
        super().__init__(1, bias)

    def forward(self, x, h):
        return torch.rnn_tanh_cell(x, h, self.w_ih, self.w_hh, self.b_ih, self.b_hh)


class RnnReluCell(RnnTanhCell):
    def forward(self, x, h):
        return torch.rnn_relu_cell(x, h, self.w_ih, self.w_hh, self.b_ih, self.b_hh)


CELL_INPUTS = [f32(3, 4), f32(3, 6, low=-1, high=1)]
case("lstm_cell", ["lstm_cell"], CELL_INPUTS + [f32(3, 6, low=-1, high=1)], module=LstmCell, script=True)
case("lstm_cell_no_bias", ["lstm_cell"], CELL_INPUTS + [f32(3, 6, low=-1, high=1)],
     module=lambda: LstmCell(bias=False), script=True)
case("gru_cell", ["gru_cell"], CELL_INPUTS, module=GruCell, script=True)
case("gru_cell_no_bias", ["gru_cell"], CELL_INPUTS, module=lambda: GruCell(bias=False), script=True)
case("rnn_tanh_cell", ["rnn_tanh_cell"], CELL_INPUTS, module=RnnTanhCell, script=True)
case("rnn_relu_cell", ["rnn_relu_cell"], CELL_INPUTS, module=RnnReluCell, script=True)
case("rnn_relu_cell_no_bias", ["rnn_relu_cell"], CELL_INPUTS, module=lambda: RnnReluCell(bias=False), script=True)

# ---- dynamic axes: the same mappings when ONNX must compute sizes at run time

BATCH = {0: [0]}
case("dyn_view_size", ["size", "view"], [f32(2, 3, 4)], lambda x: x.view(x.size(0), -1), dynamic=BATCH)
case("dyn_size_arith", ["size", "prim::NumToTensor", "Int"], [f32(2, 3, 4)],
     lambda x: x.view(x.size(0) * x.size(1), x.size(2) // 2, -1), dynamic={0: [0, 1]})
case("dyn_reshape", ["reshape"], [f32(2, 3, 4)], lambda x: x.reshape(-1, 4), dynamic=BATCH)
case("dyn_flatten", ["flatten"], [f32(2, 3, 4, 5)], lambda x: (torch.flatten(x, 1), torch.flatten(x, 0, 2)),
     dynamic={0: [0, 2]})
# The two sizes are related (3 * 4 * x0 == 4 * y0): growing both by one cannot run.
case("dyn_view_as", ["view_as"], [f32(2, 3, 4), f32(6, 4)], lambda x, y: x.view_as(y), dynamic={0: [0], 1: [0]},
     dynamic_check=False)
case("dyn_numel", ["numel"], [f32(2, 3)], lambda x: x * x.numel(), dynamic=BATCH)
case("dyn_expand", ["expand"], [f32(2, 1, 3)], lambda x: x.expand(-1, 4, -1), dynamic=BATCH)
case("dyn_expand_as", ["expand_as"], [f32(1, 3), f32(4, 3)], lambda x, y: x.expand_as(y), dynamic={1: [0]})
case("dyn_repeat", ["repeat"], [f32(2, 3)], lambda x: x.repeat(2, 1, 3), dynamic=BATCH)
case("dyn_squeeze", ["squeeze"], [f32(2, 1, 3)], lambda x: x.squeeze(1), dynamic=BATCH)
case("dyn_unsqueeze_transpose_permute", ["unsqueeze", "transpose", "permute"], [f32(2, 3, 4)],
     lambda x: (x.unsqueeze(-1), x.transpose(0, 2), x.permute(1, 2, 0)), dynamic={0: [0, 1]})
case("dyn_slice", ["slice"], [f32(2, 4, 6)], lambda x: (x[:, 1:3], x[:, -2:], x[:, :-1]), dynamic={0: [1]})
case("dyn_slice_end", ["slice", "size"], [f32(2, 6)], lambda x: x[:, : x.size(1) // 2], dynamic={0: [1]},
     since=10, fails={9: "needs opset 10"})
case("dyn_select", ["select"], [f32(2, 4, 6)], lambda x: (x[:, 1], x[:, -1]), dynamic={0: [1]},
     since=11, fails={9: "negative index into a dim of unknown size needs opset 11"})
case("dyn_narrow", ["narrow"], [f32(2, 4, 6)], lambda x: x.narrow(1, 1, 2), dynamic={0: [1]})
case("dyn_index_select", ["index_select"], [f32(3, 4), ints(5, high=3)], lambda x, i: x.index_select(0, i),
     dynamic={0: [0], 1: [0]})
case("dyn_cat_stack", ["cat", "stack"], [f32(2, 3), f32(2, 3)],
     lambda x, y: (torch.cat([x, y], 0), torch.stack([x, y], 1)), dynamic={0: [0], 1: [0]})
case("dyn_chunk_static_dim", ["chunk"], [f32(2, 6)], lambda x: x.chunk(3, 1), dynamic=BATCH)
case("dyn_chunk_dynamic_dim", ["chunk"], [f32(6, 2)], lambda x: x.chunk(3, 0), dynamic=BATCH,
     opsets=[], fails={13: "needs the size of dim"})
case("dyn_split", ["split", "split_with_sizes"], [f32(2, 5)], lambda x: (x.split(2, 1), x.split([1, 4], 1)),
     dynamic=BATCH)
case("dyn_unbind", ["unbind"], [f32(2, 3, 4)], lambda x: x.unbind(1), dynamic=BATCH)
case("dyn_binary_broadcast", ["add", "mul", "where", "masked_fill", "gt"], [f32(2, 3, 4), f32(4)],
     lambda x, y: torch.where(x > 0, x + y, x * y).masked_fill(x < -1, 2.0), dynamic={0: [0, 1]})
case("dyn_linear", ["linear"], [f32(2, 3, 4)], module=lambda: nn.Linear(4, 5), dynamic={0: [0, 1]})
case("dyn_linear_2d", ["linear"], [f32(3, 4)], module=lambda: nn.Linear(4, 5), dynamic=BATCH)
case("dyn_matmul", ["matmul", "bmm"], [f32(2, 3, 4), f32(2, 4, 5)], lambda a, b: (a @ b, torch.bmm(a, b)),
     dynamic={0: [0], 1: [0]})
case("dyn_conv2d", ["_convolution"], [f32(2, 4, 8, 8)], module=lambda: nn.Conv2d(4, 6, 3, padding=1),
     dynamic={0: [0, 2, 3]}, **CONV_RTOL)
case("dyn_conv2d_same", ["_convolution_mode"], [f32(1, 2, 7, 7)], module=lambda: nn.Conv2d(2, 3, 4, padding="same"),
     dynamic={0: [0, 2, 3]}, **CONV_RTOL)
case("dyn_conv_transpose2d", ["_convolution"], [f32(1, 4, 5, 5)],
     module=lambda: nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1), dynamic={0: [0, 2, 3]},
     **CONV_RTOL)
case("dyn_max_pool2d", ["max_pool2d"], [f32(1, 2, 9, 9)], lambda x: F.max_pool2d(x, 3, 2), dynamic={0: [0, 2, 3]})
case("dyn_max_pool2d_ceil", ["max_pool2d"], [f32(1, 2, 10, 10)], lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True),
     dynamic={0: [2, 3]}, since=10, fails={9: "with ceil_mode=True on input of unknown spatial size"})
case("dyn_avg_pool2d_ceil", ["avg_pool2d"], [f32(1, 2, 5, 5)], lambda x: F.avg_pool2d(x, 2, 2, 0, ceil_mode=True),
     dynamic={0: [2, 3]}, since=10, fails={9: "with ceil_mode=True on input of unknown spatial size"})
case("dyn_adaptive_pools_global", ["adaptive_avg_pool2d", "adaptive_max_pool2d"], [f32(2, 3, 5, 4)],
     lambda x: (F.adaptive_avg_pool2d(x, 1), F.adaptive_max_pool2d(x, 1)), dynamic={0: [0, 2, 3]})
case("dyn_adaptive_avg_pool2d", ["adaptive_avg_pool2d"], [f32(1, 2, 6, 6)], lambda x: F.adaptive_avg_pool2d(x, 2),
     dynamic={0: [2, 3]}, opsets=[], fails={13: "output size other than 1 needs static input spatial sizes"})
case("dyn_batch_norm", ["batch_norm"], [f32(2, 3, 4, 4)], module=lambda: bn_with_stats(nn.BatchNorm2d(3)),
     dynamic={0: [0, 2, 3]})
case("dyn_instance_norm", ["instance_norm"], [f32(2, 3, 5)], module=lambda: nn.InstanceNorm1d(3, affine=True),
     dynamic={0: [0, 2]})
case("dyn_layer_norm", ["layer_norm"], [f32(2, 3, 4)], module=lambda: nn.LayerNorm(4), dynamic={0: [0, 1]})
case("dyn_group_norm", ["group_norm"], [f32(2, 4, 3, 3)], module=lambda: nn.GroupNorm(2, 4), dynamic={0: [0, 2, 3]})
case("dyn_softmax", ["softmax", "log_softmax"], [f32(2, 3, 4)],
     lambda x: (F.softmax(x, 1), F.log_softmax(x, 0), F.softmax(x, -1)), dynamic={0: [0, 1, 2]})
case("dyn_pixel_shuffle", ["pixel_shuffle", "pixel_unshuffle"], [f32(2, 8, 2, 4)],
     lambda x: (F.pixel_shuffle(x, 2), F.pixel_unshuffle(x, 2)), dynamic=BATCH)
case("dyn_prelu", ["prelu"], [f32(2, 3, 4, 5)], module=lambda: nn.PReLU(3, init=0.1), dynamic={0: [0, 2, 3]})
case("dyn_embedding", ["embedding"], [ints(2, 3, high=10)], module=lambda: nn.Embedding(10, 4), dynamic={0: [0, 1]})
case("dyn_lstm", ["lstm"], rnn_inputs("lstm", 2, True), dynamic={0: [0, 1], 1: [1], 2: [1]},
     module=lambda: Seq(nn.LSTM(4, 6, num_layers=2, bidirectional=True)).eval())
case("dyn_gru_batch_first", ["gru"], rnn_inputs("gru", batch_first=True), dynamic={0: [0, 1], 1: [1]},
     module=lambda: Seq(nn.GRU(4, 6, batch_first=True)).eval())
case("dyn_rnn_tanh", ["rnn_tanh"], rnn_inputs("rnn"), dynamic={0: [0, 1], 1: [1]},
     module=lambda: Seq(nn.RNN(4, 6)).eval())
case("dyn_lstm_cell", ["lstm_cell"], CELL_INPUTS + [f32(3, 6, low=-1, high=1)], module=LstmCell, script=True,
     dynamic={0: [0], 1: [0], 2: [0]})
case("dyn_max_pool2d_ceil_overhang", ["max_pool2d"], [f32(1, 2, 5, 5)],
     lambda x: F.max_pool2d(x, 2, 2, 1, ceil_mode=True), dynamic={0: [2, 3]}, since=10)
case("dyn_avg_pool2d_ceil_overhang", ["avg_pool2d"], [f32(1, 2, 5, 5)],
     lambda x: F.avg_pool2d(x, 2, 2, 1, ceil_mode=True), dynamic={0: [2, 3]}, since=10)


# ---------------------------------------------------------------- family tables
# Rows for each op family live in tests/ops/cases_<family>.py (each begins with
# `from op_cases import *`); importing them here appends their rows to CASES.
def _load_family_tables():
    import importlib
    import pathlib
    for table in sorted(pathlib.Path(__file__).resolve().parent.glob("cases_*.py")):
        importlib.import_module(table.stem)


_load_family_tables()
