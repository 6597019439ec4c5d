"""Rows for the creation pack (plugins/creation): factories, ranges, random sampling, casts.

Factories get their sizes from the input (x.shape, x.size(0)): with constant arguments the core's
TorchScript constant propagation would fold the op away before conversion. Rows with `dynamic`
axes make those sizes run-time values, so the symbolics take their non-constant branches.

Random ops cannot be compared with PyTorch value by value. Their rows return deterministic
functions of the samples instead: range checks, `r * 0` (shape and dtype), and sample
statistics over 4096 draws as booleans, with tolerances of at least six standard errors, so a
wrong distribution fails and a right one passes except with negligible probability. Means are
taken with a matmul, which keeps these rows independent of the reduction ops.
"""
import torch
import torch.nn.functional as F
from typing import List

from torch import Tensor
from op_framework import UNREACHABLE, bools, case, f32, f64, grid, ints, pos

# ---- factories: zeros/ones/full/empty, _like, new_

DYN2 = {0: [0, 1]}


def with_dtypes(make):
    """make(size_args, dtype) over the dtypes the factories must produce."""
    return lambda x: (make(x.shape, None), make((x.size(0),), torch.int64), make(x.shape, torch.int32),
                      make((x.size(1), 2), torch.bool), make(x.shape, torch.float64))


def _zeros(size, dtype):
    return torch.zeros(size, dtype=dtype)


def _ones(size, dtype):
    return torch.ones(size, dtype=dtype)


case("zeros", ["zeros"], [f32(2, 3)], with_dtypes(_zeros))
case("zeros_dynamic", ["zeros"], [f32(2, 3)], with_dtypes(_zeros), dynamic=DYN2)
case("zeros_varargs", ["zeros"], [f32(2, 3)], lambda x: torch.zeros(x.size(0), 4, x.size(1), dtype=torch.int64))
case("zeros_half", ["zeros"], [f32(2, 3)], lambda x: torch.zeros(x.shape, dtype=torch.float16).float() + x)
case("zeros_bfloat16", ["zeros"], [f32(2, 3)], lambda x: torch.zeros(x.shape, dtype=torch.bfloat16).float() + x,
     since=13, fails={11: "bfloat16 tensors need opset 13"})
case("ones", ["ones"], [f32(2, 3)], with_dtypes(_ones))
case("ones_dynamic", ["ones"], [f32(2, 3)], with_dtypes(_ones), dynamic=DYN2)
# torch.empty's contents are unspecified: the rows overwrite them (empty exports as zeros).
case("empty", ["empty", "zero_", "fill_"], [f32(2, 3)],
     lambda x: (torch.empty(x.shape).zero_(), torch.empty(x.size(0), dtype=torch.int32).fill_(7)))
case("empty_dynamic", ["empty", "zero_"], [f32(2, 3)], lambda x: torch.empty(x.shape, dtype=torch.int64).zero_(),
     dynamic=DYN2)
case("full", ["full"], [f32(2, 3)],
     lambda x: (torch.full(x.shape, 2.5), torch.full(x.shape, 3), torch.full(x.shape, 1, dtype=torch.bool),
                torch.full((x.size(0),), 7, dtype=torch.float64), torch.full(x.shape, -1.5, dtype=torch.int32)))
case("full_dynamic", ["full"], [f32(2, 3)], lambda x: (torch.full(x.shape, 2.5), torch.full((x.size(1), 2), 4)),
     dynamic=DYN2)


def s_full_value(x: Tensor):
    return torch.full([x.size(0), 2], float(x[0, 0])), torch.full([2], x.size(1))


case("full_tensor_value", ["full", "Float"], [f32(2, 3)], s_full_value, script=True, dynamic=DYN2)
case("zeros_like", ["zeros_like"], [f32(2, 3), ints(2, 3)],
     lambda x, i: (torch.zeros_like(x), torch.zeros_like(i), torch.zeros_like(x, dtype=torch.int32),
                   torch.zeros_like(i, dtype=torch.bool)))
