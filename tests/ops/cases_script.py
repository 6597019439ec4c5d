"""Rows for what only scripted graphs hold: control flow (prim::If / prim::Loop, converted by the
core), list mutation on static lists and on sequences built in loops, range arithmetic, None
tests and refinements, and checks that raise or warn."""
import math
import warnings
from typing import List, Optional

import torch
from torch import Tensor
import torch.nn.functional as F
from op_framework import UNREACHABLE, Input, case, f32, ints

UNREACHABLE.update({
    "prim::Constant": "handled by the core in every graph; not a row of its own (every row has constants)",
    "prim::GetAttr": "freezing resolves module attributes; the ones left (training mode) are read by the core",
    "prim::ConstantSplit": "torch 1.13 registers no operator for it, so no graph that libtorch can run or load "
                           "holds one (torch.onnx maps it for graphs its own passes build)",
    "onnx::Placeholder": "torch 1.13 registers no operator for it; only torch.onnx's own passes create it",
    "prim::shape": "torch 1.13 registers no operator for it (scripted x.shape compiles to aten::size)",
})


def s_if_on_values(x: Tensor):
    if bool(x.sum() > 0):
        y = x[:1] * 2.0
    else:
        y = torch.cat([x, x], 0)
    return y


def s_loop_carried(x: Tensor):
    h = x[0]
    for i in range(1, x.size(0), 2):      # __range_length / __derive_index
        h = torch.tanh(h + x[i])
    n = 0
    while bool(h.abs().sum() > 0.5) and n < 20:
        h = h * 0.5
        n += 1
    return h, torch.tensor(n)


def s_list_in_loop(x: Tensor):
    xs: List[Tensor] = []
    for i in range(x.size(0)):
        xs.append(x[i] * float(i + 1))
    xs.insert(0, x[0] - 1.0)
    last = xs.pop()
    xs[1] = xs[1] + 1.0
    del xs[0]
    ys = list(xs)
    return torch.stack(ys, 0), last, torch.tensor(len(ys))


def s_pad_run_time_list(x: Tensor):
    xs: List[Tensor] = []
    blocks: List[Tensor] = []
    for i in range(x.size(0)):  # the lists' lengths are x's, known at run time: ONNX sequences
        xs.append(x[i, : i + 1])
        blocks.append(x[: i + 1, :2] * float(i))
    return (torch.nn.utils.rnn.pad_sequence(xs, batch_first=True, padding_value=-1.0),
            torch.nn.utils.rnn.pad_sequence(xs), torch.nn.utils.rnn.pad_sequence(blocks, padding_value=0.5))


def s_static_list(x: Tensor):
    xs = [x, x * 2.0]
    xs.append(x * 3.0)
    xs.insert(1, x - 1.0)
    first = xs.pop(0)
    xs[0] = xs[0] * 0.5
    del xs[1]
    return torch.cat(list(xs), 0), first


def s_checks(x: Tensor):
    if x.dim() not in [2, 3]:                # decided at export time: the rank is known
        raise ValueError("expected a 2-d or 3-d input")
    if bool(x.sum() > 1e6):                  # decided at run time: the raising branch stays
        raise ValueError(f"input too large: {x.size(0)} rows")  # aten::format of a size: not folded
    else:
        y = x * 2.0
    if bool(x.sum() < -1e6):
        warnings.warn("very negative input")
        y = y * 0.0
    opt: Optional[Tensor] = None
    if x.size(0) < 1000:
        opt = y
    if opt is not None:                      # __isnot__, unchecked_cast
        y = opt + 1.0
    if opt is None:                          # __is__
        y = y - 1.0
    big = max(x.size(0), x.size(1))          # prim::max
    small = min(x.size(0), x.size(1))        # prim::min
    return y + big - small


def _none_if_positive(x: Tensor) -> Optional[Tensor]:
    if bool(x.sum() > 0):                    # None in the then branch
        m = None
    else:
        m = x < x.mean()
    return m


def _mask_unless_positive(x: Tensor) -> Optional[Tensor]:
    if bool(x.sum() <= 0):                   # None in the else branch
        m = x > x.mean()
    else:
        m = None
    return m


def _nested_optional(x: Tensor) -> Optional[Tensor]:
    if bool(x.max() > 0):                    # an Optional made by an inner If
        if bool(x.sum() > 0):
            m = None
        else:
            m = x > 0
    else:
        m = x < -1.0
    return m


def _fill_if_present(v: Tensor, m: Optional[Tensor]) -> List[Tensor]:
    if m is not None:
        v = v.masked_fill(m, 0.0)
    return [v, torch.tensor(m is None)]


