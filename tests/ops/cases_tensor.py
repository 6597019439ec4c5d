"""tensor pack rows: shapes, indexing, joining and splitting, advanced indexing, gather/scatter,
sorting, triangular and layout ops."""
import torch
from op_framework import NEW_OPSETS, bools, case, f32, grid, ints

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


def s_unflatten(x):
    return x.unflatten(1, (2, -1)), x.unflatten(-1, [5, 1]), x.unflatten(0, (1, -1))


case("unflatten", ["unflatten"], [f32(2, 6, 5)], s_unflatten, script=True, dynamic={0: [0]})
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
# A 0-d index keeps the axis with size 1 ([3, 4] -> [3, 1]), given as a constant or as an input.
case("index_select_0d_index", ["index_select"], [f32(3, 4), ints(high=4)],
     lambda x, i: (x.index_select(1, i), x.index_select(0, torch.tensor(2))))
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
case("pad_sequence", ["pad_sequence"], [f32(3, 2), f32(5, 2), f32(1, 2)],
     lambda a, b, c: (torch.nn.utils.rnn.pad_sequence([a, b, c]),
                      torch.nn.utils.rnn.pad_sequence([a, b, c], batch_first=True, padding_value=-1.5)))
case("pad_sequence_ints", ["pad_sequence"], [ints(4), ints(2), ints(6)],  # Pad takes ints from opset 11
     lambda a, b, c: torch.nn.utils.rnn.pad_sequence([a, b, c], batch_first=True, padding_value=1))
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


def idx(*values):
    return torch.tensor(values)


def put(x, indices, values, accumulate=False):
    return (x * 1).index_put_(indices, values, accumulate)


def setitem(x, key, values):
    """x[key] = values on a copy (traced as aten::index_put_ with None for the sliced dims)."""
    y = x * 1
    y[key] = values
    return y


# ---- tensor: advanced indexing (aten::index, index_put, nonzero)

case("index_tensor", ["index"], [f32(4, 5), ints(3, high=4)], lambda x, i: x[i])
case("index_tensor_2d_index", ["index"], [f32(4, 5), ints(2, 3, high=4)], lambda x, i: x[i])
case("index_middle_dim", ["index"], [f32(2, 4, 5), ints(3, high=4)], lambda x, i: x[:, i])
case("index_negative", ["index"], [f32(4, 5)], lambda x: (x[idx(-1, 0, -2)], x[:, idx(-1, 2)]))
case("index_two_tensors", ["index"], [f32(3, 4, 5), ints(6, high=3), ints(6, high=4)], lambda x, i, j: x[i, j])
case("index_two_broadcast", ["index"], [f32(3, 4), ints(2, 1, high=3), ints(5, high=4)], lambda x, i, j: x[i, j])
case("index_adjacent_after_slice", ["index"], [f32(2, 3, 4, 5), ints(2, 3, high=3), ints(3, high=4)],
     lambda x, i, j: x[:, i, j])
case("index_separated", ["index"], [f32(3, 4, 5), ints(2, high=3), ints(2, high=5)], lambda x, i, j: x[i, :, j])
case("index_negative_pair", ["index"], [f32(3, 4)], lambda x: x[idx(-1, 0), idx(1, -1)])
case("index_bool_mask", ["index"], [f32(3, 4)], lambda x: x[x > 0])
case("index_bool_mask_rows", ["index"], [f32(4, 3), bools(4)], lambda x, m: x[m])
case("index_bool_mask_middle", ["index"], [f32(2, 3, 4)], lambda x: x[:, x[0] > 0])
case("index_bool_and_tensor", ["index"], [f32(4, 3), bools(4), ints(1, high=3)],
     lambda x, m, i: x[m, i])
case("index_int_tensor_values", ["index"], [ints(4, 5, low=-9, high=9), ints(3, high=4)], lambda x, i: x[i])
case("dyn_index_tensor", ["index"], [f32(4, 5), ints(3, high=4)], lambda x, i: (x[i], x[:, i]),
     dynamic={0: [0, 1], 1: [0]})
case("dyn_index_two_tensors", ["index"], [f32(3, 4, 5), ints(6, high=3), ints(6, high=4)],
     lambda x, i, j: x[:, i, j], dynamic={0: [0, 1, 2], 1: [0], 2: [0]})

case("index_put_", ["index_put_"], [f32(5, 3), f32(2, 3)], lambda x, v: put(x, (idx(4, 1),), v), since=11,
     fails={9: "needs opset 11"})
