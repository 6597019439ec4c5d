"""rnn pack rows: LSTM/GRU/RNN (layers, directions, batch_first, biases, LSTM projections) and their cells."""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from op_framework import Input, With, case, f32


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


def rnn_inputs(kind, layers=1, bidirectional=False, batch_first=False, seq=5, batch=3, feat=4, hidden=6, proj=0):
    """x and the initial state(s); with proj (an LSTM's proj_size) h0 has proj features, c0 hidden."""
    d = 2 if bidirectional else 1
    x = f32(batch, seq, feat) if batch_first else f32(seq, batch, feat)
    h0 = f32(layers * d, batch, proj or hidden, low=-1, high=1)
    return [x, h0] + ([f32(layers * d, batch, hidden, low=-1, high=1)] if kind == "lstm" else [])


LSTM_SAVE_BUG = ("torch.jit.save of this scripted nn.LSTM fails in torch 1.13 (strides() called on an undefined "
                 "Tensor); scripted LSTMs are tested in tests/scripted_nn")
SEQ_NOT_SCRIPTABLE = ("Seq's forward passes GRU/RNN a tuple state in a branch, which TorchScript rejects; scripted "
                      "GRU/RNN are tested in tests/scripted_nn")


def rnn_case(id, kind, op, layers=1, bidirectional=False, batch_first=False, bias=True, **kw):
    cls = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}[kind]
    case(id, [op], rnn_inputs(kind, layers, bidirectional, batch_first),
         module=lambda: Seq(cls(4, 6, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first,
                                bias=bias, **kw)).eval(),
         no_script_twin=LSTM_SAVE_BUG if kind == "lstm" else SEQ_NOT_SCRIPTABLE)


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


# LSTM with projections (proj_size > 0): no ONNX LSTM can express it; one ONNX Loop per layer.
def lstm_proj_case(id, layers=1, bidirectional=False, batch_first=False, bias=True, **kw):
    case(id, ["lstm"], rnn_inputs("lstm", layers, bidirectional, batch_first, proj=3),
         module=lambda: Seq(nn.LSTM(4, 6, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first,
                                    bias=bias, proj_size=3)).eval(),
         no_script_twin=LSTM_SAVE_BUG, **kw)


lstm_proj_case("lstm_proj", opsets=[8, 9, 10, 11, 13, 14, 16, 17])
lstm_proj_case("lstm_proj_2layer", layers=2)
# Opsets 8 and 9 reverse the backward direction's outputs with a Gather, 10 on with a Slice.
lstm_proj_case("lstm_proj_bidirectional", bidirectional=True, opsets=[8, 9, 10, 11, 13, 14, 16, 17])
lstm_proj_case("lstm_proj_2layer_bidir_batch_first", layers=2, bidirectional=True, batch_first=True)
lstm_proj_case("lstm_proj_3layer_bidir_no_bias", layers=3, bidirectional=True, bias=False)
lstm_proj_case("lstm_proj_batch_first", batch_first=True)
# A run-time sequence length: before opset 10 nothing reverses the backward direction's outputs.
lstm_proj_case("lstm_proj_bidir_dynamic", layers=2, bidirectional=True, dynamic={0: [0, 1], 1: [1], 2: [1]},
               fails={9: "needs opset 10"})


def lstm_all_outputs(s, x):
    out, (h, c) = s.rnn(x)
    return out, h, c


# No initial state: nn.LSTM makes zeros of [layers*dirs, batch, proj] and [.., hidden].
case("lstm_proj_no_state", ["lstm", "zeros"], [f32(5, 3, 4)],
     module=lambda: With(lstm_all_outputs, rnn=nn.LSTM(4, 6, num_layers=2, bidirectional=True, proj_size=2)))


class PackedLstmProj(nn.Module):
    """A packed batch through a bidirectional LSTM with projections: steps past a length keep the state."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 6, 2, bidirectional=True, batch_first=True, proj_size=3)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, (h, c) = self.rnn(packed)
        y, lens = pad_packed_sequence(out, batch_first=True, padding_value=-1.0)
        return y, lens, h, c


case("lstm_proj_packed", ["_pack_padded_sequence", "_pad_packed_sequence", "lstm"],
     [f32(3, 6, 4), Input((3,), torch.int64, lambda shape, gen: torch.tensor([4, 6, 2]))],
     module=lambda: PackedLstmProj().eval())


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