def s_optional_from_branch(x: Tensor):
    # Which branch runs depends on the data: one call takes each path. The Optional travels as a
    # tensor plus a presence flag, read only through the None tests and the uses they guard.
    pos, neg = x.abs() + 0.1, -x.abs() - 0.1
    return (_fill_if_present(pos, _none_if_positive(pos)) + _fill_if_present(neg, _none_if_positive(neg)) +
            _fill_if_present(pos, _mask_unless_positive(pos)) + _fill_if_present(neg, _mask_unless_positive(neg)) +
            _fill_if_present(pos, _nested_optional(pos)) + _fill_if_present(neg, _nested_optional(neg)))


def s_optional_by_batch(x: Tensor):
    # Emformer's padding mask: None for a batch of one, known only at run time with a dynamic batch.
    mask = None if x.size(0) == 1 else x > 0
    if mask is not None:
        x = x.masked_fill(mask, -1.0)
    return x * 2.0


def s_uninitialized_each_branch(y: Optional[Tensor]):
    # Each inner branch leaves a different result uninitialized (the early return): the
    # placeholders take the int32 dtype and rank 2 of what the other branch gives, which
    # TorchScript records for neither (PyTorch's test_uninitialized_optional).
    if y is not None:
        if y.shape[1] < 5:
            if y.size(0) == 1:
                y = y + 4
            else:
                return y
    return y


def s_tolist(x: Tensor):
    sizes: List[int] = x.size()
    values: List[List[int]] = (x > 0).long().tolist()   # prim::tolist (a list standing for the tensor)
    return torch.tensor(sizes), x * len(values)


def s_device_type_in(x: Tensor):
    # PyTorch 2.x's nn.MultiheadAttention checks `x.device.type in ["cpu", "cuda", ...]`: a string in
    # a list of strings, both known at export.
    if x.device.type in ["cpu", "cuda"]:
        return x * 2.0
    return x


def s_uninitialized(x: Tensor):
    # An early return inside a loop leaves the loop's other results uninitialized on that path.
    for i in range(x.size(0)):
        if bool(x[i].sum() > 100.0):
            return x[i]
    return x[0] * 0.5


def forked_affine(x: Tensor, scale: float) -> Tensor:
    return x * scale + 1.0


def s_fork_wait(x: Tensor):
    # torch.jit.fork runs a call asynchronously; in an ONNX graph it is the call itself, in order.
    future = torch.jit.fork(forked_affine, x, 2.0)
    y = torch.relu(x)
    return torch.jit.wait(future) + y


def fork_wait_traced(x):
    return torch.jit.wait(torch.jit.fork(torch.sin, x)) * x


# prim::fork and aten::wait are inlined before conversion (prepare.cpp): the rows declare what is
# converted, and fail with "no mapping for prim::fork" without that pass.
case("fork_wait", ["add", "relu"], [f32(2, 3)], s_fork_wait, script=True)
case("fork_wait_traced", ["mul"], [f32(2, 3)], fork_wait_traced)
case("if_on_tensor_values", ["prim::If"], [f32(3, 4)], s_if_on_values, script=True, since=11,
     fails={9: "different shapes in the two branches"})
case("loop_carried_state", ["prim::Loop", "__range_length", "__derive_index"], [f32(5, 3)], s_loop_carried,
     script=True)
case("list_ops_in_loop", ["append", "insert", "pop", "_set_item", "Delete", "list", "len"], [f32(4, 3)],
     s_list_in_loop, script=True, since=13, fails={11: "from opset 13"})
case("pad_sequence_run_time_list", ["pad_sequence"], [f32(4, 5)], s_pad_run_time_list, script=True, since=13,
     dynamic={0: [0]})
case("list_ops_static", ["append", "insert", "pop", "_set_item", "Delete", "list"], [f32(2, 3)], s_static_list,
     script=True, since=11)
case("checks_and_refinements", ["prim::RaiseException", "aten::format", "warn", "__contains__", "__is__",
                                "__isnot__", "prim::unchecked_cast", "prim::max", "prim::min"],
     [f32(3, 4)], s_checks, script=True, since=11, fails={9: "different shapes in the two branches"})
case("tolist", ["prim::tolist"], [f32(3, 4)], s_tolist, script=True)
case("str_in_str_list", ["__contains__"], [f32(2, 3)], s_device_type_in, script=True)
case("optional_from_branch", ["prim::If", "__is__", "__isnot__", "prim::unchecked_cast"], [f32(3, 4)],
     s_optional_from_branch, script=True, since=11, fails={9: "different shapes in the two branches"})
