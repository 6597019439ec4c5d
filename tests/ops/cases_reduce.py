"""Rows for the reduce pack: sums, extrema, logical reductions, statistics, norms, cumsum."""
import torch
from op_framework import bools, case, f32, grid, ints

INF = float("inf")

# ---- sum / nansum / mean / prod / logsumexp / count_nonzero

case("sum_all", ["sum"], [f32(2, 3, 4)], lambda x: x.sum())
case("sum_dim", ["sum"], [f32(2, 3, 4)], lambda x: (x.sum(1), x.sum(-1)))
case("sum_dims_keepdim", ["sum"], [f32(2, 3, 4)], lambda x: (x.sum((0, -1), keepdim=True), x.sum((2, 0))))
case("sum_every_dim", ["sum"], [f32(2, 3)], lambda x: x.sum((0, 1), keepdim=True))
case("sum_int32_to_int64", ["sum"], [ints(3, 4, low=-50, high=50, dtype=torch.int32)], lambda i: (i.sum(), i.sum(0)))
case("sum_bool", ["sum"], [bools(3, 4)], lambda m: (m.sum(), m.sum(1, keepdim=True)))
case("sum_dtype", ["sum"], [ints(3, 4)], lambda i: (i.sum(dtype=torch.float32), i.sum(1, dtype=torch.float64)))
case("sum_0d", ["sum"], [f32()], lambda x: (x.sum(), x.sum(0), x.sum(-1, keepdim=True)))
case("sum_dynamic", ["sum"], [f32(2, 3, 4)], lambda x: x.sum(-1), dynamic={0: [0, 2]})
case("nansum", ["nansum"], [f32(3, 4)], lambda x: (torch.nansum(torch.log(x), 1), torch.nansum(torch.log(x))))
case("nansum_int", ["nansum"], [ints(3, 4)], lambda i: torch.nansum(i, 0, keepdim=True))
case("mean_all", ["mean"], [f32(2, 3, 4)], lambda x: x.mean())
case("mean_dims", ["mean"], [f32(2, 3, 4)], lambda x: (x.mean(1), x.mean((-1, 0), keepdim=True), x.mean(-2)))
case("mean_dtype", ["mean"], [f32(2, 3)], lambda x: (x.mean(dtype=torch.float64), x.mean(1, dtype=torch.float64)))
case("mean_dynamic", ["mean"], [f32(2, 3, 4)], lambda x: x.mean((1, 2)), dynamic={0: [0, 1]})
case("prod_all", ["prod"], [f32(2, 3, 2, low=0.5, high=1.5)], lambda x: x.prod())
case("prod_dim", ["prod"], [f32(2, 3, 4)], lambda x: (x.prod(1), x.prod(-1, keepdim=True)))
case("prod_int", ["prod"], [ints(3, 4, low=-3, high=4, dtype=torch.int32)], lambda i: (i.prod(1), i.prod()))
case("prod_bool", ["prod"], [bools(3, 4)], lambda m: (m.prod(), m.prod(0)))
case("prod_dtype", ["prod"], [ints(2, 3, low=1, high=5)], lambda i: i.prod(1, dtype=torch.float32))
case("logsumexp", ["logsumexp"], [f32(2, 3, 4)],
     lambda x: (torch.logsumexp(x, 1), torch.logsumexp(x, (0, -1), keepdim=True), torch.logsumexp(x * 40, -1)))
case("logsumexp_int", ["logsumexp"], [ints(3, 4)], lambda i: torch.logsumexp(i, 1))
case("count_nonzero", ["count_nonzero"], [grid(3, 4, 5, low=-1, high=1)],
     lambda x: (torch.count_nonzero(x), torch.count_nonzero(x, 1), torch.count_nonzero(x, (0, -1))))
case("count_nonzero_bool", ["count_nonzero"], [bools(4, 5)], lambda m: torch.count_nonzero(m, -1))

# ---- amax / amin / aminmax / max / min / argmax / argmin

