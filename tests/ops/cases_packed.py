"""Rows for packed sequences (rnn pack): pack_padded_sequence -> LSTM/GRU -> pad_packed_sequence."""
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

import torch
from op_framework import Input, case, f32


class PackedRnn(torch.nn.Module):
    def __init__(self, cell, sorted_lengths, padding):
        super().__init__()
        self.rnn = cell(4, 5, 2, bidirectional=True, batch_first=True)
        self.sorted_lengths = sorted_lengths
        self.padding = padding

    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=self.sorted_lengths)
        out, state = self.rnn(packed)
        y, lens = pad_packed_sequence(out, batch_first=True, padding_value=self.padding)
        return (y, lens) + (state if isinstance(state, tuple) else (state,))


def lengths(*values):
    return Input((len(values),), torch.int64, lambda shape, gen: torch.tensor(values))


case("packed_lstm_unsorted", ["_pack_padded_sequence", "_pad_packed_sequence", "lstm"],
     [f32(3, 6, 4), lengths(6, 2, 4)], module=lambda: PackedRnn(torch.nn.LSTM, False, -1.0))
case("packed_gru_sorted", ["_pack_padded_sequence", "_pad_packed_sequence", "gru"],
     [f32(3, 5, 4), lengths(5, 3, 1)], module=lambda: PackedRnn(torch.nn.GRU, True, 0.0))