case("optional_by_batch", ["prim::If", "__isnot__", "prim::unchecked_cast"], [f32(2, 3)], s_optional_by_batch,
     script=True, dynamic={0: [0]}, since=11, fails={9: "different shapes in the two branches"})
case("uninitialized_each_branch", ["prim::Uninitialized", "prim::If"], [ints(3, 4, dtype=torch.int32)],
     s_uninitialized_each_branch, script=True, dynamic={0: [0, 1]}, since=11,
     fails={9: "different shapes in the two branches"})
case("uninitialized_early_return", ["prim::Uninitialized", "prim::Loop"], [f32(3, 4)], s_uninitialized,
     script=True, since=11, fails={9: "different shapes in the two branches"})
case("constant_chunk", ["prim::ConstantChunk"], [f32(6, 4)], ir="""graph(%x : Tensor):
  %a : Tensor, %b : Tensor, %c : Tensor = prim::ConstantChunk[chunks=3, dim=0](%x)
  %y : Tensor = aten::mul(%a, %c)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%y, %b)
  return (%t)""")
def s_device_type(x: Tensor):
    warnings.warn(x.device.type)          # folded with the device (UNREACHABLE["prim::type"])
    return x * 2.0


case("prim_type", ["warn"], [f32(2, 3)], s_device_type, script=True)


def s_print(x: Tensor):
    first = x[:, 0]
    if bool(first.sum() > 1e6):           # decided at run time: the branch that prints stays
        print("large first column:", first)
        first = first * 0.0
    print("rows:", x.size(0))
    return first + 1.0


case("print_is_dropped", ["prim::Print"], [f32(3, 4)], s_print, script=True)


# ---- the TorchScript value world: tensors where ints/floats are wanted, lists at run time

def s_list_indexed_by_tensor(x: Tensor, y: Tensor, i: Tensor):
    return [x, y, x + y][i]


def s_int_implicit(d: Tensor, e: Tensor):
    return torch.zeros(d[0], e[0]) + d.sum()


def s_linspace_tensors(x: Tensor, steps: Tensor):
    return torch.linspace(x[0], x[1], steps)


def s_float_implicit(x: Tensor, p: Tensor):
    return F.dropout(x, p, False) * 2.0


def s_tensor_of_runtime_list(x: Tensor):
    return x + torch.tensor([1.5 * i for i in range(x.size(0))]).unsqueeze(1)


def s_list_extend_insert_pop(x: Tensor):
    a: List[Tensor] = [x]
    a += [x * 2.0]
    a.insert(0, x - 1.0)
    last = a.pop()
    for i in range(x.size(0)):
        a.append(x[i:i + 1].expand_as(x))
    return torch.stack(a) + last, torch.tensor(len(a))


case("list_indexed_by_tensor", ["__getitem__", "IntImplicit"], [f32(2), f32(2), ints(high=3)],
     s_list_indexed_by_tensor, script=True, since=11)
case("int_implicit", ["IntImplicit", "zeros"], [ints(1, low=1, high=4), ints(1, low=1, high=4)], s_int_implicit,
     script=True, dynamic_check=False)
case("linspace_tensor_arguments", ["IntImplicit", "linspace"], [f32(2), ints(low=2, high=6)], s_linspace_tensors,
     script=True, since=11, dynamic_check=False)
case("float_implicit", ["FloatImplicit", "dropout"], [f32(2, 3), f32(low=0.1, high=0.5)], s_float_implicit,
     script=True)
case("tensor_of_runtime_list", ["tensor", "append"], [f32(3, 2)], s_tensor_of_runtime_list, script=True, since=13,
     dynamic={0: [0]})
case("list_extend_insert_pop", ["add_.t", "insert", "pop", "append", "stack", "len"], [f32(3, 2)],
     s_list_extend_insert_pop, script=True, since=13, dynamic={0: [0]})


# ---- op arguments known only at run time: numbers the model takes or computes from tensors
# (PyTorch's test_unsqueeze_dynamic_dim, test_triu, test_one_hot, test_baddbmm_dynamic, ...)

def s_run_time_dims(x: Tensor, d: Tensor):
    # d == 1: x's dim 1 (size 1) is squeezed, dim 0 (size 2) is kept, as torch keeps it
    return x.unsqueeze(int(d)), x.unsqueeze(-int(d)), x.squeeze(int(d)), x.squeeze(int(d) - 1) * 2.0