case("amax", ["amax"], [f32(2, 3, 4)], lambda x: (x.amax(1), x.amax((0, -1), keepdim=True), x.amax()))
case("amin", ["amin"], [f32(2, 3, 4)], lambda x: (x.amin(-1), x.amin((0, 2)), x.amin(1, keepdim=True)))
case("amax_int", ["amax", "amin"], [ints(3, 4, low=-9, high=9)], lambda i: (i.amax(1), i.amin(0)))
case("amax_small_ints", ["amax", "amin"], [ints(3, 4, low=0, high=200, dtype=torch.uint8),
                                           ints(3, 4, low=-100, high=100, dtype=torch.int8),
                                           ints(3, 4, low=-999, high=999, dtype=torch.int32)],
     lambda u, s, i: (u.amax(1), s.amin(0), i.to(torch.int16).amax(-1).int()))  # the harness has no int16 .npy
case("amax_bool", ["amax", "amin"], [bools(3, 4)], lambda m: (m.amax(1), m.amin(0)))
case("aminmax", ["aminmax"], [f32(2, 3, 4)],
     lambda x: (*torch.aminmax(x), *torch.aminmax(x, dim=1), *torch.aminmax(x, dim=-1, keepdim=True)))
case("aminmax_keepdim_all", ["aminmax"], [ints(2, 3)], lambda i: torch.aminmax(i, keepdim=True))
case("max_all", ["max"], [f32(2, 3, 4)], lambda x: x.max())
case("max_all_int_bool", ["max", "min"], [ints(3, 4, low=-9, high=9), bools(3, 4)],
     lambda i, m: (i.max(), i.min(), m.max(), m.min()))
case("max_dim", ["max"], [f32(2, 3, 4)], lambda x: (*torch.max(x, 1), *torch.max(x, -1, keepdim=True)))
case("min_dim", ["min"], [f32(2, 3, 4)], lambda x: (*torch.min(x, 0), *torch.min(x, -2, keepdim=True)))
case("max_dim_int", ["max", "min"], [ints(4, 5, low=-50, high=50)], lambda i: (*i.max(1), *i.min(0)))
case("max_dim_0d", ["max"], [f32()], lambda x: torch.max(x, 0))
case("max_other", ["max"], [f32(2, 3, 4), f32(3, 1)], lambda x, y: torch.max(x, y))
case("min_other", ["min"], [f32(2, 3), f32(2, 3)], lambda x, y: torch.min(x, y))
case("max_other_int", ["max", "min"], [ints(3, 4, low=-9, high=9), ints(4, low=-9, high=9)],
     lambda i, j: (torch.max(i, j), torch.min(i, j)))
case("max_other_promote", ["max"], [ints(3, 4, low=-9, high=9), f32(3, 4, low=-9, high=9)], lambda i, x: torch.max(i, x))
case("max_other_bool", ["max", "min"], [bools(3, 4), bools(3, 4)], lambda a, b: (torch.max(a, b), torch.min(a, b)))
case("max_dynamic", ["max"], [f32(2, 3, 4)], lambda x: torch.max(x, -1), dynamic={0: [0, 2]})
case("argmax", ["argmax"], [f32(2, 3, 4)],
     lambda x: (x.argmax(), x.argmax(1), x.argmax(-1, keepdim=True), x.argmax(keepdim=True)))
case("argmin", ["argmin"], [f32(2, 3, 4)], lambda x: (x.argmin(), x.argmin(0), x.argmin(-2, keepdim=True)))
case("argmax_ties", ["argmax", "argmin"], [grid(4, 6, low=-1, high=1)], lambda x: (x.argmax(1), x.argmin(0), x.argmax()))
case("argmax_int", ["argmax", "argmin"], [ints(3, 5, low=-9, high=9)], lambda i: (i.argmax(1), i.argmin(-1)))

# ---- all / any

case("all_any", ["all", "any"], [f32(3, 4, low=-0.5, high=3)],
     lambda x: (torch.all(x > 0), torch.any(x > 2), (x > 0).all(1), (x > 2).any(-1, keepdim=True)))
case("all_any_float_input", ["all", "any"], [grid(3, 4, low=0, high=2)], lambda x: (x.all(1), x.any(0), x.all()))
case("all_any_uint8", ["all", "any"], [ints(3, 4, low=0, high=2, dtype=torch.uint8)],
     lambda u: (u.all(), u.any(1)))
case("all_any_int", ["all", "any"], [ints(3, 4, low=0, high=3)], lambda i: (i.all(0), i.any()))

# ---- std / var / std_mean / var_mean

case("std_all", ["std"], [f32(3, 4)], lambda x: (torch.std(x), torch.std(x, unbiased=False)))
case("std_dim", ["std"], [f32(2, 3, 4)],
     lambda x: (torch.std(x, 1), torch.std(x, (0, -1), keepdim=True, unbiased=False), torch.std(x, -1)))
