"""The torchaudio 0.13 suite's table: every case is one torchaudio transform, functional filter or
model, built with random weights from a fixed seed (no downloads), on small inputs.

A case is exported in each of its modes (torch.jit.script and torch.jit.trace) at each of its
opsets; one (case, mode, opset) is a row of the suite, id "<case>.<mode>.opset<N>".

Conventions (make_torchaudio.py relies on them):
- build() returns the nn.Module in eval mode; inputs() the tuple of forward()'s tensor arguments.
  Non-tensor arguments (a length, a rate) are fixed by a small wrapper module.
- A complex input cannot be given to the CLI as a .npy (ONNX Runtime has no complex tensors
  either): the wrapper ComplexInput takes torch.view_as_real(x) (a real tensor with a trailing
  dimension 2) and calls torch.view_as_complex inside the exported graph.
- A complex output is compared as torch.view_as_real(output): onnxport writes a complex output
  as a real tensor with a trailing dimension 2 (real, imaginary).
- Nested outputs (tuples, lists of lists of states) are flattened in order.
- spectral cases (STFT/iSTFT-based) are also exported at opset 11.
- Tolerances: rtol 1e-3 and an atol of a few times the case's own float32 rounding (PyTorch
  float32 vs float64 on the same inputs; the comments give it where it is large).
- SAMPLE names the cases of run_torchaudio.py --sample, a quick subset with one case of each
  kind (every case runs by default).
"""
import warnings

import torch
import torchaudio.functional as AF
import torchaudio.models as AM
import torchaudio.transforms as AT
from torch import Tensor, nn
from torchaudio.models.tacotron2 import _Prenet

SAMPLE_RATE = 16000
OPSETS = (13, 17)
SPECTRAL_OPSETS = (11, 13, 17)


class Case:
    def __init__(self, build, inputs, rtol=1e-3, atol=1e-5, spectral=False, modes=("script", "trace"),
                 note=""):
        self.build, self.inputs, self.rtol, self.atol = build, inputs, rtol, atol
        self.opsets = SPECTRAL_OPSETS if spectral else OPSETS
        self.spectral, self.modes, self.note = spectral, modes, note


# ---------------------------------------------------------------- wrappers

class ComplexInput(nn.Module):
    """Calls `inner` on torch.view_as_complex(x): x is the complex input as (..., 2) reals."""

    def __init__(self, inner: nn.Module):
        super().__init__()
        self.inner = inner

    def forward(self, x: Tensor) -> Tensor:
        return self.inner(torch.view_as_complex(x))


class InverseSpectrogramWithLength(nn.Module):
    """InverseSpectrogram with its `length` argument fixed (forward(spectrogram, length))."""

    def __init__(self, length: int, **kwargs):
        super().__init__()
        self.inverse = AT.InverseSpectrogram(**kwargs)
        self.length = length

    def forward(self, spectrogram: Tensor) -> Tensor:
        return self.inverse(spectrogram, self.length)


