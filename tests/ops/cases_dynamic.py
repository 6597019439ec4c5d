"""Dynamic axes: mappings of other families again, exported with dynamic_axes so that symbolics
take their unknown-size branches and ONNX computes sizes at run time."""
import torch
from torch import Tensor
import torch.nn as nn
import torch.nn.functional as F
from op_framework import case, f32, ints
from cases_nn import CONV_RTOL, bn_with_stats
from cases_rnn import CELL_INPUTS, LSTM_SAVE_BUG, SEQ_NOT_SCRIPTABLE, LstmCell, Seq, rnn_inputs


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
# A squeezed dim of run-time size: an If on its size (the proof grows it to 2, where torch keeps it).
case("dyn_squeeze_dynamic_dim", ["squeeze"], [f32(2, 1, 3)], lambda x: (x.squeeze(1), x.squeeze(-2) * 2),
     dynamic={0: [0, 1, 2]}, since=11)
case("dyn_unsqueeze_transpose_permute", ["unsqueeze", "transpose", "permute"], [f32(2, 3, 4)],
     lambda x: (x.unsqueeze(-1), x.transpose(0, 2), x.permute(1, 2, 0)), dynamic={0: [0, 1]})
case("dyn_slice", ["slice"], [f32(2, 4, 6)], lambda x: (x[:, 1:3], x[:, -2:], x[:, :-1]), dynamic={0: [1]})
case("dyn_slice_end", ["slice", "size"], [f32(2, 6)], lambda x: x[:, : x.size(1) // 2], dynamic={0: [1]},
     since=10, fails={9: "needs opset 10"})
# A step computed at run time (a voice-activity model subsamples with x[:, ::step]): Slice's steps input.
case("dyn_slice_step", ["slice", "size"], [f32(2, 9)], lambda x: (x[:, :: x.size(1) // 3], x[:, 1 :: x.size(1) // 4]),
     dynamic={0: [1]}, since=10, fails={9: "step computed at run time needs opset 10"})
case("dyn_select", ["select"], [f32(2, 4, 6)], lambda x: (x[:, 1], x[:, -1]), dynamic={0: [1]},
     since=11, fails={9: "negative index into a dim of unknown size needs opset 11"})
case("dyn_diagonal", ["diagonal"], [f32(2, 3, 4, 5)],
     lambda x: (torch.diagonal(x), torch.diagonal(x, 1, 2, 3), torch.diagonal(x, -2, -1, 1)), dynamic={0: [0, 1, 2, 3]},
     since=11)
case("dyn_narrow", ["narrow"], [f32(2, 4, 6)], lambda x: x.narrow(1, 1, 2), dynamic={0: [1]})
case("dyn_index_select", ["index_select"], [f32(3, 4), ints(5, high=3)], lambda x, i: x.index_select(0, i),
     dynamic={0: [0], 1: [0]})
case("dyn_cat_stack", ["cat", "stack"], [f32(2, 3), f32(2, 3)],
     lambda x, y: (torch.cat([x, y], 0), torch.stack([x, y], 1)), dynamic={0: [0], 1: [0]})
case("dyn_chunk_static_dim", ["chunk"], [f32(2, 6)], lambda x: x.chunk(3, 1), dynamic=BATCH)
# Pieces of a run-time size become an ONNX sequence (SplitToSequence, opset 11) whose items
# prim::ListUnpack takes. The proof grows 7 rows to 8: chunk(3) is 3,3,1 then 3,3,2; split(2) is
# 2,2,2,1 then 2,2,2,2.
case("dyn_chunk_dynamic_dim", ["chunk"], [f32(7, 2)], lambda x: x.chunk(3, 0), dynamic=BATCH,
     since=11, fails={9: "needs the size of dim 0"})
# A chunk count the model computes (x.size(0) with a dynamic batch); the trace fixes 3 pieces. The
# proof re-runs at batch 4 (4 pieces), which a trace of 3 cannot take: checked at the example's batch.
case("dyn_chunk_run_time_count", ["chunk"], [f32(3, 14)], lambda x: torch.chunk(x, x.size(0), dim=1),
     dynamic={0: [0, 1]}, since=11, fails={9: "needs opset 11"}, dynamic_check=False)
case("dyn_split_dynamic_dim", ["split"], [f32(7, 2)], lambda x: x.split(2, 0), dynamic=BATCH,
     since=11, fails={9: "needs the size of dim 0"})


# Split sizes read from other inputs' run-time sizes: Split with a sizes input (13+), Slices
# between running sums (11, 12). The sizes are related (7 = 3 + 4): growing each by one cannot run.
case("dyn_split_sizes_at_run_time", ["split_with_sizes", "size"], [f32(2, 3), f32(2, 4), f32(2, 7)],
     lambda x, y, t: torch.split(t, (x.size(1), y.size(1)), dim=1), dynamic={0: [1], 1: [1], 2: [1]},
     since=11, fails={9: "need opset 11 or later"}, dynamic_check=False)


def s_chunk_rows(x: Tensor):
    first, second, third = x.chunk(3, 0)
    return first, second * 2, third - 1


def s_split_rows(x: Tensor):
    return torch.cat([piece.flip(0) for piece in x.split(2, 0)], 0)


case("dyn_chunk_dynamic_dim_scripted", ["chunk", "prim::ListUnpack"], [f32(7, 2)], s_chunk_rows, script=True,
     dynamic=BATCH, since=11, fails={9: "needs the size of dim"})
case("dyn_split_dynamic_dim_scripted", ["split"], [f32(7, 2)], s_split_rows, script=True, dynamic=BATCH,
     since=13, fails={9: "needs the size of dim", 11: "from opset 13"})
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
# H and W must stay even: the proof's sizes grown by one cannot run (test_pixel_unshuffle's drop-in
# case checks another size in ONNX Runtime).
case("dyn_pixel_unshuffle_all_dims", ["pixel_unshuffle"], [f32(2, 3, 4, 6)], lambda x: F.pixel_unshuffle(x, 2),
     dynamic={0: [0, 1, 2, 3]}, dynamic_check=False)
case("dyn_prelu", ["prelu"], [f32(2, 3, 4, 5)], module=lambda: nn.PReLU(3, init=0.1), dynamic={0: [0, 2, 3]})
case("dyn_embedding", ["embedding"], [ints(2, 3, high=10)], module=lambda: nn.Embedding(10, 4), dynamic={0: [0, 1]})
case("dyn_lstm", ["lstm"], rnn_inputs("lstm", 2, True), dynamic={0: [0, 1], 1: [1], 2: [1]},
     module=lambda: Seq(nn.LSTM(4, 6, num_layers=2, bidirectional=True)).eval(), no_script_twin=LSTM_SAVE_BUG)
case("dyn_gru_batch_first", ["gru"], rnn_inputs("gru", batch_first=True), dynamic={0: [0, 1], 1: [1]},
     module=lambda: Seq(nn.GRU(4, 6, batch_first=True)).eval(), no_script_twin=SEQ_NOT_SCRIPTABLE)
case("dyn_rnn_tanh", ["rnn_tanh"], rnn_inputs("rnn"), dynamic={0: [0, 1], 1: [1]},
     module=lambda: Seq(nn.RNN(4, 6)).eval(), no_script_twin=SEQ_NOT_SCRIPTABLE)
case("dyn_lstm_cell", ["lstm_cell"], CELL_INPUTS + [f32(3, 6, low=-1, high=1)], module=LstmCell, script=True,
     dynamic={0: [0], 1: [0], 2: [0]})
case("dyn_max_pool2d_ceil_overhang", ["max_pool2d"], [f32(1, 2, 5, 5)],
     lambda x: F.max_pool2d(x, 2, 2, 1, ceil_mode=True), dynamic={0: [2, 3]}, since=10)
case("dyn_avg_pool2d_ceil_overhang", ["avg_pool2d"], [f32(1, 2, 5, 5)],
     lambda x: F.avg_pool2d(x, 2, 2, 1, ceil_mode=True), dynamic={0: [2, 3]}, since=10)


class UpToSkip(nn.Module):
    """A U-Net's up step: ConvTranspose to the skip connection's size, so output_padding is
    computed at run time from both inputs' spatial sizes."""

    def __init__(self, dilation=1):
        super().__init__()
        self.up = nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, dilation=dilation)

    def forward(self, x, skip):
        return self.up(x, output_size=skip.size()) + skip


# Output padding 1 in H (12 from 6) and 0 in W (13 from 7). The resized re-run would ask for
# sizes the model refuses, hence dynamic_check=False.
case("dyn_conv_transpose2d_output_size", ["conv_transpose2d"], [f32(1, 3, 6, 7), f32(1, 4, 12, 13)],
     module=UpToSkip, script=True, dynamic={0: [2, 3], 1: [2, 3]}, dynamic_check=False, since=10, **CONV_RTOL)
case("dyn_conv_transpose2d_output_size_dilated", ["conv_transpose2d"], [f32(1, 3, 6, 7), f32(1, 4, 16, 18)],
     module=lambda: UpToSkip(dilation=3), script=True, dynamic={0: [2, 3], 1: [2, 3]}, dynamic_check=False,
     since=10, fails={o: "needs dilation <= stride" for o in (10, 11, 13, 14, 16, 17)})

# Lengths known only at run time: pads of max(L) - L computed in the graph, from opset 11.
case("dyn_pad_sequence", ["pad_sequence"], [f32(3, 2), f32(5, 2)],
     lambda a, b: torch.nn.utils.rnn.pad_sequence([a, b], batch_first=True, padding_value=2.0),
     dynamic={0: [0], 1: [0]}, since=11, fails={9: "a sequence length known only at run time needs opset 11"})