case("index_put", ["index_put"], [f32(5, 3), f32(3)], lambda x, v: torch.index_put(x, (idx(0, 2),), v), since=11)
case("index_put_scalar_value", ["index_put_"], [f32(5, 3)], lambda x: put(x, (idx(0, -1),), torch.tensor(7.0)),
     since=11)
case("index_put_two_indices", ["index_put_"], [f32(4, 5), f32(3)],
     lambda x, v: put(x, (idx(0, 3, 1), idx(4, 0, -2)), v), since=11)
# x[:, i] = v traces as index_put_ on an aten::slice view of x (the core does not write that back to x
# yet), so these rows call the functional op with None for the unindexed dims.
case("index_put_after_slice", ["index_put"], [f32(2, 4, 3), f32(2, 2, 3)],
     lambda x, v: torch.ops.aten.index_put(x, [None, idx(3, 0)], v), since=11)
case("index_put_separated", ["index_put"], [f32(3, 4, 5), f32(2, 4)],
     lambda x, v: torch.ops.aten.index_put(x, [idx(0, 2), None, idx(1, 3)], v), since=11)
case("index_put_accumulate", ["index_put_"], [f32(5, 3), f32(2, 3)],
     lambda x, v: put(x, (idx(4, 1),), v, True), since=11)
# Repeated indices accumulate exactly only with ScatterND's reduction (opset 16).
case("index_put_accumulate_repeated", ["index_put_"], [f32(5, 3), f32(3, 3)],
     lambda x, v: put(x, (idx(1, 1, 2),), v, True), since=16)
case("index_put_mask_scalar", ["index_put_"], [f32(3, 4)],
     lambda x: setitem(x, x > 0, 2.0))
case("index_put_mask_rows_scalar_acc", ["index_put_"], [f32(4, 3), bools(4)],
     lambda x, m: put(x, (m,), torch.tensor(1.5), True))
case("index_put_mask_values", ["index_put_"], [f32(3, 4), f32(12)],
     lambda x, v: put(x, (x > 0,), v[: int((x > 0).sum())]), since=11,
     fails={9: "needs opset 11"})
case("index_put_int", ["index_put_"], [ints(4, 3), ints(2, 3)], lambda x, v: put(x, (idx(3, 0),), v), since=11)
case("nonzero", ["nonzero"], [grid(3, 4, low=-1, high=1)], torch.nonzero)
case("nonzero_1d_bool", ["nonzero"], [bools(7)], torch.nonzero)
case("nonzero_numpy", ["nonzero_numpy"], [grid(3, 4, low=-1, high=1)], lambda x: torch.nonzero(x, as_tuple=True))

# ---- tensor: gather / scatter

case("gather", ["gather"], [f32(3, 4), ints(3, 2, high=4)], lambda x, i: torch.gather(x, 1, i))
case("gather_dim0_neg", ["gather"], [f32(3, 4), ints(2, 4, high=3)], lambda x, i: torch.gather(x, -2, i))
case("gather_3d", ["gather"], [f32(2, 3, 4), ints(2, 3, 5, high=4)], lambda x, i: torch.gather(x, 2, i))
case("gather_smaller_index", ["gather"], [f32(3, 4), ints(2, 2, high=4)], lambda x, i: torch.gather(x, 1, i),
     since=11, fails={9: "use opset 11"})
case("gather_int", ["gather"], [ints(3, 4, low=-5, high=5), ints(3, 2, high=4)], lambda x, i: torch.gather(x, 1, i))
case("scatter_src", ["scatter"], [f32(3, 5), f32(3, 2)], lambda x, s: x.scatter(1, idx([0, 4], [1, 2], [3, 0]), s))
case("scatter_larger_src", ["scatter"], [f32(3, 5), f32(4, 4)],
     lambda x, s: x.scatter(0, idx([0, 2, 1], [2, 0, 1]), s))
case("scatter_value", ["scatter"], [f32(3, 5)], lambda x: x.scatter(-1, idx([0, 4], [1, 2], [3, 0]), 2.5))
case("scatter_", ["scatter_"], [f32(3, 5), f32(2, 5)],
     lambda x, s: (x * 1).scatter_(0, idx([0, 1, 2, 0, 1], [2, 0, 1, 1, 0]), s))