def s_run_time_diagonal(x: Tensor, k: Tensor):
    return torch.triu(x, int(k)), torch.tril(x, -int(k)), x.tril_(int(k) - 1)


def s_run_time_classes(i: Tensor, n: Tensor):
    return F.one_hot(i, int(n[0]))


def s_run_time_factors(b1: Tensor, b2: Tensor, alpha: Tensor):
    beta = float(alpha) / 4.0
    x = b1[:, :, :1] + 1.0  # broadcast over the product's columns
    return torch.baddbmm(x, b1, b2, alpha=int(alpha), beta=beta), torch.addmv(x[0, :, 0], b1[0], b2[0, :, 0], beta=beta)


def s_run_time_list_slice(x: Tensor):
    return x.new_zeros(x.shape[1: x.size(2)]) + 1.0


case("run_time_dims", ["unsqueeze", "squeeze", "Int"], [f32(2, 1, 4), ints(low=1, high=2)], s_run_time_dims,
     script=True, since=13)
case("run_time_diagonal", ["triu", "tril", "tril_"], [f32(2, 3, 4), ints(low=0, high=3)], s_run_time_diagonal,
     script=True, since=11)
case("run_time_one_hot_classes", ["one_hot"], [ints(2, 3, high=5), f32(1, low=6, high=7)], s_run_time_classes,
     script=True, since=11)
case("run_time_scale_factors", ["baddbmm", "addmv"], [f32(2, 3, 4), f32(2, 4, 5), ints(low=2, high=6)],
     s_run_time_factors, script=True)
case("run_time_list_slice", ["slice.t", "new_zeros"], [f32(1, 2, 3, 4)], s_run_time_list_slice, script=True, since=10,
     dynamic={0: [0, 1, 2, 3]})


class AssignsOwnAttribute(torch.nn.Module):
    """forward assigns self.scale and self.offset (prim::SetAttr) and reads them back."""
    def __init__(self):
        super().__init__()
        self.base = torch.tensor([1.0, 2.0, 3.0])
        self.scale = torch.zeros(3)
        self.offset = 0.0
        self.inner = torch.nn.Linear(3, 3)

    def forward(self, x):
        self.scale = self.base * 2.0
        self.offset = float(x.size(0))
        y = x * self.scale + self.offset
        self.scale = self.scale + y.mean()
        return self.inner(y) * self.scale


def s_index_put_slices(x: Tensor, idx: Tensor, v: Tensor):
    x[1:2, 1:3, idx] += v
    return x


def s_index_put_rows_then_index(x: Tensor, idx: Tensor, v: Tensor):
    x[1:3, idx] = v
    return x


def s_index_put_rows_then_index_add(x: Tensor, idx: Tensor, v: Tensor):
    x[1:3, idx] += v
    return x


def s_index_put_index_then_slice(x: Tensor, idx: Tensor, v: Tensor):
    x[idx, 1:3] = v
    return x


def s_index_put_full_slice_slice_index(x: Tensor, idx: Tensor, v: Tensor):
    x[:, 1:4, idx] = v
    return x


def s_index_put_slice_scalar(x: Tensor, idx: Tensor):
    x[1:3, idx] = 2.5
    return x


def distinct_ints(count, high):
    """`count` different integers in [0, high): indices an assignment writes once each."""
    return Input((count,), torch.int64, lambda s, g: torch.randperm(high, generator=g)[:count])


def s_if_on_tensor(x: Tensor):
    if x.sum() > 0:
        return x * 2.0
    return x - 1.0


def s_if_on_one_element(x: Tensor):
    if x[0:1] > 0:  # a 1-element 1-d condition, as TorchScript allows
        return x * 2.0
    return x - 1.0


def s_same_device(x: Tensor, y: Tensor):
    if x.device == y.device:
        return x + y
    return x - y


def s_interpolate_computed_scale(x: Tensor):
    return F.interpolate(x, scale_factor=float(x.size(2)) / 2.0, mode="nearest")


case("assigns_own_attribute", ["linear", "mul"], [f32(2, 3)], module=AssignsOwnAttribute, script=True)


class AssignsAttributeOnAPath(torch.nn.Module):
    """forward assigns attributes inside branches and loops (PyTorch's test_set_attr_*): each read
    sees the value of the path taken. It starts them afresh, so calls give the same results."""
    def __init__(self):
        super().__init__()
        self.bias = torch.full((3,), 0.5)
        self.acc = torch.zeros(3)
        self.count = 0

    def forward(self, x):
        self.acc = self.bias
        self.count = 0
        if bool(x.sum() > 0):
            self.acc = self.acc + x[0]
        else:
            self.acc = self.acc * 2.0
        for i in range(x.size(0)):
            if i == 1:
                for j in range(2):
                    self.acc = self.acc + x[i] * float(j + 1)
            self.count = self.count + 1
        return x + self.acc, torch.tensor(self.count)