case("zeros_like_0d", ["zeros_like", "ones_like"], [f32()], lambda x: (torch.zeros_like(x), torch.ones_like(x)))
case("ones_like", ["ones_like"], [f32(2, 3), bools(4)],
     lambda x, b: (torch.ones_like(x), torch.ones_like(b), torch.ones_like(x, dtype=torch.float64)))
case("ones_like_dynamic", ["ones_like"], [f32(2, 3)], lambda x: torch.ones_like(x, dtype=torch.int64), dynamic=DYN2)
case("empty_like", ["empty_like", "fill_", "zero_"], [f32(2, 3), ints(3)],
     lambda x, i: (torch.empty_like(x).fill_(1.5), torch.empty_like(i).zero_(),
                   torch.empty_like(x, dtype=torch.int64).fill_(2)))
case("full_like", ["full_like"], [f32(2, 3), ints(2, 3)],
     lambda x, i: (torch.full_like(x, 2), torch.full_like(i, 3), torch.full_like(x, 7, dtype=torch.int64),
                   torch.full_like(i, 1.7), torch.full_like(x, 1, dtype=torch.bool)))


def s_full_like_value(x: Tensor):
    return torch.full_like(x, float(x[1, 2])) + x


case("full_like_tensor_value", ["full_like"], [f32(2, 3)], s_full_like_value, script=True)
case("new_zeros", ["new_zeros"], [f32(2, 3), ints(2, 3)],
     lambda x, i: (x.new_zeros(x.shape), i.new_zeros(x.size(1)), x.new_zeros(x.shape, dtype=torch.int32)))
case("new_ones", ["new_ones"], [f32(2, 3), ints(2, 3)],
     lambda x, i: (x.new_ones(x.shape), i.new_ones((x.size(1), 2)), i.new_ones(x.shape, dtype=torch.float64)))
case("new_empty", ["new_empty", "fill_"], [f32(2, 3), ints(2, 3)],
     lambda x, i: (x.new_empty(x.shape).fill_(3), i.new_empty(x.size(1)).fill_(-2)))
case("new_full", ["new_full"], [f32(2, 3), ints(2, 3)],
     lambda x, i: (x.new_full(x.shape, 2), i.new_full(x.shape, 5), x.new_full((x.size(0),), 3, dtype=torch.int64)))
case("new_factories_dynamic", ["new_zeros", "new_ones", "new_full"], [f32(2, 3)],
     lambda x: (x.new_zeros(x.shape), x.new_ones(x.size(1)), x.new_full(x.shape, 4.5)), dynamic=DYN2)
case("empty_strided", ["empty_strided", "new_empty_strided", "zero_", "fill_"], [f32(2, 3)],
     lambda x: (torch.empty_strided(x.shape, (3, 1)).zero_(), x.new_empty_strided(x.shape, (3, 1)).fill_(1)))
case("fill_", ["fill_"], [f32(2, 3), ints(2, 3)],
     lambda x, i: (x.clone().fill_(2.5), i.clone().fill_(4), x.clone().fill_(x[0, 1]), i.clone().fill_(2.9)))
case("fill_dynamic", ["fill_"], [f32(2, 3)], lambda x: x.clone().fill_(x[1, 0]) * x, dynamic=DYN2)
case("fill", ["fill"], [f32(2, 3)], ir="""graph(%x : Tensor):
  %v : float = prim::Constant[value=2.5]()
  %y : Tensor = aten::fill(%x, %v)
  return (%y)""")
case("zero_", ["zero_"], [f32(2, 3), ints(3), bools(2)],
     lambda x, i, b: (x.clone().zero_(), i.clone().zero_(), b.clone().zero_()))
case("eye", ["eye"], [f32(3, 4)],
     lambda x: (torch.eye(x.size(0)), torch.eye(x.size(0), x.size(1)), torch.eye(x.size(1), dtype=torch.int64),
                torch.eye(x.size(1), x.size(0), dtype=torch.bool)))