case("scatter_reduce", ["scatter_reduce"], [f32(3, 5), ints(2, 4, high=5), f32(2, 4)],
     lambda x, i, s: (x.scatter_reduce(1, i, s, "sum"), x.scatter_reduce(1, i, s, "prod", include_self=False),
                      x.scatter_reduce(1, i, s, "mean"), x.scatter_reduce(1, i, s, "mean", include_self=False),
                      x.scatter_reduce(0, i[:, :3] % 3, s[:, :3], "sum", include_self=False)),
     opsets=[16, 17], fails={14: "supported from opset 16"})
case("scatter_reduce_inplace", ["scatter_reduce_"], [f32(3, 5), ints(2, 4, high=5), f32(2, 4)],
     lambda x, i, s: (x * 1).scatter_reduce_(1, i, s, "sum"), opsets=[16, 17])
case("scatter_reduce_0d", ["scatter_reduce"], [f32(), f32()],
     lambda x, s: (x.scatter_reduce(0, torch.tensor(0), s, "sum"), x.scatter_reduce(0, torch.tensor(0), s, "prod")),
     opsets=[16, 17])
case("scatter_reduce_amax", ["scatter_reduce"], [f32(3, 5), ints(2, 4, high=5), f32(2, 4)],
     lambda x, i, s: (x.scatter_reduce(1, i, s, "amax"), x.scatter_reduce(1, i, s, "amin"),
                      x.scatter_reduce(1, i, s, "amax", include_self=False),
                      x.scatter_reduce(1, i, s, "amin", include_self=False)),
     opsets=[16, 17, *NEW_OPSETS])  # max/min below opset 18 as torch.onnx 2.6 writes them
case("scatter_reduce_amax_int", ["scatter_reduce"], [ints(3, 5), ints(2, 4, high=5), ints(2, 4)],
     lambda x, i, s: (x.scatter_reduce(0, i % 3, s, "amax", include_self=False), x.scatter_reduce(1, i, s, "amin")),
     opsets=[16, 17, *NEW_OPSETS])
case("scatter_reduce_add", ["scatter"], [f32(3, 5), f32(3, 2)],
     lambda x, s: x.scatter(1, idx([0, 0], [1, 2], [3, 3]), s, reduce="add"), since=16,
     fails={13: "needs opset 16"})
case("scatter_reduce_multiply", ["scatter"], [f32(3, 5), f32(3, 2)],
     lambda x, s: x.scatter(1, idx([0, 0], [1, 2], [3, 3]), s, reduce="multiply"), since=16)
case("scatter_add", ["scatter_add"], [f32(3, 5), f32(3, 2)],
     lambda x, s: x.scatter_add(1, idx([0, 4], [1, 2], [3, 0]), s))
case("scatter_add_repeated", ["scatter_add"], [f32(3, 5), f32(3, 3)],
     lambda x, s: x.scatter_add(1, idx([0, 0, 0], [1, 2, 1], [3, 3, 4]), s), since=16)
case("scatter_add_", ["scatter_add_"], [ints(2, 4), ints(2, 2)],
     lambda x, s: (x * 1).scatter_add_(1, idx([3, 0], [1, 2]), s))
case("index_add", ["index_add"], [f32(5, 3), f32(2, 3)], lambda x, s: x.index_add(0, idx(4, 1), s))
case("index_add_alpha_dim1", ["index_add"], [f32(2, 5), f32(2, 3)],
     lambda x, s: x.index_add(-1, idx(4, 0, 2), s, alpha=2.0))
case("index_add_repeated", ["index_add"], [f32(4, 3), f32(3, 3)], lambda x, s: x.index_add(0, idx(1, 1, 3), s),
     since=16)
# torch broadcasts the source's slices onto x's: sizes of 1 expand, a lower-rank source gains
# trailing dims (PyTorch's test_index_add_normal / _dim_size_differ).
case("index_add_broadcast_source", ["index_add"], [f32(5, 4, 3), f32(1, 3, 3), f32(5, 1)],
     lambda x, s, t: (x.index_add(1, idx(0, 2, 1), s), x.index_add(0, idx(0, 2, 3, 1, 4), t)),
     torch1_only="PyTorch 2 refuses a source whose other dims differ from x's (1.13 broadcast them)")