case("assigns_attribute_on_a_path", ["prim::If", "prim::Loop"], [f32(3, 3, low=1.0, high=2.0)],
     module=AssignsAttributeOnAPath, script=True, since=11, dynamic={0: [0]})
case("assigns_attribute_on_a_path_other_branch", ["prim::If", "prim::Loop"], [f32(3, 3, low=-2.0, high=-1.0)],
     module=AssignsAttributeOnAPath, script=True, since=11)
case("index_put_slices_script", ["index_put_"], [f32(3, 4, 5), ints(2, high=5), f32(1, 2, 2)], s_index_put_slices,
     script=True, since=11)
# Every form of `x[a:b, idx] = v` and `+=` in script (issue 30).
case("index_put_rows_then_index_script", ["index_put_"], [f32(4, 5), distinct_ints(2, 5), f32(2, 2)],
     s_index_put_rows_then_index, script=True, since=11)
case("index_put_rows_then_index_add_script", ["index_put_"], [f32(4, 5), distinct_ints(3, 5), f32(2, 3)],
     s_index_put_rows_then_index_add, script=True, since=11)
case("index_put_index_then_slice_script", ["index_put_"], [f32(4, 5), distinct_ints(2, 4), f32(2, 2)],
     s_index_put_index_then_slice, script=True, since=11)
case("index_put_full_slice_slice_index_script", ["index_put_"], [f32(2, 5, 6), distinct_ints(3, 6), f32(2, 3, 3)],
     s_index_put_full_slice_slice_index, script=True, since=11)
case("index_put_slice_scalar_script", ["index_put_"], [f32(4, 5), distinct_ints(2, 5)], s_index_put_slice_scalar,
     script=True, since=11)
case("if_on_tensor", ["gt"], [f32(2, 3)], s_if_on_tensor, script=True)
case("if_on_one_element", ["gt"], [f32(3)], s_if_on_one_element, script=True)
case("same_device", ["add"], [f32(2), f32(2)], s_same_device, script=True)
case("interpolate_computed_scale", ["upsample_nearest2d"], [f32(1, 2, 4, 4)], s_interpolate_computed_scale,
     script=True, since=11, dynamic_check=False)


def s_ceil_floor_to_int(x: Tensor):
    # math.ceil / math.floor of a float are ints (Emformer: num_segs = math.ceil(length / segment_length)),
    # here also in an int list indexed at run time, which becomes an ONNX sequence of one element type
    n = x.size(0)
    segs = math.ceil(n / 4)
    widths = [n, 2 * segs, math.floor(n / 3)]
    total = x[0] * 0.0
    for i in range(3):
        total = total + x[widths[i] % n]
    return total, torch.tensor(segs), torch.tensor(math.floor(n / 3))


case("ceil_floor_to_int", ["aten::ceil.float", "aten::floor.float"], [f32(9, 3)], s_ceil_floor_to_int, script=True,
     dynamic={0: [0]})


def _scaled_by_length(x: Tensor, mask: List[bool]) -> Tensor:
    return x * float(len(mask))


def s_optional_carried_by_loop(x: Tensor):
    # Emformer's attention mask: an Optional list that stays None, refined by `is not None` in a loop
    # (which makes TorchScript carry it through the loop)
    mask: Optional[List[bool]] = None
    if x.dim() > 5:
        mask = [True, False]
    out = x[0] * 0.0
    for i in range(x.size(0)):
        out = out + x[i]
        if mask is not None:
            out = out + _scaled_by_length(x[i], mask)
    return out


def s_list_repeat(x: Tensor):
    # pitch detection's torch.cat(pad_length * [column], dim=-1); an int list of sizes repeated
    col = x[..., :1]
    return torch.cat(2 * [col] + [col] * 3, dim=-1), torch.tensor(x.size()[-1:] * 2)


case("optional_carried_by_loop", ["prim::Loop"], [f32(4, 3)], s_optional_carried_by_loop, script=True,
     dynamic={0: [0]})
case("list_repeat", ["aten::mul.left_t", "aten::mul.right_"], [f32(2, 5)], s_list_repeat, script=True,
     dynamic={0: [1]})


def s_cpu(x: Tensor):
    return x.cpu() * 2.0


case("cpu", ["cpu"], [f32(2, 3)], s_cpu, script=True)