class LFilter(nn.Module):
    """torchaudio.functional.lfilter with fixed coefficients (a stable 3rd-order IIR filter)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("a", torch.tensor([1.0, -0.9, 0.4, -0.05]))
        self.register_buffer("b", torch.tensor([0.2, 0.3, 0.1, 0.05]))

    def forward(self, waveform: Tensor) -> Tensor:
        return AF.lfilter(waveform, self.a, self.b)


class Biquad(nn.Module):
    """One torchaudio.functional.*_biquad filter at SAMPLE_RATE with fixed parameters."""

    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind
        self.sample_rate = SAMPLE_RATE

    def forward(self, waveform: Tensor) -> Tensor:
        sr = self.sample_rate
        if self.kind == "highpass":
            return AF.highpass_biquad(waveform, sr, 1000.0, 0.707)
        if self.kind == "lowpass":
            return AF.lowpass_biquad(waveform, sr, 2000.0, 0.707)
        if self.kind == "bandpass":
            return AF.bandpass_biquad(waveform, sr, 1500.0, 0.9, False)
        if self.kind == "bandreject":
            return AF.bandreject_biquad(waveform, sr, 1500.0, 0.9)
        if self.kind == "allpass":
            return AF.allpass_biquad(waveform, sr, 1200.0, 0.707)
        if self.kind == "equalizer":
            return AF.equalizer_biquad(waveform, sr, 1000.0, 6.0, 0.707)
        if self.kind == "bass":
            return AF.bass_biquad(waveform, sr, 4.0, 100.0, 0.707)
        if self.kind == "treble":
            return AF.treble_biquad(waveform, sr, 3.0, 3000.0, 0.707)
        if self.kind == "band":
            return AF.band_biquad(waveform, sr, 1500.0, 0.707, False)
        raise ValueError(self.kind)


class Wav2Vec2WithLengths(nn.Module):
    """Wav2Vec2Model.forward(waveforms, lengths): padded batch, both outputs."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, waveforms: Tensor, lengths: Tensor):
        return self.model(waveforms, lengths)


class Wav2Vec2NoLengths(nn.Module):
    """Wav2Vec2Model.forward(waveforms): the emissions only (the lengths output is None)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, waveforms: Tensor) -> Tensor:
        return self.model(waveforms)[0]


class EmformerInfer(nn.Module):
    """Emformer.infer: one streaming step from no state; outputs, lengths and the new states."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input: Tensor, lengths: Tensor):
        return self.model.infer(input, lengths, None)


class RNNTPredictor(nn.Module):
    """RNNT's predictor (prediction network) from no state: encodings, lengths, LSTM states."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.predictor = model.predictor

    def forward(self, targets: Tensor, lengths: Tensor):
        return self.predictor(targets, lengths, None)


class RNNTModel(nn.Module):
    """RNNT.forward (transcriber + predictor + joiner) from no predictor state."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, sources: Tensor, source_lengths: Tensor, targets: Tensor, target_lengths: Tensor):
        return self.model(sources, source_lengths, targets, target_lengths, None)


class DeterministicPrenet(_Prenet):
    """Tacotron2's prenet without its always-on dropout (torchaudio applies F.dropout with
    training=True even in eval mode, so PyTorch's own outputs would be random)."""

    def forward(self, x: Tensor) -> Tensor:
        for linear in self.layers:
            x = torch.relu(linear(x))
        return x


class Tacotron2Infer(nn.Module):
    """Tacotron2.infer(tokens, lengths): the autoregressive decoder loop with early stopping."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, tokens: Tensor, lengths: Tensor):
        return self.model.infer(tokens, lengths)


class WaveRNNInfer(nn.Module):
    """WaveRNN.infer(specgram): the sample-by-sample loop; the waveform only (lengths is None)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, specgram: Tensor) -> Tensor:
        return self.model.infer(specgram)[0]


# ---------------------------------------------------------------- builders

def gen(seed_offset=0):
    """Inputs draw from their own generator (seeded per case by make_torchaudio.py)."""
    return torch.Generator().manual_seed(1234 + seed_offset)


def waveform(*shape, scale=0.5):
    return lambda: (torch.rand(*shape, generator=gen()) * 2 - 1) * scale


def one(make):
    return lambda: (make(),)


def complex_spec(*shape):
    """A complex spectrogram as view_as_real: that of a real random waveform, so that it is a
    consistent STFT (InverseSpectrogram, TimeStretch)."""
    def make():
        stft = AT.Spectrogram(n_fft=256, hop_length=64, power=None)
        spec = stft((torch.rand(*shape, generator=gen()) * 2 - 1) * 0.5)
        return (torch.view_as_real(spec).contiguous(),)
    return make


def power_spec(*shape):
    def make():
        return (AT.Spectrogram(n_fft=256, hop_length=64, power=2.0)(
            (torch.rand(*shape, generator=gen()) * 2 - 1) * 0.5),)
    return make