case("index_add_", ["index_add_"], [f32(5, 3), f32(2, 3)], lambda x, s: (x * 1).index_add_(0, idx(0, 3), s))
case("index_copy", ["index_copy"], [f32(5, 3), f32(2, 3)], lambda x, s: x.index_copy(0, idx(4, 1), s))
case("index_copy_dim1", ["index_copy"], [f32(2, 5, 2), f32(2, 3, 2)], lambda x, s: x.index_copy(1, idx(4, 0, 2), s))
case("index_copy_", ["index_copy_"], [f32(5, 3), f32(2, 3)], lambda x, s: (x * 1).index_copy_(0, idx(0, 3), s))
case("index_fill", ["index_fill"], [f32(3, 4)], lambda x: (x.index_fill(1, idx(0, 2), -1.0), x.index_fill(0, idx(1), 3)))
case("index_fill_neg", ["index_fill"], [f32(2, 3, 4)], lambda x: x.index_fill(-1, idx(-1, 0), 5.0))
case("index_fill_tensor_value", ["index_fill"], [f32(3, 4)], lambda x: x.index_fill(0, idx(2), x[0, 0]))
case("index_fill_", ["index_fill_"], [ints(3, 4)], lambda x: (x * 1).index_fill_(1, idx(3), 9))
case("take", ["take"], [f32(3, 4), ints(2, 3, high=12)], torch.take)
case("take_negative", ["take"], [f32(3, 4)], lambda x: torch.take(x, idx(-1, 0, -12)))
case("take_along_dim", ["take_along_dim"], [f32(3, 4), ints(3, 2, high=4)],
     lambda x, i: torch.take_along_dim(x, i, 1), since=11, fails={9: "needs opset 11"})
case("take_along_dim_broadcast", ["take_along_dim"], [f32(3, 4), ints(1, 2, high=4)],
     lambda x, i: torch.take_along_dim(x, i, -1), since=11)
case("take_along_dim_flat", ["take_along_dim"], [f32(3, 4), ints(5, high=12)], lambda x, i: torch.take_along_dim(x, i))
case("masked_select", ["masked_select"], [f32(3, 4)], lambda x: torch.masked_select(x, x > 0))
case("masked_select_broadcast", ["masked_select"], [f32(3, 4), bools(4)], torch.masked_select)
case("masked_select_broadcast_x", ["masked_select"], [f32(4), bools(3, 4)], torch.masked_select)
case("masked_scatter", ["masked_scatter"], [f32(3, 4), f32(4, 4)], lambda x, s: x.masked_scatter(x > 0, s),
     since=11)
case("masked_scatter_broadcast", ["masked_scatter"], [f32(3, 4), bools(4), f32(12)], torch.masked_scatter, since=11)
case("masked_scatter_", ["masked_scatter_"], [f32(3, 4), f32(12)], lambda x, s: (x * 1).masked_scatter_(x < 0, s),
     since=11)

# ---- tensor: sorting, unique, bucketize

case("topk", ["topk"], [f32(3, 6)], lambda x: torch.topk(x, 3))
case("topk_dim0", ["topk"], [f32(5, 4)], lambda x: torch.topk(x, 2, dim=0))
case("topk_neg_dim_3d", ["topk"], [f32(2, 5, 4)], lambda x: torch.topk(x, 2, dim=-2))
case("topk_smallest", ["topk"], [f32(3, 6)], lambda x: torch.topk(x, 2, largest=False), since=11,
     fails={9: "need opset 11"})
case("topk_int", ["topk"], [ints(3, 6, high=100)], lambda x: torch.topk(x, 2)[0])
case("topk_dynamic_k", ["topk", "size"], [f32(3, 6)], lambda x: torch.topk(x, x.size(0)), since=10,
     fails={9: "k computed at run time"}, dynamic={0: [0]})
case("sort", ["sort"], [f32(3, 5)], lambda x: torch.sort(x), since=11, fails={9: "need opset 11"})
case("sort_descending", ["sort"], [f32(3, 5)], lambda x: torch.sort(x, 0, descending=True))
case("sort_stable", ["sort"], [grid(3, 6)], lambda x: torch.sort(x, stable=True, dim=1), since=11)
case("sort_int", ["sort"], [ints(6, high=100)], lambda x: torch.sort(x, descending=True))
case("argsort", ["argsort"], [f32(3, 5)], lambda x: torch.argsort(x, -1), since=11)
case("argsort_descending_dim0", ["argsort"], [f32(4, 3)], lambda x: torch.argsort(x, 0, descending=True))
case("unique", ["_unique2"], [grid(3, 4)], lambda x: torch.unique(x, return_inverse=True, return_counts=True),
     since=11)