case("eye_dynamic", ["eye"], [f32(3, 4)], lambda x: (torch.eye(x.size(0)), torch.eye(x.size(1), x.size(0))),
     dynamic=DYN2)
case("one_hot", ["one_hot"], [ints(2, 3, high=5)], lambda i: F.one_hot(i, 6))
case("one_hot_inferred", ["one_hot"], [ints(2, 3, high=5)], lambda i: F.one_hot(i))
case("one_hot_dynamic", ["one_hot"], [ints(4, high=3)], lambda i: F.one_hot(i, 3), dynamic={0: [0]})
case("scalar_tensor", ["scalar_tensor"], [f32(2, 3)],
     lambda x: (torch.scalar_tensor(x.size(0)), torch.scalar_tensor(x.size(1), dtype=torch.int64)))


def s_tensor(x: Tensor):
    return (torch.tensor([x.size(0), x.size(1)]), torch.tensor([[x.size(0), 1], [2, x.size(1)]], dtype=torch.float32),
            torch.tensor(float(x.size(1))), torch.tensor([x.size(0) > 1, False]))


case("tensor", ["tensor"], [f32(2, 3)], s_tensor, script=True)
case("tensor_dynamic", ["tensor"], [f32(2, 3)], s_tensor, script=True, dynamic=DYN2)


def s_tensor_constant_lists(x: Tensor):
    # constant lists of numbers with a dtype known only from x: torchaudio's loudness weights
    w = torch.tensor([1.0, 1.0, 1.41], dtype=x.dtype)
    m = torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=x.dtype)
    return w[: x.size(1)] * x, m + x


case("tensor_constant_lists", ["tensor"], [f32(2, 3)], s_tensor_constant_lists, script=True)


def s_tensor_of_one_element_tensors(x: Tensor):
    # float(x) / int(x) of an x of shape [1] are numbers: [float(x)] has shape [1], not [1, 1]
    return torch.tensor([float(x)]), torch.tensor([x.size(0), int(x)]), torch.tensor(float(x))


case("tensor_of_one_element_tensors", ["tensor"], [f32(1)], s_tensor_of_one_element_tensors, script=True)


def s_as_tensor(x: Tensor):
    return torch.as_tensor(x, dtype=torch.float64), torch.as_tensor([x.size(0), 2]), torch.as_tensor(x)


case("as_tensor", ["as_tensor"], [f32(2, 3)], s_as_tensor, script=True)


def s_tensor_of_list_built_in_loop(x: Tensor):
    # the list is made at run time, so freezing cannot fold it: a trace must keep its values
    # (libtorch fills the tensor by a copy the tracer does not see)
    counts: List[int] = []
    scales: List[float] = []
    for i in range(x.size(0)):
        counts.append(i * 2 + 1)
        scales.append(float(i) / 4.0)
    return torch.tensor(counts, dtype=torch.int32), torch.as_tensor(scales), torch.tensor(len(counts))


case("tensor_of_list_built_in_loop", ["tensor", "as_tensor"], [f32(3, 2)], s_tensor_of_list_built_in_loop,
     script=True, since=13)
case("tensor_of_list_built_in_loop_dynamic", ["tensor", "as_tensor"], [f32(3, 2)], s_tensor_of_list_built_in_loop,
     script=True, since=13, dynamic={0: [0]})

# ---- ranges

case("arange", ["arange"], [f32(5, 2)],
     lambda x: (torch.arange(x.size(0)), torch.arange(x.size(0), dtype=torch.float32),
                torch.arange(x.size(1), dtype=torch.int32), torch.arange(x.size(0), dtype=torch.float64)))
case("arange_start", ["arange"], [f32(5, 2)],
     lambda x: (torch.arange(2, x.size(0)), torch.arange(-1, x.size(0), dtype=torch.float32),
                torch.arange(x.size(0), 9)))
