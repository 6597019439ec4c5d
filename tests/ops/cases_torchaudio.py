"""Rows for the torchaudio pack: torchaudio's own TorchScript ops (torchaudio::_lfilter, behind
torchaudio.functional.lfilter and every biquad; torchaudio::_overdrive_core_loop, behind overdrive).
Importing torchaudio registers the ops for tracing in Python; the export process loads
torchaudio's op library itself (core/3_export/1_load/load.cpp)."""
import torchaudio.functional as AF

import torch
import torch.nn as nn
from op_framework import Input, case, f32

LFILTER = ["torchaudio::_lfilter"]
OVERDRIVE = ["torchaudio::_overdrive_core_loop"]


def waveform(*shape, low=-1.0, high=1.0, dtype=torch.float32):
    """Audio in [low, high): by default [-1, 1), as torchaudio's filters expect it."""
    return f32(*shape, low=low, high=high, dtype=dtype)


def coefficients(*values):
    """Fixed filter coefficients, as an input of the model (not folded into the graph)."""
    return Input((len(values),), torch.float32, lambda s, g: torch.tensor(values, dtype=torch.float64))


class Lfilter(nn.Module):
    """lfilter with constant coefficients a, b (buffers). A real module: each row also runs scripted."""

    def __init__(self, a, b, clamp=True, batching=True, dtype=torch.float32):
        super().__init__()
        self.register_buffer("a", torch.tensor(a, dtype=dtype))
        self.register_buffer("b", torch.tensor(b, dtype=dtype))
        self.clamp, self.batching = clamp, batching

    def forward(self, x):
        return AF.lfilter(x, self.a, self.b, self.clamp, self.batching)


# Stable filters: poles of radius 0.71 (second order), 0.5 / 0.47 / 0.3 (third order, a0 = 2 in one
# row, so the coefficients are normalized), and 0.91 (a slow decay: the recursion runs long).
SECOND_A, SECOND_B = [1.0, -1.2, 0.5], [0.2, 0.3, 0.1]
BANK_A = [[1.0, -0.5, 0.2, -0.1], [2.0, -1.0, 0.3, 0.05], [1.0, 0.3, 0.0, 0.0]]
BANK_B = [[0.3, 0.2, 0.1, 0.05], [0.5, -0.4, 0.3, 0.0], [1.0, 0.0, 0.0, 0.0]]
LOUD_B = [2.0, 1.5, 0.5]  # gain above 1: unclamped outputs leave [-1, 1]

# ---- lfilter: the feed-forward sum over shifted samples, then the feedback recursion in a Loop

case("ta_lfilter", LFILTER, [waveform(2, 3, 160)], module=lambda: Lfilter(SECOND_A, SECOND_B))
case("ta_lfilter_no_clamp", LFILTER, [waveform(2, 160)], module=lambda: Lfilter(SECOND_A, LOUD_B, clamp=False))
case("ta_lfilter_clamped", LFILTER, [waveform(2, 160)], module=lambda: Lfilter(SECOND_A, LOUD_B, clamp=True))
case("ta_lfilter_slow_decay", LFILTER, [waveform(1, 240)],
     module=lambda: Lfilter([1.0, -2.2, 1.9, -0.6], [0.05, 0.05, 0.0, 0.0], clamp=False))
# A first-order "filter" (K = 1) is a gain b0 / a0: no recursion.
case("ta_lfilter_gain_only", LFILTER, [waveform(2, 50)], module=lambda: Lfilter([2.0], [0.8], clamp=False))
# Coefficients as model inputs: the coefficients are computed at run time, not folded.
case("ta_lfilter_coefficient_inputs", LFILTER,
     [waveform(2, 120), coefficients(*SECOND_A), coefficients(*SECOND_B)],
     lambda x, a, b: AF.lfilter(x, a, b, clamp=False))
# A bank of filters: coefficients [n_filters, K]. batching=True filters channel i with filter i;
# batching=False runs every filter over the whole waveform (stacked as a new dimension).
case("ta_lfilter_batched", LFILTER, [waveform(2, 3, 150)], module=lambda: Lfilter(BANK_A, BANK_B, clamp=False))
case("ta_lfilter_batched_clamped", LFILTER, [waveform(4, 3, 100, low=-4.0, high=4.0)],
     module=lambda: Lfilter(BANK_A, BANK_B))
case("ta_lfilter_bank_without_batching", LFILTER, [waveform(2, 120)],
     module=lambda: Lfilter(BANK_A, BANK_B, clamp=False, batching=False))
case("ta_lfilter_float64", LFILTER, [waveform(2, 2, 150, dtype=torch.float64)],
     module=lambda: Lfilter(SECOND_A, SECOND_B, clamp=False, dtype=torch.float64))
# Batch and time known only at run time.
case("ta_lfilter_dynamic", LFILTER, [waveform(2, 3, 130)], module=lambda: Lfilter(BANK_A, BANK_B, clamp=False),
     dynamic={0: [0, 2]})


# ---- biquads: torchaudio designs the coefficients, then calls lfilter. Sample rate 16 kHz.
# Traced, the design folds to constants in the trace; scripted, onnxport's constant folding
# computes its float64 Sin/Cos (ONNX Runtime's CPU Cos takes float only).

class Highpass(nn.Module):
    def forward(self, x):
        return AF.highpass_biquad(x, 16000, 1500.0, 0.707)


class Lowpass(nn.Module):
    def forward(self, x):
        return AF.lowpass_biquad(x, 16000, 2000.0, 0.9)


class Bandpass(nn.Module):
    def forward(self, x):
        return AF.bandpass_biquad(x, 16000, 3000.0, 2.0, const_skirt_gain=True)


class Equalizer(nn.Module):
    def forward(self, x):
        return AF.equalizer_biquad(x, 16000, 1000.0, 6.0, 0.707)


class Allpass(nn.Module):
    def forward(self, x):
        return AF.allpass_biquad(x, 16000, 4000.0, 0.707)


case("ta_highpass_biquad", LFILTER, [waveform(2, 200)], module=Highpass)
case("ta_lowpass_biquad", LFILTER, [waveform(3, 200)], module=Lowpass)
case("ta_bandpass_biquad", LFILTER, [waveform(2, 2, 200)], module=Bandpass)
case("ta_equalizer_biquad", LFILTER, [waveform(1, 200)], module=Equalizer)
case("ta_allpass_biquad", LFILTER, [waveform(2, 180)], module=Allpass)
case("ta_lowpass_biquad_dynamic", LFILTER, [waveform(2, 150)], module=Lowpass,
     dynamic={0: [0, 1]})


# ---- overdrive: the soft clipping is aten ops, the recursion over time a Loop

class Overdrive(nn.Module):
    def __init__(self, gain, colour):
        super().__init__()
        self.gain, self.colour = gain, colour

    def forward(self, x):
        return AF.overdrive(x, self.gain, self.colour)


# overdrive's soft clipping writes through boolean masks (index_put_): opset 11 (ScatterND).
case("ta_overdrive", OVERDRIVE, [waveform(2, 200)], module=lambda: Overdrive(20.0, 20.0), since=11,
     fails={9: "needs opset 11 or later"})
case("ta_overdrive_mild", OVERDRIVE, [waveform(3, 150)], module=lambda: Overdrive(4.0, 60.0), since=11)
case("ta_overdrive_3d", OVERDRIVE, [waveform(2, 2, 120)], module=lambda: Overdrive(10.0, 30.0), since=11)
