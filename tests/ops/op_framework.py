"""The per-operator test framework: the row type (`Case`, added with `case`), input specs
(`f32`, `ints`, ...), the model wrappers rows use (`Fn`, `With`, `Script1..3`), the table
(`CASES`) and the ops no row can reach (`UNREACHABLE`). The rows themselves live in
cases_<family>.py; op_cases.py loads them. See op_cases.py for what a row means."""
import zlib

import onnx.defs
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

OPSETS = (9, 11, 13, 14, 16, 17)
# The opsets past 17 that ONNX 1.13-1.17 brought. Every row that passes at 17 is exported at each
# of them too, and rows may list them (opsets=/fails=) for forms that begin there; case() drops
# those past the newest opset of the ONNX here (the build links the same one: 17 with Debian 12's
# ONNX 1.12, 22 with Debian 13's 1.17), and a row left with none is not added.
NEWEST_OPSET = onnx.defs.onnx_opset_version()
NEW_OPSETS = (18, 19, 20, 21, 22)
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


def c64(*shape, dtype=torch.complex64):
    """Complex values, real and imaginary parts standard normal. The exported model takes such an
    input as its real pair (torch.view_as_real: float[..., 2]); the fixtures store it that way."""
    return Input(shape, dtype, lambda s, g: torch.complex(torch.randn(s, generator=g, dtype=torch.float64),
                                                          torch.randn(s, generator=g, dtype=torch.float64)))


def c128(*shape):
    return c64(*shape, dtype=torch.complex128)


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
        # "aten::fft_rfft[complex]" (Registrar::complex_key) names the op's entry for complex values:
        # the export must convert the node through it, i.e. complex values flow through the node.
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
        self.ort_optimization = None  # ONNX Runtime's graph optimization level for this row (None: all)

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
         fails=None, rtol=None, atol=None, training=False, via="file", dynamic=None, dynamic_check=True,
         no_script_twin=None, script_fails=None, ort_optimization=None, torch1_only=None):
    """Add one row. `since` drops the opsets below an op's first mapping; `opsets` lists them
    explicitly; `fails` adds expected-failure opsets; `training` exports in training mode;
    via="function" exports through Exporter::export_function (the C++ tracer running the saved
    module, no freezing) instead of export_file; `dynamic` = {input index: [axes]} exports those
    axes as dynamic (dynamic_axes), so symbolics take their unknown-size branches; dynamic_check=False
    for models that only run at the example's sizes (the export's re-run at other sizes would fail).
    A traced row whose `module` builds a real nn.Module gets a scripted twin (see add_script_twins);
    `no_script_twin="reason"` opts out, `script_fails` replaces `fails` for the twin.
    `torch1_only="reason"` keeps a row that records what PyTorch 1.x traces (PyTorch 2 traces another
    op for the same call, or refuses it) out of the table under PyTorch 2 (Debian 13's 2.6).
    `ort_optimization=(LEVEL, "reason")` runs the row in ONNX Runtime at that graph optimization
    level ("disabled", "basic", "extended"; default "all"), for rows where one of ONNX Runtime's
    rewrites computes something else than the graph says on some CPUs (the reason says which)."""
    if isinstance(ops, str):
        ops = [ops]
    if torch1_only is not None and int(torch.__version__.split(".")[0]) >= 2:
        TORCH1_ONLY[id] = ([op if "::" in op else "aten::" + op for op in ops], torch1_only)
        return
    if sum(x is not None for x in (fn, module, ir)) != 1:
        raise ValueError(f"case {id}: give exactly one of fn, module, ir")
    if via not in ("file", "function") or (via == "function" and ir is not None):
        raise ValueError(f"case {id}: via is 'file' or 'function' (not for IR rows)")
    mode = "ir" if ir is not None else "script" if script else "trace"
    chosen = opsets if opsets is not None else [o for o in OPSETS if o >= since]
    if 17 in chosen and 17 not in (fails or {}):
        chosen = list(chosen) + [o for o in NEW_OPSETS if o not in chosen]
    chosen = [o for o in chosen if o <= NEWEST_OPSET]
    fails = {o: text for o, text in (fails or {}).items() if o <= NEWEST_OPSET}
    row = Case(id, ops, inputs, fn=fn, module=module, mode=mode, ir=ir, opsets=chosen, fails=fails or {},
               rtol=rtol, atol=atol, training=training, via=via, dynamic=dynamic or {}, dynamic_check=dynamic_check)
    row.no_script_twin = no_script_twin
    row.script_fails = script_fails
    if ort_optimization is not None:
        level, reason = ort_optimization
        if level not in ("disabled", "basic", "extended") or not reason:
            raise ValueError(f"case {id}: ort_optimization is (disabled|basic|extended, reason)")
        row.ort_optimization = level
    if not chosen and not fails and opsets:
        return  # a row for opsets past this ONNX's newest only (Debian 12's ONNX 1.12)
    CASES.append(row)