STFT = dict(n_fft=256, hop_length=64)


def pitch_shift():
    """An octave up: the resampling ratio is 2:1 (n_steps=3 would resample 19027 -> 16000 Hz with
    a kernel of 16000 phases, 30 s to build and a huge constant)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Lazy modules are a new feature..."
        module = AT.PitchShift(SAMPLE_RATE, n_steps=12, n_fft=256, hop_length=64)
    module(torch.zeros(1, 4000))  # a LazyModule: the first call materializes its resampling kernel
    return module


def wav2vec2(extractor_mode="group_norm", layer_norm_first=False, aux_num_out=12):
    """wav2vec2_model with the base/large structure at a small size: 3 conv layers (stride 20),
    2 transformer layers of width 48."""
    return AM.wav2vec2_model(
        extractor_mode=extractor_mode, extractor_conv_layer_config=[(32, 10, 5), (32, 3, 2), (32, 2, 2)],
        extractor_conv_bias=extractor_mode == "layer_norm", encoder_embed_dim=48, encoder_projection_dropout=0.0,
        encoder_pos_conv_kernel=16, encoder_pos_conv_groups=4, encoder_num_layers=2, encoder_num_heads=4,
        encoder_attention_dropout=0.0, encoder_ff_interm_features=96, encoder_ff_interm_dropout=0.0,
        encoder_dropout=0.0, encoder_layer_norm_first=layer_norm_first, encoder_layer_drop=0.0,
        aux_num_out=aux_num_out)


def rnnt():
    """emformer_rnnt_model with emformer_rnnt_base's structure (time reduction, tanh on memory,
    layer-normed LSTMs, GELU) at a small size."""
    return AM.emformer_rnnt_model(
        input_dim=20, encoding_dim=32, num_symbols=16, segment_length=4, right_context_length=2,
        time_reduction_input_dim=32, time_reduction_stride=2, transformer_num_heads=4, transformer_ffn_dim=48,
        transformer_num_layers=2, transformer_dropout=0.0, transformer_activation="gelu",
        transformer_left_context_length=4, transformer_max_memory_size=0,
        transformer_weight_init_scale_strategy="depthwise", transformer_tanh_on_mem=True, symbol_embedding_dim=16,
        num_lstm_layers=2, lstm_layer_norm=True, lstm_layer_norm_epsilon=1e-3, lstm_dropout=0.0)


def rnnt_inputs():
    g = gen()
    sources = torch.randn(2, 18, 20, generator=g)  # 16 frames + right context 2
    targets = torch.randint(0, 16, (2, 5), generator=g, dtype=torch.int32)
    return sources, torch.tensor([16, 12], dtype=torch.int32), targets, torch.tensor([5, 3], dtype=torch.int32)


def rnnt_joiner_inputs():
    g = gen()
    return (torch.randn(2, 8, 32, generator=g), torch.tensor([8, 6], dtype=torch.int32),
            torch.randn(2, 5, 32, generator=g), torch.tensor([5, 3], dtype=torch.int32))


def tacotron2():
    model = AM.Tacotron2(
        n_mels=16, n_symbol=20, symbol_embedding_dim=32, encoder_embedding_dim=32, encoder_n_convolution=2,
        encoder_kernel_size=3, decoder_rnn_dim=32, decoder_max_step=12, decoder_dropout=0.0,
        attention_rnn_dim=32, attention_hidden_dim=16, attention_location_n_filter=4,
        attention_location_kernel_size=5, attention_dropout=0.0, prenet_dim=16, postnet_n_convolution=2,
        postnet_kernel_size=3, postnet_embedding_dim=16, gate_threshold=0.5)
    prenet = DeterministicPrenet(16 * 1, [16, 16])
    prenet.load_state_dict(model.decoder.prenet.state_dict())
    model.decoder.prenet = prenet
    return model


def tacotron2_inputs():
    g = gen()
    tokens = torch.randint(1, 20, (2, 8), generator=g)
    tokens[1, 6:] = 0
    mel = torch.randn(2, 16, 10, generator=g)
    return tokens, torch.tensor([8, 6]), mel, torch.tensor([10, 8])


def tacotron2_infer_inputs():
    tokens, lengths, _, _ = tacotron2_inputs()
    return tokens, lengths


def tacotron2_infer():
    model = tacotron2()
    # With its initial weights the gate never fires and the loop runs to decoder_max_step. This
    # gate (weights of std 1, bias -1.14) stops utterance 1 after 3 frames and utterance 0 after 5
    # (pre-activations pass 0 by at least 0.02), so the per-utterance lengths and the early exit on
    # torch.all(finished) are part of the row.
    gate = model.decoder.gate_layer
    with torch.no_grad():
        gate.weight.copy_(torch.randn(gate.weight.shape, generator=torch.Generator().manual_seed(3)))
        gate.bias.fill_(-1.14)
    return Tacotron2Infer(model)


def wavernn(scale_fc3=1.0):
    model = AM.WaveRNN(upsample_scales=[2, 2], n_classes=16, hop_length=4, n_res_block=2, n_rnn=32, n_fc=32,
                       kernel_size=5, n_freq=16, n_hidden=16, n_output=16)
    with torch.no_grad():
        model.fc3.weight.mul_(scale_fc3)
        model.fc3.bias.mul_(scale_fc3)
    return model


def wavernn_infer():
    # infer draws every sample with torch.multinomial; logits scaled 1e4 make the posterior
    # one-hot (the other probabilities underflow to exactly 0) so the draw is deterministic.
    return WaveRNNInfer(wavernn(scale_fc3=1e4))


def hdemucs():
    """HDemucs (hdemucs_low's structure: both branches, DConv with LSTM and local attention in
    the deeper layers) at a small size: nfft 256, depth 3, 8 channels."""
    return AM.HDemucs(sources=["drums", "bass", "other"], audio_channels=2, channels=8, growth=2, nfft=256,
                      depth=3, freq_emb=0.2, emb_scale=10, emb_smooth=True, kernel_size=8, time_stride=2, stride=4,
                      context=1, context_enc=0, norm_starts=2, norm_groups=4, dconv_depth=2, dconv_comp=4,
                      dconv_attn=2, dconv_lstm=2, dconv_init=1e-4)


def scaled_inputs(make, scale):
    def wrapped():
        return tuple(t * scale for t in make())
    return wrapped


# ---------------------------------------------------------------- the table

CASES = {
    # ------------------------------------------------ transforms
    "spectrogram_complex": Case(lambda: AT.Spectrogram(power=None, **STFT), one(waveform(2, 4000)), atol=1e-4,
                                spectral=True, note="power=None: a complex output"),
    "spectrogram_power": Case(lambda: AT.Spectrogram(power=2.0, **STFT), one(waveform(2, 4000)), atol=1e-4,
                              spectral=True),
    "melspectrogram": Case(lambda: AT.MelSpectrogram(SAMPLE_RATE, n_mels=32, **STFT), one(waveform(2, 4000)),
                           atol=1e-4, spectral=True),
    "mfcc": Case(lambda: AT.MFCC(SAMPLE_RATE, n_mfcc=13, melkwargs=dict(n_mels=32, **STFT)),
                 one(waveform(2, 4000)), atol=1e-3, spectral=True),
    "lfcc": Case(lambda: AT.LFCC(SAMPLE_RATE, n_filter=32, n_lfcc=13, speckwargs=STFT),
                 one(waveform(2, 4000)), atol=1e-3, spectral=True),
    "amplitude_to_db": Case(lambda: AT.AmplitudeToDB(stype="power", top_db=60.0), power_spec(2, 4000), atol=1e-4),
    "inverse_spectrogram": Case(lambda: ComplexInput(InverseSpectrogramWithLength(4000, **STFT)),
                                complex_spec(2, 4000), atol=1e-4, spectral=True,
                                note="complex input given as view_as_real"),
    "griffinlim": Case(lambda: AT.GriffinLim(n_iter=4, momentum=0.99, rand_init=False, length=4000, **STFT),
                       power_spec(2, 4000), atol=1e-3, spectral=True, note="4 iterations, momentum 0.99"),
    # The phase is accumulated over 49 frames (up to ~1e4 rad): float32 PyTorch differs from
    # float64 by 3.1e-3 here, ONNX Runtime's file by as much (1.3e-2 while its CumSum summed in
    # float32; libtorch sums in double) and from float32 PyTorch by 1.8e-3.
    "time_stretch": Case(lambda: ComplexInput(AT.TimeStretch(hop_length=64, n_freq=129, fixed_rate=1.3)),
                         complex_spec(2, 4000), atol=5e-3, spectral=True,
                         note="complex input and output"),
    "resample": Case(lambda: AT.Resample(SAMPLE_RATE, 12000), one(waveform(2, 4000)), atol=1e-5),
    "resample_kaiser": Case(lambda: AT.Resample(SAMPLE_RATE, 8000, resampling_method="kaiser_window", beta=14.77),
                            one(waveform(2, 4000)), atol=1e-5),
    # A phase vocoder too: float32 PyTorch differs from float64 by 1.3e-4 (at 8000 samples the file
    # differed from float64 by 2.0e-3 while CumSum summed in float32, 3.2e-4 since, as PyTorch).
    "pitch_shift": Case(pitch_shift, one(waveform(1, 4000)), atol=3e-4, spectral=True),
    # In Hz, up to 4.3e3: float32 PyTorch differs from float64 by 1e-3.
    "spectral_centroid": Case(lambda: AT.SpectralCentroid(SAMPLE_RATE, **STFT), one(waveform(2, 4000)),
                              rtol=1e-3, atol=1e-2, spectral=True),
    "loudness": Case(lambda: AT.Loudness(SAMPLE_RATE), one(waveform(2, 8000)), atol=1e-3,
                     note="K-weighting with treble_biquad/lfilter, 0.4 s gating blocks"),
    "vol": Case(lambda: AT.Vol(6.0, gain_type="db"), one(waveform(2, 4000))),
    "fade": Case(lambda: AT.Fade(fade_in_len=400, fade_out_len=800, fade_shape="half_sine"),
                 one(waveform(2, 4000))),
    "compute_deltas": Case(lambda: AT.ComputeDeltas(win_length=5), one(lambda: torch.randn(2, 20, 50, generator=gen())),
                           atol=1e-5),
    "sliding_window_cmn": Case(lambda: AT.SlidingWindowCmn(cmn_window=20, min_cmn_window=5, norm_vars=True),
                               one(lambda: torch.randn(1, 40, 13, generator=gen())), atol=1e-4),
    # ------------------------------------------------ functional filters
    # IIR filters amplify rounding by ~1/(1 - pole radius): bass_biquad's float32 output differs
    # from float64 by 2.1e-5 (the others by < 1e-6), hence atol 1e-4 for all of them.
    "lfilter": Case(LFilter, one(waveform(2, 1000)), atol=1e-4, note="3rd-order IIR"),
    **{f"{kind}_biquad": Case(lambda kind=kind: Biquad(kind), one(waveform(2, 1000)), atol=1e-4)
       for kind in ("highpass", "lowpass", "bandpass", "bandreject", "allpass", "equalizer", "bass", "treble",
                    "band")},
    # ------------------------------------------------ models
    "wav2letter": Case(lambda: AM.Wav2Letter(num_classes=40, input_type="waveform"),
                       one(waveform(1, 1, 4000)), atol=1e-4, note="full size (the builder has no size options)"),
    "wav2vec2": Case(lambda: Wav2Vec2NoLengths(wav2vec2()), one(waveform(2, 2000)), atol=1e-4),
    "wav2vec2_lengths": Case(lambda: Wav2Vec2WithLengths(wav2vec2()),
                             lambda: (waveform(2, 2000)(), torch.tensor([2000, 1500])), atol=1e-4,
                             note="padding mask from lengths"),
    "hubert": Case(lambda: Wav2Vec2NoLengths(wav2vec2("layer_norm", True, None)), one(waveform(2, 2000)),
                   atol=1e-4, note="hubert_large structure: layer_norm extractor, pre-LN encoder"),
    "conformer": Case(lambda: AM.Conformer(input_dim=32, num_heads=4, ffn_dim=64, num_layers=2,
                                           depthwise_conv_kernel_size=7),
                      lambda: (torch.randn(2, 20, 32, generator=gen()), torch.tensor([20, 15])), atol=1e-4),
    "emformer": Case(lambda: AM.Emformer(32, 4, 64, 2, segment_length=4, left_context_length=4,
                                         right_context_length=2, max_memory_size=2),
                     lambda: (torch.randn(2, 18, 32, generator=gen()), torch.tensor([16, 12])), atol=1e-4),
    "emformer_infer": Case(lambda: EmformerInfer(AM.Emformer(32, 4, 64, 2, segment_length=4, left_context_length=4,
                                                             right_context_length=2, max_memory_size=2)),
                           lambda: (torch.randn(2, 6, 32, generator=gen()), torch.tensor([6, 6])), atol=1e-4,
                           note="one streaming step (infer, no state)"),
    "rnnt_transcriber": Case(lambda: rnnt().transcriber, lambda: rnnt_inputs()[:2], atol=1e-4),
    "rnnt_predictor": Case(lambda: RNNTPredictor(rnnt()), lambda: rnnt_inputs()[2:], atol=1e-4),
    "rnnt_joiner": Case(lambda: rnnt().joiner, rnnt_joiner_inputs, atol=1e-4),
    "rnnt": Case(lambda: RNNTModel(rnnt()), rnnt_inputs, atol=1e-4, note="the whole RNNT.forward"),
    "tacotron2": Case(tacotron2, tacotron2_inputs, atol=1e-4, note="teacher-forced forward, prenet dropout off"),
    "tacotron2_infer": Case(tacotron2_infer, tacotron2_infer_inputs, atol=1e-4,
                            note="decoder loop, early stop, prenet dropout off"),
    "wavernn": Case(wavernn, lambda: (waveform(1, 1, 24)(), torch.randn(1, 1, 16, 10, generator=gen())), atol=1e-4),
    "wavernn_infer": Case(wavernn_infer, lambda: (torch.randn(1, 16, 6, generator=gen()),), atol=1e-4,
                          note="multinomial made deterministic (one-hot posterior)"),
    "hdemucs": Case(hdemucs, one(waveform(1, 2, 2048)), atol=1e-4),
    "conv_tasnet": Case(lambda: AM.ConvTasNet(num_sources=2, enc_kernel_size=16, enc_num_feats=32, msk_kernel_size=3,
                                              msk_num_feats=16, msk_num_hidden_feats=32, msk_num_layers=3,
                                              msk_num_stacks=2, msk_activate="relu"),
                        one(waveform(1, 1, 800)), atol=1e-4),
    "deepspeech": Case(lambda: AM.DeepSpeech(n_feature=20, n_hidden=32, n_class=10),
                       one(lambda: torch.randn(2, 1, 15, 20, generator=gen())), atol=1e-4),
}

# run_torchaudio.py --sample: one case of each kind.
SAMPLE = ("spectrogram_complex", "mfcc", "griffinlim", "time_stretch", "resample", "fade", "lfilter",
          "highpass_biquad", "wav2vec2", "conformer", "rnnt_predictor", "tacotron2_infer", "conv_tasnet")