case("arange_step", ["arange"], [f32(5, 2)],
     lambda x: (torch.arange(1, x.size(0) * 2, 2), torch.arange(x.size(0), -3, -2),
                torch.arange(0, x.size(0), 3, dtype=torch.float64), torch.arange(x.size(0), 1, -1)))
case("arange_dynamic", ["arange"], [f32(5, 2)],
     lambda x: (torch.arange(x.size(0)), torch.arange(1, x.size(0) * 2, 2), torch.arange(x.size(0), -3, -2),
                torch.arange(-1, x.size(0), dtype=torch.float32)), dynamic=DYN2)


def s_arange_float(x: Tensor):
    n = float(x.size(0))
    return (torch.arange(0.5, n, 0.5), torch.arange(n), torch.arange(-n, n, 0.75, dtype=torch.float64),
            torch.arange(0.5, n + 0.5, 1.5, dtype=torch.int64), torch.arange(0, 1, 0.1) * n)


case("arange_float", ["arange"], [f32(5, 2)], s_arange_float, script=True)
case("arange_float_dynamic", ["arange"], [f32(5, 2)], s_arange_float, script=True, dynamic=DYN2)
case("dim_arange", ["_dim_arange"], [f32(3, 5)],
     lambda x: (torch.ops.aten._dim_arange(x, 1), torch.ops.aten._dim_arange(x, 0)))
case("dim_arange_dynamic", ["_dim_arange"], [f32(3, 5)], lambda x: torch.ops.aten._dim_arange(x, 1), dynamic=DYN2)
case("linspace", ["linspace"], [f32(5, 1)],
     lambda x: (torch.linspace(-1, 1, x.size(0)), torch.linspace(0, 10, x.size(0), dtype=torch.int64),
                torch.linspace(2, 5, x.size(1)), torch.linspace(3, -3, x.size(0), dtype=torch.float64),
                torch.linspace(0, 1, x.size(0) + 2)))
case("linspace_dynamic", ["linspace"], [f32(5, 1)],
     lambda x: (torch.linspace(-1, 1, x.size(0)), torch.linspace(2, 5, x.size(1)),
                torch.linspace(0, 10, x.size(0), dtype=torch.int64)), dynamic=DYN2)
case("logspace", ["logspace"], [f32(4, 1)],
     lambda x: (torch.logspace(0, 2, x.size(0)), torch.logspace(-1, 1, x.size(0), base=2.0, dtype=torch.float64),
                torch.logspace(0, 3, x.size(0), dtype=torch.int64), torch.logspace(1, 2, x.size(1))))
case("logspace_dynamic", ["logspace"], [f32(4, 1)], lambda x: torch.logspace(0, 2, x.size(0), base=3.0),
     dynamic=DYN2)


def triangles(x):
    return (torch.tril_indices(x.size(0), x.size(1)), torch.tril_indices(x.size(0), x.size(1), 1),
            torch.triu_indices(x.size(0), x.size(1), -1), torch.triu_indices(x.size(1), x.size(1), 2, dtype=torch.int32))


case("tril_triu_indices", ["tril_indices", "triu_indices"], [f32(3, 4)], triangles)
case("tril_triu_indices_dynamic", ["tril_indices", "triu_indices"], [f32(3, 4)], triangles, dynamic=DYN2)
case("hann_window", ["hann_window"], [f32(5, 1)],
     lambda x: (torch.hann_window(x.size(0)), torch.hann_window(x.size(0), periodic=False),
                torch.hann_window(x.size(1)), torch.hann_window(x.size(1), False),
                torch.hann_window(x.size(0), dtype=torch.float64)))
case("windows", ["hamming_window", "blackman_window", "bartlett_window"], [f32(6, 1)],
     lambda x: (torch.hamming_window(x.size(0)), torch.hamming_window(x.size(0), False),
                torch.hamming_window(x.size(0), True, 0.5, 0.4), torch.blackman_window(x.size(0)),
                torch.blackman_window(x.size(0), False), torch.bartlett_window(x.size(0)),
                torch.bartlett_window(x.size(0), False, dtype=torch.float64)))
