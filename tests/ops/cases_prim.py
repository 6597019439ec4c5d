"""prim pack rows (and the aten ops scripted code uses on numbers and lists): scalars, lists,
shapes, dtype changes."""
import torch
from torch import Tensor
from op_framework import case, f32, ints


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
    # x.dim() at the top level is folded before conversion (ranks are fixed); in a branch it is not.
    if bool(x.sum() > -1e9):
        return x * x.dim()
    return x


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


def s_infer_size(x: Tensor, w: Tensor):
    return x * w.expand(torch._C._infer_size(x.size(), w.size()))


# Folded (static shapes) and computed at run time (a dynamic axis): w (3, 1) broadcast against x.
case("infer_size", ["_infer_size", "size", "expand"], [f32(2, 3, 4), f32(3, 1)], s_infer_size, script=True)
case("infer_size_dynamic", ["_infer_size", "size", "expand"], [f32(2, 3, 4), f32(3, 1)], s_infer_size,
     script=True, dynamic={0: [0, 2]})


case("list_concat", ["add.t", "size", "expand"], [f32(2, 3)], s_list_concat, script=True)
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


# ---- list overloads: whole-list comparison, slicing and concatenation of int lists

def s_int_list_compare(x: Tensor, y: Tensor):
    same = x.size() == y.size()
    differ = x.size() != [2, 5]
    return x * float(same) + y * float(differ)


def s_int_list_slice(x: Tensor):
    return x.new_zeros(x.shape[2:]) + x.sum() + x.view(list(x.size()[:1]) + [-1]).sum(1)[0]


def s_int_list_slice_list(x: Tensor):
    return x.view([x.size(0), -1, 2][:2] + list(x.size()[3:]))


def s_int_list_slice_unpack(x: Tensor):
    a, b = x.shape[-2:]
    return x.reshape(list(x.size()[:-2]) + [a * b])


def s_list_slice_of_list(x: Tensor):
    parts = x.chunk(4, 1)[1:3] + x.chunk(4, 1)[-1:]
    return torch.cat(parts, 1)


case("int_list_compare", ["eq.int_list", "ne.int_list", "size"], [f32(2, 3), f32(2, 3)], s_int_list_compare,
     script=True)
case("int_list_compare_runtime", ["eq.int_list", "size"], [f32(2, 3), f32(2, 3)], s_int_list_compare, script=True,
     dynamic={0: [0], 1: [0]})
case("int_list_slice", ["slice.t", "add.t", "size"], [f32(2, 3, 4, 5)], s_int_list_slice, script=True)
case("int_list_slice_unpack", ["slice.t", "add.t", "list", "prim::ListUnpack"], [f32(2, 3, 4, 5)],
     s_int_list_slice_unpack, script=True, dynamic={0: [0, 3]})
case("int_list_slice_list", ["slice.t", "add.t"], [f32(2, 3, 4, 5)], s_int_list_slice_list, script=True)
case("list_slice_of_list", ["slice.t", "add.t", "chunk", "cat"], [f32(2, 8)], s_list_slice_of_list, script=True)


def s_all_any_lists(x: Tensor):
    known = all([x.dim() == 2, x.size(1) == 3])               # folded: every element is known
    data = all([bool(x.sum() > -100.0), bool(x.max() > -100.0)])
    some = any([bool(x.min() > 100.0), bool(x.sum() > -100.0)])
    ints_all = all([x.size(0), int(x.sum() > -100.0)])
    ints_any = any([0, int(x.min() > 100.0)])
    floats_all = all([1.5, float(x.sum() > -100.0)])
    floats_any = any([0.0, float(x.min() > 100.0)])
    return x * float(known) + float(data) + float(some) + float(ints_all) + 2.0 * float(ints_any) + \
        4.0 * float(floats_all) + 8.0 * float(floats_any)


case("all_any_of_lists", ["all.bool", "any.bool", "all.int", "any.int", "all.float", "any.float"], [f32(2, 3)],
     s_all_any_lists, script=True)