# Rows left out under PyTorch 2 (torch1_only=): id -> (the torch ops they declare, why).
TORCH1_ONLY = {}


# The table's wrappers around Python lambdas, which torch.jit.script cannot compile.
LAMBDA_WRAPPERS = (Fn, With)


def add_script_twins(cases):
    """Every traced row whose `module` builds an nn.Module of its own (not a lambda wrapper) also
    runs scripted: a row `<id>__scripted` in script mode with the same ops, inputs and opsets.
    Returns (twins added, rows opted out with their reasons)."""
    twins, opted_out = [], {}
    for c in list(cases):
        if c.mode != "trace" or c.module is None or c.via != "file":
            continue
        if c.no_script_twin:
            opted_out[c.id] = c.no_script_twin
            continue
        if isinstance(c.module(), LAMBDA_WRAPPERS):
            continue
        fails = c.fails if c.script_fails is None else c.script_fails
        fails = {o: text for o, text in fails.items() if o <= NEWEST_OPSET}
        opsets = [o for o in c.opsets if o not in c.fails]
        # No ops declared: a scripted graph calls other overloads than a trace records
        # (aten::conv2d, not aten::_convolution); the traced row checks the op, the twin the numbers.
        twin = Case(c.id + "__scripted", [], c.inputs, fn=None, module=c.module, mode="script", ir=None, opsets=opsets, fails=fails,
                    rtol=c.rtol, atol=c.atol, training=c.training, via="file", dynamic=c.dynamic,
                    dynamic_check=c.dynamic_check)
        twin.no_script_twin = twin.script_fails = None
        twin.ort_optimization = c.ort_optimization
        cases.append(twin)
        twins.append(twin.id)
    return twins, opted_out


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
    "prim::device": "folded to the CPU device before conversion (core/3_export/2_prepare/export_time_facts.cpp): onnxport "
                    "runs and exports models on the CPU",
    "prim::type": "its only input, a tensor's device, is folded to the CPU device before conversion, and then "
                  "the device's type with it",
    "aten::softsign": "torch 1.13 has no aten::softsign operator (F.softsign is traced as abs/add/div), so "
                      "no runnable graph contains it",
    "aten::scaled_dot_product_attention": "torch 1.13, the table's eager reference, has no such operator (PyTorch "
                                          "2.0 added it): tests/newer_torch exports the files PyTorch 2.6 writes "
                                          "with it, at opsets 11, 14 and 17, against PyTorch 2.6's outputs",
    "aten::rms_norm": "torch 1.13, the table's eager reference, has no such operator (PyTorch 2.4 added it): "
                      "tests/newer_torch exports the files PyTorch 2.6 writes with nn.RMSNorm and F.rms_norm "
                      "(rms_norm, rms_norm_script) against PyTorch 2.6's outputs, and script.torch_nn_scripted "
                      "RMSNorm on Debian 13",
}