case("windows_dynamic", ["hann_window", "hamming_window", "bartlett_window"], [f32(6, 1)],
     lambda x: (torch.hann_window(x.size(0), False), torch.hann_window(x.size(1), False),
                torch.hamming_window(x.size(0)), torch.bartlett_window(x.size(1))), dynamic=DYN2)

# ---- random sampling (see the module docstring)

SAMPLES = 64 * 64


def mean_all(t):
    """The mean of the SAMPLES elements of t, as a [1, 1] float64 tensor."""
    return torch.matmul(t.reshape(1, SAMPLES).double(), torch.full((SAMPLES, 1), 1.0 / SAMPLES, dtype=torch.float64))


def near(value, target, tol):
    return (value - target).abs() < tol


def standard_normal_checks(z):
    """z should be N(0, 1): its mean, its mean square and its shape/dtype."""
    return near(mean_all(z), 0.0, 0.1), near(mean_all(z * z), 1.0, 0.15), z * 0


def uniform_checks(r, low, high):
    """The mean's standard error is width / sqrt(12) / 64 = 0.0045 * width: 0.03 * width is 6.6 of them."""
    return (r >= low) & (r < high), near(mean_all(r), (low + high) / 2, 0.03 * (high - low)), r * 0


case("rand", ["rand"], [f32(64, 64)],
     lambda x: uniform_checks(torch.rand(x.shape), 0.0, 1.0) + (torch.rand(x.shape, dtype=torch.float64) * 0,))
# The statistics below use exactly SAMPLES values: those models run only at the example size.
case("rand_dynamic", ["rand"], [f32(64, 64)], lambda x: uniform_checks(torch.rand(x.shape), 0.0, 1.0), dynamic=DYN2, dynamic_check=False)
case("randn", ["randn"], [f32(64, 64)],
     lambda x: standard_normal_checks(torch.randn(x.shape)) + (torch.randn(x.shape, dtype=torch.float64) * 0,))
case("randn_dynamic", ["randn"], [f32(64, 64)], lambda x: standard_normal_checks(torch.randn(x.shape)),
     dynamic=DYN2, dynamic_check=False)
case("rand_like", ["rand_like"], [f32(64, 64), f64(64, 64)],
     lambda x, d: uniform_checks(torch.rand_like(x), 0.0, 1.0) + (torch.rand_like(d) * 0,
                                                                   torch.rand_like(x, dtype=torch.float64) * 0))
case("randn_like", ["randn_like"], [f32(64, 64), f64(64, 64)],
     lambda x, d: standard_normal_checks(torch.randn_like(x)) + (torch.randn_like(d) * 0,))


def whole(r):
    """Floats that hold integers."""
    return (r == r.floor(),)


def randint_checks(r, low, high):
    """Range, integrality through the dtype, and the top value actually drawn."""
    top = mean_all((r == high - 1).double()) > 0.5 / (high - low)
    return (r >= low) & (r < high), top, r * 0


case("randint", ["randint"], [f32(64, 64)],
     lambda x: randint_checks(torch.randint(3, 7, x.shape), 3, 7) + randint_checks(
         torch.randint(5, x.shape, dtype=torch.int32), 0, 5))
case("randint_dynamic", ["randint"], [f32(64, 64)], lambda x: randint_checks(torch.randint(-2, 2, x.shape), -2, 2),
     dynamic=DYN2, dynamic_check=False)
case("randint_like", ["randint_like"], [f32(64, 64), ints(64, 64)],
     lambda x, i: randint_checks(torch.randint_like(x, 3, 7), 3, 7) + randint_checks(torch.randint_like(i, 4), 0, 4)
     + whole(torch.randint_like(x, 10)))
case("normal_float_float", ["normal"], [f32(64, 64)],
     lambda x: standard_normal_checks((torch.normal(2.0, 3.0, size=x.shape) - 2.0) / 3.0))