case("unique_int", ["_unique2"], [ints(7, high=4)], lambda x: torch.unique(x), since=11)
case("_unique", ["_unique"], [grid(3, 4)], lambda x: torch._unique(x, return_inverse=True), since=11)
# Before opset 11 (no Unique): TopK sort, Compress, comparisons
case("unique_opset9", ["_unique2"], [grid(3, 4)], lambda x: torch.unique(x, return_inverse=True, return_counts=True),
     opsets=[9, 10])
case("unique_int_opset9", ["_unique2"], [ints(2, 7, high=4)],
     lambda x: torch.unique(x, return_inverse=True, return_counts=True), opsets=[9, 10])
case("_unique_opset9", ["_unique"], [grid(3, 4)], lambda x: torch._unique(x, return_inverse=True), opsets=[9, 10])
case("unique_dim", ["unique_dim"], [grid(5, 2, low=0, high=1)],
     lambda x: torch.unique(x, dim=0, return_inverse=True, return_counts=True), since=11)
case("bucketize", ["bucketize"], [grid(3, 4)], lambda x: torch.bucketize(x, torch.tensor([-1.0, 0.0, 1.5])))
case("bucketize_right_int32", ["bucketize"], [grid(3, 4)],
     lambda x: torch.bucketize(x, torch.tensor([-1.0, 0.0, 1.5]), right=True, out_int32=True))
case("bucketize_int_boundaries_input", ["bucketize"], [ints(5, high=6), ints(3, high=6)],
     lambda x, b: torch.bucketize(x, torch.sort(b, descending=True)[0].flip(0)))

# ---- tensor: triangles and diagonals

case("tril", ["tril"], [f32(4, 5)], lambda x: (torch.tril(x), torch.tril(x, 1), torch.tril(x, -2)))
case("triu", ["triu"], [f32(2, 4, 3)], lambda x: (torch.triu(x), torch.triu(x, -1), torch.triu(x, 2)))
case("tril_int", ["tril"], [ints(3, 3)], torch.tril)
case("triu_", ["triu_"], [f32(3, 4)], lambda x: (x * 1).triu_(1))
case("tril_", ["tril_"], [f32(3, 4)], lambda x: (x * 1).tril_())
case("dyn_tril_triu", ["tril", "triu"], [f32(3, 4)], lambda x: (torch.tril(x), torch.triu(x, 1)),
     dynamic={0: [0, 1]}, since=11, fails={9: "needs opset 11"})
case("diagonal", ["diagonal"], [f32(4, 5)], lambda x: (torch.diagonal(x), torch.diagonal(x, 1), torch.diagonal(x, -2)))
case("diagonal_dims", ["diagonal"], [f32(2, 3, 4)],
     lambda x: (torch.diagonal(x, 0, 1, 2), torch.diagonal(x, 1, -1, 0), torch.diagonal(x, -1, 2, 1)))
case("diag_embed", ["diag_embed"], [f32(2, 3)], lambda x: (torch.diag_embed(x), torch.diag_embed(x, 1),
                                                          torch.diag_embed(x, -1, 0, 2)))
case("diag", ["diag"], [f32(3, 4), f32(3)], lambda x, v: (torch.diag(x), torch.diag(x, 1), torch.diag(v), torch.diag(v, -1)))

# ---- tensor: layout

case("flip", ["flip"], [f32(2, 3, 4)], lambda x: (torch.flip(x, [0]), torch.flip(x, [-1, 1])))
case("fliplr_flipud", ["fliplr", "flipud"], [f32(3, 4)], lambda x: (torch.fliplr(x), torch.flipud(x)))
case("dyn_flip", ["flip"], [f32(2, 3)], lambda x: torch.flip(x, [1]), dynamic={0: [1]}, since=10,
     fails={9: "needs the size of dim"})