case("std_correction", ["std"], [f32(2, 3, 4)],
     lambda x: (torch.std(x, 1, correction=0), torch.std(x, (0, 2), correction=2, keepdim=True)))
case("var_all", ["var"], [f32(3, 4)], lambda x: (torch.var(x), torch.var(x, unbiased=False)))
case("var_dim", ["var"], [f32(2, 3, 4)], lambda x: (torch.var(x, 2), torch.var(x, (0, 1), keepdim=True)))
case("var_correction", ["var"], [f32(2, 3, 4)],
     lambda x: (torch.var(x, dim=None, correction=2), torch.var(x, -1, correction=0)))
case("var_int", ["var"], [ints(3, 4)], lambda i: torch.var(i.float(), 1))
case("std_mean", ["std_mean"], [f32(2, 3, 4)],
     lambda x: (*torch.std_mean(x), *torch.std_mean(x, 1), *torch.std_mean(x, (0, -1), keepdim=True, unbiased=False)))
case("var_mean", ["var_mean"], [f32(2, 3, 4)],
     lambda x: (*torch.var_mean(x, [0, 2]), *torch.var_mean(x, -1, keepdim=True), *torch.var_mean(x, 1, correction=0)))
case("var_std_dynamic", ["var", "std_mean"], [f32(2, 3, 4)],
     lambda x: (torch.var(x, 1), *torch.std_mean(x, (0, 2), keepdim=True)), dynamic={0: [0, 1, 2]})

# ---- median: the lower of the two middle values; the index torch's CPU kernel picks among equal values
# (grid inputs: many ties), the first NaN's for a row holding one

case("median_dim", ["median"], [grid(3, 6, 5)],
     lambda x: (*torch.median(x, 1), *torch.median(x, -1, keepdim=True), *torch.median(x, 0)))
case("median_all", ["median"], [grid(4, 6)], lambda x: (torch.median(x), torch.median(x[:3, :3])))
case("median_int", ["median"], [ints(4, 7, low=-3, high=3)], lambda i: (*torch.median(i, 1), torch.median(i)))
case("median_0d", ["median"], [f32()], lambda x: (*torch.median(x, 0), *torch.median(x, -1, keepdim=True),
                                               torch.median(x)))


def _median_with_nans(x):
    # NaN where x > 1 (some rows have none); the harness takes no NaN outputs, so they become 99
    v, i = torch.median(x.masked_fill(x > 1, float("nan")), 1)
    return v.masked_fill(v.isnan(), 99.0), i, torch.median(x.masked_fill(x > 1, float("nan"))).isnan()


case("median_nan", ["median"], [grid(4, 6)], _median_with_nans)
case("median_dynamic", ["median"], [grid(3, 6, 4)], lambda x: (*torch.median(x, 1), *torch.median(x, -1, True)),
     dynamic={0: [0, 1, 2]}, opsets=(10, 11, 13, 17), fails={9: "needs opset 10 or later"})

# ---- norm / frobenius_norm / linalg_*norm

NORM_IN_TORCH_2 = "PyTorch 2 traces torch.norm as aten::linalg_vector_norm (its rows test that)"
case("norm_p", ["norm"], [f32(2, 3, 4)],
     lambda x: (x.norm(p=1), x.norm(p=3), x.norm(2), x.norm(p=INF, dim=1), x.norm(p=-INF, dim=-1, keepdim=True)),
     torch1_only=NORM_IN_TORCH_2)
case("norm_zero", ["norm"], [grid(3, 4, low=-1, high=1)], lambda x: x.norm(p=0, dim=1), torch1_only=NORM_IN_TORCH_2)
case("norm_dim", ["norm"], [f32(2, 3, 4)], lambda x: (torch.norm(x, 3, dim=(0, 2)), torch.norm(x, 1, dim=-1, keepdim=True)),
     torch1_only=NORM_IN_TORCH_2)
case("norm_dtype", ["norm"], [f32(2, 3)], lambda x: (torch.norm(x, 3, dim=1, dtype=torch.float64),
                                                     torch.norm(x, 1.5, dtype=torch.float64)),
     torch1_only=NORM_IN_TORCH_2)