case("normal_float_float_dynamic", ["normal"], [f32(64, 64)],
     lambda x: standard_normal_checks((torch.normal(-1.0, 0.5, size=x.shape) + 1.0) / 0.5), dynamic=DYN2, dynamic_check=False)
case("normal_tensor_float", ["normal"], [grid(64, 64)],
     lambda x: standard_normal_checks((torch.normal(x, 0.5) - x) / 0.5))
case("normal_float_tensor", ["normal"], [pos(64, 64)], lambda s: standard_normal_checks((torch.normal(1.0, s) - 1.0) / s))
case("normal_tensor_tensor", ["normal"], [grid(64, 64), pos(64, 64)],
     lambda x, s: standard_normal_checks((torch.normal(x, s) - x) / s))
case("normal_", ["normal_"], [f32(64, 64)], lambda x: standard_normal_checks((x.clone().normal_(3, 0.5) - 3) / 0.5))
case("uniform_", ["uniform_"], [f32(64, 64)], lambda x: uniform_checks(x.clone().uniform_(-2, 5), -2.0, 5.0))
# Probabilities 0 and 1 make bernoulli deterministic: the draw must equal p exactly.
case("bernoulli_exact", ["bernoulli", "bernoulli_"], [grid(3, 4, low=0, high=1), f32(3, 4)],
     lambda p, x: (torch.bernoulli(p), x.clone().bernoulli_(p)))


def bernoulli_checks(r, p):
    return (r == 0) | (r == 1), near(mean_all(r), p, 0.05), r * 0


case("bernoulli_p", ["bernoulli", "bernoulli_"], [f32(64, 64)],
     lambda x: bernoulli_checks(torch.bernoulli(torch.full_like(x, 0.3)), 0.3) + bernoulli_checks(
         torch.bernoulli(x, 0.25), 0.25) + bernoulli_checks(x.clone().bernoulli_(0.7), 0.7))

# Categories 1 and 4 have weight 0: no draw may pick them.
MASK = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])


def multinomial_checks(x):
    w = (x.abs() + 0.1) * MASK
    with_replacement = torch.multinomial(w, 20, replacement=True)
    zero_hits = torch.matmul(F.one_hot(with_replacement, 6).double(), (MASK == 0).double().reshape(6, 1))
    # Without replacement, 4 draws from 4 possible categories must be exactly those 4.
    distinct = torch.matmul(torch.ones(1, 4, dtype=torch.float64), F.one_hot(torch.multinomial(w, 4), 6).double())
    single = torch.multinomial(w[0], 1)
    single_hits = torch.matmul(F.one_hot(single, 6).double(), (MASK == 0).double().reshape(6, 1))
    return zero_hits == 0, with_replacement * 0, distinct, single_hits == 0, single * 0


case("multinomial", ["multinomial", "one_hot"], [f32(3, 6)], multinomial_checks)

# ---- casts and dtype queries

# torch 1.13 defines _cast_Byte/Char/Short/Int/Long/Half/Float/Double only; the other _cast_ ops
# torch.onnx maps (Bool, BFloat16, ComplexFloat, ComplexDouble) are registered for graphs from
# other producers, with complex giving a clear ArgumentError (ONNX has no complex tensors).
case("cast_ints", ["_cast_Long", "_cast_Int", "_cast_Char", "_cast_Byte"], [f32(3, 4, low=-5, high=5)],
     lambda x: (torch._cast_Long(x), torch._cast_Int(x), torch._cast_Char(x), torch._cast_Byte(x.abs())))
case("cast_floats", ["_cast_Double", "_cast_Float", "_cast_Half", "_cast_Short", "_cast_Long"],
     [f32(3, 4, low=-5, high=5), ints(3, 4, low=-9, high=9)],
     lambda x, i: (torch._cast_Double(x), torch._cast_Float(i), torch._cast_Float(torch._cast_Half(x)),
                   torch._cast_Long(torch._cast_Short(i))))
case("cast_int_to_float", ["_cast_Float", "_cast_Double", "_cast_Int"], [ints(5, low=-9, high=9)],
     lambda i: (torch._cast_Float(i) / 2, torch._cast_Double(torch._cast_Int(i))))