case("roll", ["roll"], [f32(3, 5)], lambda x: (torch.roll(x, 2, 1), torch.roll(x, -1, 0), torch.roll(x, 7, -1)))
case("roll_multi_and_flat", ["roll"], [f32(3, 4)], lambda x: (torch.roll(x, (1, -2), (0, 1)), torch.roll(x, 5)))
case("dyn_roll", ["roll"], [f32(3, 5)], lambda x: (torch.roll(x, 2, 1), torch.roll(x, -1, 1)), dynamic={0: [1]})
case("rot90", ["rot90"], [f32(3, 4)], lambda x: (torch.rot90(x), torch.rot90(x, 2), torch.rot90(x, -1)))
case("rot90_dims", ["rot90"], [f32(2, 3, 4)], lambda x: torch.rot90(x, 1, [2, 0]))
case("movedim", ["movedim"], [f32(2, 3, 4, 5)],
     lambda x: (torch.movedim(x, 0, -1), torch.movedim(x, (1, 3), (0, 1)), torch.moveaxis(x, -1, 1)))
case("numpy_T", ["numpy_T"], [f32(2, 3, 4)], lambda x: x.T)
case("mT", ["mT"], [f32(2, 3, 4)], lambda x: x.mT)
case("mH", ["mH"], [f32(3, 4)], lambda x: (x.mH, x.adjoint()))
case("unfold", ["unfold"], [f32(2, 7)], lambda x: (x.unfold(1, 3, 2), x.unfold(-1, 2, 1), x.unfold(0, 1, 1)))
case("unfold_middle", ["unfold"], [f32(2, 6, 3)], lambda x: x.unfold(1, 4, 2))
case("unfold_dynamic_len", ["unfold"], [f32(2, 9, 3)], lambda x: (x.unfold(1, 3, 2), x.unfold(-2, 4, 4)),
     dynamic={0: [1]}, since=11, fails={9: "needs opset 11 or later"})


def s_unfold_computed_size(x: torch.Tensor):
    # tacotron2's alignments.unfold(1, n_batch, n_batch): size and step from a size, here a dynamic one
    n = x.size(0)
    return x.unfold(1, n, n)


def s_unfold_in_loop(x: torch.Tensor):
    # torchaudio's detect_pitch_frequency: x reshaped to [-1] + shape[-1:] (a rank ONNX does not see),
    # then (_compute_nccf) frames of slices whose length changes with the loop's lag
    shape = list(x.size())
    x = x.reshape([-1] + shape[-1:])
    frame = x.size(-1) // 4
    acc = x[..., :2] * 0.0
    for lag in range(1, 4):
        acc = acc + x[..., :-lag].unfold(-1, frame, frame)[..., :2, :].sum(-1)
    return acc


case("unfold_computed_size", ["unfold"], [f32(2, 7, 3)], s_unfold_computed_size, script=True, dynamic={0: [0, 1]},
     since=11, fails={9: "needs opset 11 or later"})
# PyTorch 2.6 scripts it into a graph that exports at opset 9 as well (the evaluator matches it
# exactly there); 1.13's needs 11.
case("unfold_in_loop", ["unfold"], [f32(2, 16)], s_unfold_in_loop, script=True,
     **({"since": 11, "fails": {9: "needs opset 11 or later"}} if torch.__version__ < "2" else {"since": 9}))
case("repeat_interleave", ["repeat_interleave"], [f32(2, 3)],
     lambda x: (torch.repeat_interleave(x, 2), torch.repeat_interleave(x, 3, dim=1), x.repeat_interleave(2, -2)))
case("repeat_interleave_tensor", ["repeat_interleave"], [f32(3, 2)],
     lambda x: torch.repeat_interleave(x, torch.tensor([1, 0, 2]), dim=0))
def s_repeat_interleave_runtime(x: torch.Tensor, r: torch.Tensor):
    return torch.repeat_interleave(x, r, dim=0)


case("repeat_interleave_runtime", ["repeat_interleave"], [f32(3, 2), ints(3, high=4), ints(low=1, high=3)],
     lambda x, r, k: (torch.repeat_interleave(x, r, dim=0), torch.repeat_interleave(x, k, dim=1),
                      torch.repeat_interleave(x, k)), since=11, dynamic_check=False)
case("repeat_interleave_runtime_script", ["repeat_interleave"], [f32(3, 2), ints(3, high=4)],
     s_repeat_interleave_runtime, script=True, since=11, dynamic_check=False)
# A run-time tensor of one count repeats every element (PyTorch's test_dynamic_repeat_interleave).
case("repeat_interleave_runtime_one_count", ["repeat_interleave"], [f32(2, 3), ints(1, low=2, high=4)],
     lambda x, r: torch.repeat_interleave(x, r, dim=1), since=11, dynamic_check=False)
