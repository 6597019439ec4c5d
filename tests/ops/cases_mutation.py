"""Rows for in-place writes the core must carry back to the written tensor: writes through
views (slices, selects, reshapes, transposes) in traced graphs, in-place ops whose result is
used through an alias, and embedding's max_norm renormalisation of its weight."""
import torch
from torch import Tensor
from op_framework import Input, case, f32, ints


def write_column(x):
    y = x * 1
    y[:, 1] = x[:, 0] * 2.0          # copy_ into select(slice(y))
    return y


def write_block(x):
    y = x * 1
    y[0, 1:3] = 5.0                  # fill_ into slice(select(y))
    y[1:, ::2] += 1.0                # add_ into a stepped slice
    return y


def write_through_reshape(x):
    y = x * 1
    y.view(-1)[2:5] = 0.0            # the write lands in y's own storage
    return y


def write_through_transpose(x):
    y = x * 1
    y.t()[0] = -1.0                  # the first column of y
    return y


def stale_view(x):
    y = x * 1
    first = y[0]                     # a view made before the write...
    y.add_(1.0)
    return first * 1                 # ...sees it


def alias_of_inplace(x):
    y = x * 1
    z = y.mul_(2.0)                  # z is y
    z.add_(1.0)
    return y


def set_to_other(x, y):
    z = x * 1.0
    z.set_(y)                        # z takes y's data and shape
    return z + 1, x * 2


def write_run_time_step(x, stop, step):
    y = x * 1
    y[:stop:step, 0::step] = 1.0     # the slice's stop and step are inputs: Slice, then slice_scatter
    return y


def int_scalar(value):
    return Input((), torch.int64, lambda shape, gen: torch.tensor(value))


def s_out_arguments(a: Tensor, b: Tensor, k: Tensor):
    """out= overloads: each result lands in its out tensor, in that tensor's dtype, and is returned."""
    q = torch.zeros_like(a)
    r = torch.div(a, b.abs() + 1, out=q)                    # aten::div.out
    n = torch.zeros_like(k)
    torch.div(k, k + 1, rounding_mode="floor", out=n)       # aten::div.out_mode into int64
    f = torch.zeros_like(a)
    torch.add(k, k, out=f)                                  # an int64 result written into float32
    v = torch.zeros([a.size(0)])
    i = torch.zeros([a.size(0)], dtype=torch.long)
    if torch.jit.is_scripting():                            # two outs: aten::max.dim_max, whose
        torch.max(a, 1, False, max=v, max_values=i)         # keywords eager PyTorch spells out=(v, i)
    else:
        torch.max(a, 1, False, out=(v, i))
    return r, q * 1, n, f, v * 1, i + 0


case("write_through_select_slice", ["copy_", "select", "slice"], [f32(3, 4)], write_column, since=11)
case("write_through_slices", ["fill_", "add_", "slice"], [f32(3, 5)], write_block, since=11)
case("write_through_reshape", ["view", "fill_"], [f32(2, 4)], write_through_reshape, since=11)
case("write_through_transpose", ["t", "fill_"], [f32(3, 4)], write_through_transpose, since=11)
case("view_made_before_write", ["add_", "select"], [f32(3, 4)], stale_view)
case("alias_of_inplace_result", ["mul_", "add_"], [f32(3, 4)], alias_of_inplace)
case("set_to_other_tensor", ["set_"], [f32(2, 3), f32(4, 5)], set_to_other)
case("slice_scatter", ["slice_scatter"], [f32(4, 6), f32(4, 2), f32(2, 6)],
     lambda x, s, r: (torch.slice_scatter(x, s, 1, 1, 5, 2), torch.slice_scatter(x, r, 0, 2, 4, 1)), since=11)
case("select_scatter", ["select_scatter"], [f32(4, 6), f32(6)],
     lambda x, s: (torch.select_scatter(x, s, 0, 2), torch.select_scatter(x, s[:4], 1, -1)), since=11)
case("write_through_run_time_step", ["fill_", "slice"], [f32(7, 5), int_scalar(5), int_scalar(2)],
     write_run_time_step, since=11)
case("out_arguments", ["div", "add", "max"], [f32(2, 3), f32(2, 3), ints(2, 3)], s_out_arguments, script=True)
case("embedding_max_norm", ["embedding", "embedding_renorm_"], [ints(5, high=6)],
     module=lambda: EmbeddingMaxNorm())


class EmbeddingMaxNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(6, 4, max_norm=1.0)
        with torch.no_grad():
            self.emb.weight.mul_(3.0)    # most rows exceed max_norm

    def forward(self, i):
        return self.emb(i) * 1