NO_SUCH_CAST = "torch 1.13 has no aten::{} operator (only _cast_Byte/Char/Short/Int/Long/Half/Float/Double), so " \
               "no loadable graph contains it; registered for parity with torch.onnx"
UNREACHABLE.update({
    "aten::_cast_Bool": NO_SUCH_CAST.format("_cast_Bool"),
    "aten::_cast_BFloat16": NO_SUCH_CAST.format("_cast_BFloat16"),
    "aten::_cast_ComplexFloat": NO_SUCH_CAST.format("_cast_ComplexFloat") + " (it raises: ONNX has no complex tensors)",
    "aten::_cast_ComplexDouble": NO_SUCH_CAST.format("_cast_ComplexDouble") + " (it raises: ONNX has no complex tensors)",
    "aten::_conj": "PyTorch's aten::_conj only accepts complex tensors (an internal assert otherwise), which ONNX "
                   "cannot carry; the mapping exists to report that clearly",
})


def s_dtype_queries(x: Tensor, i: Tensor):
    return (x * int(x.is_floating_point()) + int(i.is_floating_point()), x * int(x.is_complex()),
            i * int(i.is_signed()) + int(x.is_signed()))


case("dtype_queries", ["is_floating_point", "is_complex", "is_signed"], [f32(2, 3), ints(2, 3)], s_dtype_queries,
     script=True)


def s_is_pinned(x: Tensor):
    return x * 2 + int(x.is_pinned())


case("is_pinned", ["is_pinned"], [f32(2, 3)], s_is_pinned, script=True)


def s_item(x: Tensor):
    return x * x[0, 1].item(), x + x[1, 0:1].item()


case("item", ["item"], [f32(2, 3)], s_item, script=True)
case("identities", ["lift", "resolve_conj", "resolve_neg", "conj_physical", "_conj_physical"], [f32(2, 3)],
     lambda x: (torch.ops.aten.lift(x) + 1, x.resolve_conj().resolve_neg() * 2, torch.conj_physical(x) - 1,
                torch.ops.aten._conj_physical(x) * 3))


def s_conj_data(x: Tensor):
    return x.conj() + 1, x.data * 2


case("conj_data", ["conj", "prim::data"], [f32(2, 3)], s_conj_data, script=True)


def s_tensor_properties(x: Tensor, i: Tensor):
    # A dtype read at the top level is folded before conversion (the inputs' dtypes are fixed);
    # read in a branch it is converted. x.device is always folded (onnxport exports for the CPU).
    if bool(x.sum() > -1e9):
        z = torch.zeros(x.size(), dtype=i.dtype, device=x.device)
    else:
        z = torch.zeros(x.size(), dtype=torch.int64)
    return (z, torch.ones(i.size(), dtype=x.dtype, layout=x.layout), torch.full_like(x, 2, dtype=i.dtype))


case("tensor_properties", ["prim::dtype", "prim::layout"], [f32(2, 3), ints(3)],
     s_tensor_properties, script=True)


# Gamma and Dirichlet draws (approximate samplers: see plugins/creation/random.cpp): the mean of
# 4096 Gamma(2.5) draws has standard error 0.025, the mean of their squares (8.75) about 0.2.
def gamma_checks(x):
    g = torch._standard_gamma(x * 0 + 2.5)
    return g >= 0, near(mean_all(g), 2.5, 0.15), near(mean_all(g * g), 8.75, 1.0), g * 0


def dirichlet_checks(x):
    d = torch._sample_dirichlet(x[:, :4] * 0 + 2.0)
    return near(d.sum(1), 1.0, 1e-3), near(d.double().mean(), 0.25, 0.02), d * 0


case("standard_gamma", ["_standard_gamma"], [f32(64, 64)], gamma_checks)
case("sample_dirichlet", ["_sample_dirichlet"], [f32(64, 64)], dirichlet_checks)