case("dyn_repeat_interleave", ["repeat_interleave"], [f32(2, 3)], lambda x: torch.repeat_interleave(x, 2, dim=1),
     dynamic={0: [0, 1]})
case("tensor_split", ["tensor_split"], [f32(2, 7)],
     lambda x: (torch.tensor_split(x, 3, dim=1), torch.tensor_split(x, [1, 5], dim=-1), torch.tensor_split(x, (1, 8))))
case("tensor_split_tensor", ["tensor_split"], [f32(7, 2)], lambda x: torch.tensor_split(x, torch.tensor([2, 3])))
case("hsplit_vsplit_dsplit", ["hsplit", "vsplit", "dsplit"], [f32(4, 6, 2)],
     lambda x: (torch.hsplit(x, 3), torch.vsplit(x, [1, 3]), torch.dsplit(x, 2)))
case("hsplit_1d", ["hsplit"], [f32(6)], lambda x: torch.hsplit(x, 2))
case("atleast", ["atleast_1d", "atleast_2d", "atleast_3d"], [f32(), f32(3), f32(2, 3)],
     lambda a, b, c: (torch.atleast_1d(a), torch.atleast_2d(a), torch.atleast_3d(a), torch.atleast_2d(b),
                      torch.atleast_3d(b), torch.atleast_3d(c), torch.atleast_1d(c)))
case("meshgrid", ["meshgrid"], [f32(3), f32(4), f32(2)], lambda a, b, c: torch.meshgrid(a, b, c, indexing="ij"))
case("meshgrid_xy", ["meshgrid"], [f32(3), f32(4)], lambda a, b: torch.meshgrid(a, b, indexing="xy"))
case("broadcast_tensors", ["broadcast_tensors"], [f32(3, 1), f32(4), f32(2, 1, 1)],
     lambda a, b, c: torch.broadcast_tensors(a, b, c))
case("dyn_broadcast_tensors", ["broadcast_tensors"], [f32(3, 1), f32(4)], lambda a, b: torch.broadcast_tensors(a, b),
     dynamic={0: [0], 1: [0]})
case("as_strided", ["as_strided"], [f32(3, 4)],
     lambda x: (torch.as_strided(x, (2, 2), (1, 2)), torch.as_strided(x, (3, 3), (4, 1), 1)))
case("_shape_as_tensor", ["_shape_as_tensor"], [f32(2, 3, 4)], lambda x: torch._shape_as_tensor(x))
case("_reshape_from_tensor", ["_reshape_from_tensor"], [f32(2, 3, 4)],
     lambda x: torch._reshape_from_tensor(x, torch._shape_as_tensor(x)[1:].flip(0) * idx(1, 2)))
case("narrow_copy", ["narrow_copy"], [f32(4, 5)], lambda x: (torch.narrow_copy(x, 1, 1, 3), torch.narrow_copy(x, 0, -2, 2)))

# Ops that tracing and scripting rename (moveaxis -> movedim) or never emit (_index_put_impl_, what
# index_put_ dispatches to), tested through IR graphs.
case("moveaxis", ["moveaxis"], [f32(2, 3, 4)], ir="""graph(%x : Tensor):
  %src : int = prim::Constant[value=0]()
  %dst : int = prim::Constant[value=-1]()
  %y : Tensor = aten::moveaxis(%x, %src, %dst)
  return (%y)""")
case("_index_put_impl_", ["_index_put_impl_"], [f32(3, 4), bools(3, 4), f32()], ir="""graph(%x : Tensor, %m : Tensor, %v : Tensor):
  %false : bool = prim::Constant[value=0]()
  %indices : Tensor?[] = prim::ListConstruct(%m)
  %y : Tensor = aten::_index_put_impl_(%x, %indices, %v, %false, %false)
  return (%y)""")

# ---- opset 8, torch.onnx 1.13's lowest for flatten and repeat (Flatten-1 takes floats only)

case("flatten_opset8", ["flatten"], [f32(2, 3, 4, 5), ints(2, 3, 4)],
     lambda x, i: (torch.flatten(x, 1), torch.flatten(x, 0, 2), torch.flatten(x, 1, 2), torch.flatten(i, 1),
                   torch.flatten(i, 0, 1), torch.flatten(i)), opsets=[8])
case("repeat_opset8", ["repeat"], [f32(2, 3), ints(3)], lambda x, i: (x.repeat(2, 1, 3), x.repeat(3, 2), i.repeat(2)),
     opsets=[8])