case("norm_scalar", ["norm"], [f32(2, 3)], lambda x: (torch.ops.aten.norm(x, 3), torch.ops.aten.norm(x)))
case("frobenius_norm", ["frobenius_norm"], [f32(2, 3, 4)],
     lambda x: (torch.norm(x), torch.norm(x, dim=(1, 2), keepdim=True), torch.norm(x, "fro", dim=(0, -1)),
                torch.ops.aten.frobenius_norm(x)),
     torch1_only="PyTorch 2's aten::frobenius_norm has only the overload with dim, and torch.norm traces "
                 "as aten::linalg_vector_norm")
case("linalg_vector_norm", ["linalg_vector_norm"], [f32(2, 3, 4)],
     lambda x: (torch.linalg.vector_norm(x), torch.linalg.vector_norm(x, 1, dim=1),
                torch.linalg.vector_norm(x, INF, dim=(0, 2)), torch.linalg.vector_norm(x, -INF, dim=-1, keepdim=True),
                torch.linalg.vector_norm(x, 3.5, keepdim=True)))
case("linalg_vector_norm_zero_dtype", ["linalg_vector_norm"], [grid(3, 4, low=-1, high=1)],
     lambda x: (torch.linalg.vector_norm(x, 0, dim=1), torch.linalg.vector_norm(x, 2, dim=0, dtype=torch.float64)))
case("linalg_matrix_norm", ["linalg_matrix_norm"], [f32(2, 3, 4)],
     lambda x: (torch.linalg.matrix_norm(x), torch.linalg.matrix_norm(x, 1), torch.linalg.matrix_norm(x, -1),
                torch.linalg.matrix_norm(x, INF, keepdim=True), torch.linalg.matrix_norm(x, -INF, dim=(2, 0)),
                torch.linalg.matrix_norm(x, "fro", dim=(0, -1), keepdim=True)))
case("linalg_matrix_norm_nuc", ["linalg_matrix_norm"], [f32(3, 3)], lambda x: torch.linalg.matrix_norm(x, "nuc"),
     opsets=[], fails={o: "singular values" for o in (9, 17)})
case("linalg_norm", ["linalg_norm"], [f32(2, 3, 4)],
     lambda x: (torch.linalg.norm(x), torch.linalg.norm(x, dim=1), torch.linalg.norm(x, dim=(1, 2), keepdim=True),
                torch.linalg.norm(x, 3, dim=-1), torch.linalg.norm(x, INF, dim=(0, 1)),
                torch.linalg.norm(x[0], -1), torch.linalg.norm(x[0, 0], 1)))
case("linalg_norm_str", ["linalg_norm"], [f32(3, 4)],
     lambda x: (torch.linalg.norm(x, "fro"), torch.linalg.norm(x.unsqueeze(0), "fro", dim=(0, 2))))

# ---- cumsum

case("cumsum", ["cumsum"], [f32(2, 3, 4)], lambda x: (x.cumsum(1), x.cumsum(-1), x.cumsum(0)))
case("cumsum_int", ["cumsum"], [ints(3, 5, low=-9, high=9, dtype=torch.int32), bools(4)],
     lambda i, m: (i.cumsum(1), i.cumsum(0), m.cumsum(0)))
case("cumsum_dtype", ["cumsum"], [ints(3, 4)], lambda i: (i.cumsum(1, dtype=torch.float32), i.cumsum(0, dtype=torch.int32)))
case("cumsum_", ["cumsum_"], [f32(3, 4)], lambda x: (x * 1).cumsum_(-1))
case("cumsum_0d", ["cumsum"], [f32()], lambda x: x.cumsum(0))
# A long float32 sum fed to cos, as a phase vocoder accumulates its phase: libtorch sums in double,
# a CumSum in float32 drifts by 1e-3 rad and more over 2000 terms up to 60.
case("cumsum_long_phase", ["cumsum", "cos"], [f32(2, 2000, low=0.0, high=60.0)], lambda x: torch.cos(x.cumsum(-1)),
     since=11, atol=1e-4)
case("cumsum_dynamic", ["cumsum"], [f32(2, 5)], lambda x: x.cumsum(1), since=11, dynamic={0: [0, 1]},
     fails={9: "needs a static size along dim 1"})
case("cumsum_dynamic_other_dim", ["cumsum"], [f32(2, 5)], lambda x: x.cumsum(1), dynamic={0: [0]})
