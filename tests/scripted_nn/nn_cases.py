"""Every torch.nn module class, scripted: how to build it and what to feed it.

CASES maps a case name to (class name, constructor, input makers); a maker may return a tuple
(an LSTM's (h0, c0)), which the export takes as that many inputs. A class may have
several cases (an LSTM with and without an initial state). EXCEPTIONS maps a class name to the
reason it is not exported scripted; the coverage check in run_scripted_nn.py fails when a
torch.nn module class is in neither.
"""
import torch
import torch.nn as nn


def r(*shape):
    return lambda: torch.randn(*shape)


def pos(*shape):
    return lambda: torch.rand(*shape) * 0.9 + 0.05


def ints(high, *shape):
    return lambda: torch.randint(0, high, shape)


def case(cls, ctor, *inputs):
    return (cls, ctor, list(inputs))


class RecurrentBlock(nn.Module):
    """How RNNs are usually scripted: inside a module, which picks the Tensor overload of forward."""
    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out)


class ConvTransposeToSize(nn.Module):
    """ConvTranspose called with output_size: the padding it adds is computed in the forward."""
    def __init__(self, conv, size):
        super().__init__()
        self.conv = conv
        self.size = size

    def forward(self, x):
        return self.conv(x, output_size=self.size)


class DecoderWithMasks(nn.Module):
    """A decoder as people call it: a causal target mask and key padding masks."""
    def __init__(self, decoder):
        super().__init__()
        self.decoder = decoder

    def forward(self, tgt, memory, tgt_padding, memory_padding):
        t = tgt.size(0)
        causal = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        return self.decoder(tgt, memory, tgt_mask=causal, tgt_key_padding_mask=tgt_padding,
                            memory_key_padding_mask=memory_padding)


class EncoderWithPadding(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, src, src_padding):
        return self.encoder(src, src_key_padding_mask=src_padding)


class TransformerWithMasks(nn.Module):
    def __init__(self, transformer):
        super().__init__()
        self.transformer = transformer

    def forward(self, src, tgt, src_padding):
        t = tgt.size(0)
        causal = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        return self.transformer(src, tgt, tgt_mask=causal, src_key_padding_mask=src_padding,
                                memory_key_padding_mask=src_padding)


def padding_mask(batch, length):
    """Key padding masks with the last positions of the second row masked (never a whole row)."""
    def make():
        mask = torch.zeros(batch, length, dtype=torch.bool)
        mask[1, length - 2:] = True
        return mask
    return make


def _transformer_layer(cls, **kw):
    return lambda: getattr(nn, cls)(d_model=16, nhead=4, dim_feedforward=32, dropout=0.0, **kw)


CASES = {
    # convolutions
    "Conv1d": case("Conv1d", lambda: nn.Conv1d(3, 4, 3, padding=1), r(2, 3, 10)),
    "Conv2d": case("Conv2d", lambda: nn.Conv2d(3, 4, 3, stride=2, padding=1), r(2, 3, 10, 10)),
    "Conv2d_groups_dilation": case("Conv2d", lambda: nn.Conv2d(4, 4, 3, groups=2, dilation=2), r(1, 4, 12, 12)),
    "Conv2d_same": case("Conv2d", lambda: nn.Conv2d(3, 4, 3, padding="same"), r(1, 3, 9, 9)),
    "Conv2d_reflect": case("Conv2d", lambda: nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect"), r(1, 3, 9, 9)),
    "Conv3d": case("Conv3d", lambda: nn.Conv3d(2, 3, 3, padding=1), r(1, 2, 5, 6, 6)),
    "ConvTranspose1d": case("ConvTranspose1d", lambda: nn.ConvTranspose1d(3, 4, 3, stride=2), r(2, 3, 7)),
    "ConvTranspose2d": case("ConvTranspose2d", lambda: nn.ConvTranspose2d(3, 4, 3, stride=2, output_padding=1),
                            r(1, 3, 6, 6)),
    "ConvTranspose2d_output_size": case("ConvTranspose2d", lambda: ConvTransposeToSize(
        nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1), [12, 13]), r(1, 3, 6, 7)),
    "ConvTranspose1d_output_size": case("ConvTranspose1d", lambda: ConvTransposeToSize(
        nn.ConvTranspose1d(3, 2, 4, stride=3), [21]), r(2, 3, 6)),
    "ConvTranspose3d": case("ConvTranspose3d", lambda: nn.ConvTranspose3d(2, 3, 3, stride=2), r(1, 2, 3, 4, 4)),
    "Unfold": case("Unfold", lambda: nn.Unfold(kernel_size=(2, 3), padding=1, stride=2), r(2, 3, 6, 7)),
    # pooling
    "AvgPool1d": case("AvgPool1d", lambda: nn.AvgPool1d(3, stride=2), r(2, 3, 11)),
    "AvgPool2d": case("AvgPool2d", lambda: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
                      r(2, 3, 9, 9)),
    "AvgPool3d": case("AvgPool3d", lambda: nn.AvgPool3d(2), r(1, 2, 4, 6, 6)),
    "MaxPool1d": case("MaxPool1d", lambda: nn.MaxPool1d(3, stride=2), r(2, 3, 11)),
    "MaxPool2d": case("MaxPool2d", lambda: nn.MaxPool2d(3, stride=2, ceil_mode=True), r(2, 3, 10, 10)),
    "MaxPool2d_indices": case("MaxPool2d", lambda: nn.MaxPool2d(2, return_indices=True), r(1, 2, 6, 6)),
    "MaxPool3d": case("MaxPool3d", lambda: nn.MaxPool3d(2), r(1, 2, 4, 6, 6)),
    "AdaptiveAvgPool1d": case("AdaptiveAvgPool1d", lambda: nn.AdaptiveAvgPool1d(4), r(2, 3, 12)),
    "AdaptiveAvgPool2d": case("AdaptiveAvgPool2d", lambda: nn.AdaptiveAvgPool2d((1, 1)), r(2, 3, 7, 7)),
    "AdaptiveAvgPool1d_uneven": case("AdaptiveAvgPool1d", lambda: nn.AdaptiveAvgPool1d(5), r(2, 3, 12)),
    "AdaptiveAvgPool2d_uneven": case("AdaptiveAvgPool2d", lambda: nn.AdaptiveAvgPool2d((3, 4)), r(2, 3, 7, 10)),
    "AdaptiveAvgPool3d_uneven": case("AdaptiveAvgPool3d", lambda: nn.AdaptiveAvgPool3d((2, 3, 2)), r(1, 2, 5, 7, 3)),
    "AdaptiveAvgPool3d": case("AdaptiveAvgPool3d", lambda: nn.AdaptiveAvgPool3d(1), r(1, 2, 4, 4, 4)),
    "AdaptiveMaxPool1d": case("AdaptiveMaxPool1d", lambda: nn.AdaptiveMaxPool1d(4), r(2, 3, 12)),
    "AdaptiveMaxPool2d": case("AdaptiveMaxPool2d", lambda: nn.AdaptiveMaxPool2d(1), r(2, 3, 7, 7)),
    "AdaptiveMaxPool3d": case("AdaptiveMaxPool3d", lambda: nn.AdaptiveMaxPool3d(1), r(1, 2, 4, 4, 4)),
    "LPPool1d": case("LPPool1d", lambda: nn.LPPool1d(2, 3, stride=2), pos(2, 3, 11)),
    "LPPool2d": case("LPPool2d", lambda: nn.LPPool2d(2, 2), pos(1, 3, 8, 8)),
    # normalization
    "BatchNorm1d": case("BatchNorm1d", lambda: nn.BatchNorm1d(3), r(4, 3, 5)),
    "BatchNorm2d": case("BatchNorm2d", lambda: nn.BatchNorm2d(3), r(2, 3, 5, 5)),
    "BatchNorm3d": case("BatchNorm3d", lambda: nn.BatchNorm3d(2), r(1, 2, 3, 4, 4)),
    "InstanceNorm1d": case("InstanceNorm1d", lambda: nn.InstanceNorm1d(3, affine=True), r(2, 3, 8)),
    "InstanceNorm2d": case("InstanceNorm2d", lambda: nn.InstanceNorm2d(3), r(2, 3, 6, 6)),
    "InstanceNorm3d": case("InstanceNorm3d", lambda: nn.InstanceNorm3d(2, affine=True), r(1, 2, 3, 4, 4)),
    "GroupNorm": case("GroupNorm", lambda: nn.GroupNorm(2, 4), r(2, 4, 5, 5)),
    "LayerNorm": case("LayerNorm", lambda: nn.LayerNorm([5, 6]), r(2, 3, 5, 6)),
    "LocalResponseNorm": case("LocalResponseNorm", lambda: nn.LocalResponseNorm(3), r(2, 6, 5, 5)),
    # activations
    **{name: case(name, getattr(nn, name), r(3, 8)) for name in [
        "ReLU", "ReLU6", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh", "Hardsigmoid",
        "Hardswish", "Hardtanh", "Hardshrink", "Softshrink", "Tanhshrink", "Softsign", "Softplus", "LogSigmoid",
        "LeakyReLU", "Identity", "RReLU"]},
    "Softplus_threshold": case("Softplus", lambda: nn.Softplus(beta=2.0, threshold=1.5), lambda: torch.randn(3, 8) * 2),
    "GELU_tanh": case("GELU", lambda: nn.GELU(approximate="tanh"), r(3, 8)),
    "Threshold": case("Threshold", lambda: nn.Threshold(0.1, 20.0), r(3, 8)),
    "PReLU": case("PReLU", lambda: nn.PReLU(4), r(2, 4, 5)),
    "GLU": case("GLU", lambda: nn.GLU(1), r(3, 8)),
    "Softmax": case("Softmax", lambda: nn.Softmax(1), r(3, 8)),
    "Softmin": case("Softmin", lambda: nn.Softmin(1), r(3, 8)),
    "LogSoftmax": case("LogSoftmax", lambda: nn.LogSoftmax(1), r(3, 8)),
    "Softmax2d": case("Softmax2d", nn.Softmax2d, r(2, 3, 4, 4)),
    # dropout (eval: identity)
    **{name: case(name, getattr(nn, name), r(2, 3, 4, 4)) for name in [
        "Dropout", "Dropout2d", "AlphaDropout", "FeatureAlphaDropout"]},
    "Dropout1d": case("Dropout1d", nn.Dropout1d, r(2, 3, 4)),
    "Dropout3d": case("Dropout3d", nn.Dropout3d, r(1, 2, 3, 4, 4)),
    # linear, embedding
    "Linear": case("Linear", lambda: nn.Linear(8, 5), r(3, 8)),
    "Bilinear": case("Bilinear", lambda: nn.Bilinear(4, 5, 3), r(2, 4), r(2, 5)),
    "Embedding": case("Embedding", lambda: nn.Embedding(10, 4, padding_idx=0), ints(10, 2, 5)),
    "EmbeddingBag": case("EmbeddingBag", lambda: nn.EmbeddingBag(10, 4, mode="mean"), ints(10, 3, 4)),
    "Flatten": case("Flatten", nn.Flatten, r(2, 3, 4, 5)),
    "Unflatten": case("Unflatten", lambda: nn.Unflatten(1, (2, 6)), r(3, 12)),
    "CosineSimilarity": case("CosineSimilarity", nn.CosineSimilarity, r(3, 8), r(3, 8)),
    "PairwiseDistance": case("PairwiseDistance", nn.PairwiseDistance, r(3, 8), r(3, 8)),
    "PixelShuffle": case("PixelShuffle", lambda: nn.PixelShuffle(2), r(1, 8, 3, 3)),
    "PixelUnshuffle": case("PixelUnshuffle", lambda: nn.PixelUnshuffle(2), r(1, 2, 4, 6)),
    "ChannelShuffle": case("ChannelShuffle", lambda: nn.ChannelShuffle(2), r(1, 4, 3, 3)),
    # padding
    "ZeroPad2d": case("ZeroPad2d", lambda: nn.ZeroPad2d((1, 2, 0, 1)), r(1, 2, 4, 4)),
    "ConstantPad1d": case("ConstantPad1d", lambda: nn.ConstantPad1d(2, 3.5), r(1, 2, 4)),
    "ConstantPad2d": case("ConstantPad2d", lambda: nn.ConstantPad2d((1, 0, 2, 1), -1.0), r(1, 2, 4, 4)),
    "ConstantPad3d": case("ConstantPad3d", lambda: nn.ConstantPad3d(1, 0.5), r(1, 1, 2, 3, 3)),
    "ReflectionPad1d": case("ReflectionPad1d", lambda: nn.ReflectionPad1d(2), r(1, 2, 5)),
    "ReflectionPad2d": case("ReflectionPad2d", lambda: nn.ReflectionPad2d((1, 2, 2, 1)), r(1, 2, 4, 4)),
    "ReflectionPad3d": case("ReflectionPad3d", lambda: nn.ReflectionPad3d(1), r(1, 1, 3, 3, 3)),
    "ReplicationPad1d": case("ReplicationPad1d", lambda: nn.ReplicationPad1d(2), r(1, 2, 5)),
    "ReplicationPad2d": case("ReplicationPad2d", lambda: nn.ReplicationPad2d((1, 2, 2, 1)), r(1, 2, 4, 4)),
    "ReplicationPad3d": case("ReplicationPad3d", lambda: nn.ReplicationPad3d(1), r(1, 1, 3, 3, 3)),
    # upsampling
    "Upsample_nearest": case("Upsample", lambda: nn.Upsample(scale_factor=2), r(1, 2, 3, 4)),
    "Upsample_bilinear": case("Upsample", lambda: nn.Upsample(size=(5, 7), mode="bilinear", align_corners=False),
                              r(1, 2, 3, 4)),
    "Upsample_bicubic_scale": case("Upsample", lambda: nn.Upsample(scale_factor=2.0, mode="bicubic",
                                                                   align_corners=True), r(1, 2, 3, 4)),
    "UpsamplingNearest2d": case("UpsamplingNearest2d", lambda: nn.UpsamplingNearest2d(scale_factor=2), r(1, 2, 3, 3)),
    "UpsamplingBilinear2d": case("UpsamplingBilinear2d", lambda: nn.UpsamplingBilinear2d(scale_factor=2),
                                 r(1, 2, 3, 3)),
    # recurrent
    "RNN": case("RNN", lambda: nn.RNN(4, 6, num_layers=2), r(5, 2, 4)),
    "RNN_relu_state": case("RNN", lambda: nn.RNN(4, 6, nonlinearity="relu"), r(5, 2, 4), r(1, 2, 6)),
    "GRU": case("GRU", lambda: nn.GRU(4, 6, batch_first=True), r(2, 5, 4)),
    "GRU_bidirectional_state": case("GRU", lambda: nn.GRU(4, 6, bidirectional=True), r(5, 2, 4), r(2, 2, 6)),
    "LSTM": case("LSTM", lambda: nn.LSTM(4, 6, num_layers=2), r(5, 2, 4)),
    "LSTM_state": case("LSTM", lambda: nn.LSTM(4, 6, batch_first=True), r(2, 5, 4),
                       lambda: (torch.randn(1, 2, 6), torch.randn(1, 2, 6))),
    "LSTM_in_module": case("LSTM", lambda: RecurrentBlock(nn.LSTM(4, 6, batch_first=True)), r(2, 5, 4)),
    "GRU_in_module": case("GRU", lambda: RecurrentBlock(nn.GRU(4, 6)), r(5, 2, 4)),
    "RNNCell": case("RNNCell", lambda: nn.RNNCell(4, 6), r(3, 4), r(3, 6)),
    "GRUCell": case("GRUCell", lambda: nn.GRUCell(4, 6), r(3, 4), r(3, 6)),
    "LSTM_proj": case("LSTM", lambda: nn.LSTM(4, 6, num_layers=2, proj_size=3), r(5, 2, 4)),
    "LSTM_proj_bidirectional_state": case("LSTM", lambda: nn.LSTM(4, 6, batch_first=True, bidirectional=True,
                                                                  proj_size=2), r(2, 5, 4),
                                          lambda: (torch.randn(2, 2, 2), torch.randn(2, 2, 6))),
    "LSTMCell": case("LSTMCell", lambda: nn.LSTMCell(4, 6), r(3, 4)),
    # attention, transformers
    "MultiheadAttention": case("MultiheadAttention", lambda: nn.MultiheadAttention(16, 4), r(5, 2, 16), r(5, 2, 16),
                               r(5, 2, 16)),
    "MultiheadAttention_batch_first": case("MultiheadAttention", lambda: nn.MultiheadAttention(16, 4, batch_first=True),
                                           r(2, 5, 16), r(2, 3, 16), r(2, 3, 16)),
    "TransformerEncoderLayer": case("TransformerEncoderLayer", _transformer_layer("TransformerEncoderLayer"),
                                    r(5, 2, 16)),
    "TransformerDecoderLayer": case("TransformerDecoderLayer", _transformer_layer("TransformerDecoderLayer"),
                                    r(5, 2, 16), r(4, 2, 16)),
    "TransformerEncoder": case("TransformerEncoder", lambda: nn.TransformerEncoder(
        _transformer_layer("TransformerEncoderLayer", batch_first=True)(), 2), r(2, 5, 16)),
    # batch_first with a padding mask: the encoder's nested-tensor fast path (eval, no grad)
    "TransformerEncoder_padding_mask": case("TransformerEncoder", lambda: EncoderWithPadding(nn.TransformerEncoder(
        _transformer_layer("TransformerEncoderLayer", batch_first=True)(), 2)), r(2, 5, 16), padding_mask(2, 5)),
    "TransformerDecoder": case("TransformerDecoder", lambda: nn.TransformerDecoder(
        _transformer_layer("TransformerDecoderLayer")(), 2), r(5, 2, 16), r(4, 2, 16)),
    "Transformer": case("Transformer", lambda: nn.Transformer(d_model=16, nhead=4, num_encoder_layers=1,
                                                              num_decoder_layers=1, dim_feedforward=32,
                                                              dropout=0.0), r(5, 2, 16), r(4, 2, 16)),
    "TransformerDecoderLayer_masks": case("TransformerDecoderLayer", lambda: DecoderWithMasks(
        _transformer_layer("TransformerDecoderLayer")()), r(5, 2, 16), r(4, 2, 16), padding_mask(2, 5),
        padding_mask(2, 4)),
    "TransformerDecoder_masks": case("TransformerDecoder", lambda: DecoderWithMasks(nn.TransformerDecoder(
        _transformer_layer("TransformerDecoderLayer")(), 2)), r(5, 2, 16), r(4, 2, 16), padding_mask(2, 5),
        padding_mask(2, 4)),
    "Transformer_masks": case("Transformer", lambda: TransformerWithMasks(nn.Transformer(
        d_model=16, nhead=4, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=32, dropout=0.0)),
        r(4, 2, 16), r(5, 2, 16), padding_mask(2, 4)),
    # containers
    "Sequential": case("Sequential", lambda: nn.Sequential(nn.Linear(8, 6), nn.ReLU(), nn.Linear(6, 2)), r(3, 8)),
    # losses (reduction mean unless said)
    "L1Loss": case("L1Loss", nn.L1Loss, r(3, 5), r(3, 5)),
    "MSELoss": case("MSELoss", nn.MSELoss, r(3, 5), r(3, 5)),
    "SmoothL1Loss": case("SmoothL1Loss", nn.SmoothL1Loss, r(3, 5), r(3, 5)),
    "HuberLoss": case("HuberLoss", lambda: nn.HuberLoss(delta=0.5), r(3, 5), r(3, 5)),
    "BCELoss": case("BCELoss", nn.BCELoss, pos(3, 5), pos(3, 5)),
    "BCELoss_weight": case("BCELoss", lambda: nn.BCELoss(weight=torch.rand(5) + 0.5), pos(3, 5), pos(3, 5)),
    "BCELoss_weight_broadcast_sum": case("BCELoss", lambda: nn.BCELoss(weight=torch.rand(3, 1) + 0.5,
                                                                       reduction="sum"), pos(3, 5), pos(3, 5)),
    "BCEWithLogitsLoss_weights": case("BCEWithLogitsLoss", lambda: nn.BCEWithLogitsLoss(
        weight=torch.rand(5) + 0.5, pos_weight=torch.rand(5) + 0.5), r(3, 5), pos(3, 5)),
    "BCEWithLogitsLoss_none": case("BCEWithLogitsLoss", lambda: nn.BCEWithLogitsLoss(
        pos_weight=torch.rand(5) + 0.5, reduction="none"), r(3, 5), pos(3, 5)),
    "BCEWithLogitsLoss": case("BCEWithLogitsLoss", nn.BCEWithLogitsLoss, r(3, 5), pos(3, 5)),
    "NLLLoss": case("NLLLoss", nn.NLLLoss, r(4, 5), ints(5, 4)),
    "NLLLoss2d": case("NLLLoss2d", nn.NLLLoss2d, r(2, 5, 3, 3), ints(5, 2, 3, 3)),
    "CrossEntropyLoss": case("CrossEntropyLoss", nn.CrossEntropyLoss, r(4, 5), ints(5, 4)),
    "CrossEntropyLoss_smoothing": case("CrossEntropyLoss", lambda: nn.CrossEntropyLoss(label_smoothing=0.1),
                                       r(4, 5), ints(5, 4)),
    "KLDivLoss": case("KLDivLoss", lambda: nn.KLDivLoss(reduction="batchmean"), r(3, 5), pos(3, 5)),
    "PoissonNLLLoss": case("PoissonNLLLoss", nn.PoissonNLLLoss, r(3, 5), pos(3, 5)),
    "GaussianNLLLoss": case("GaussianNLLLoss", nn.GaussianNLLLoss, r(3, 5), r(3, 5), pos(3, 5)),
    "SoftMarginLoss": case("SoftMarginLoss", nn.SoftMarginLoss, r(3, 5), lambda: torch.randint(0, 2, (3, 5)) * 2.0 - 1),
    "MultiLabelSoftMarginLoss": case("MultiLabelSoftMarginLoss", nn.MultiLabelSoftMarginLoss, r(3, 5),
                                     lambda: torch.randint(0, 2, (3, 5)).float()),
    "HingeEmbeddingLoss": case("HingeEmbeddingLoss", nn.HingeEmbeddingLoss, r(3, 5),
                               lambda: torch.randint(0, 2, (3, 5)) * 2.0 - 1),
    "MarginRankingLoss": case("MarginRankingLoss", nn.MarginRankingLoss, r(6), r(6),
                              lambda: torch.randint(0, 2, (6,)) * 2.0 - 1),
    "CosineEmbeddingLoss": case("CosineEmbeddingLoss", nn.CosineEmbeddingLoss, r(4, 5), r(4, 5),
                                lambda: torch.randint(0, 2, (4,)) * 2.0 - 1),
    "TripletMarginLoss": case("TripletMarginLoss", nn.TripletMarginLoss, r(4, 5), r(4, 5), r(4, 5)),
    "MultiMarginLoss": case("MultiMarginLoss", nn.MultiMarginLoss, r(4, 5), ints(5, 4)),
    "MultiLabelMarginLoss": case("MultiLabelMarginLoss", nn.MultiLabelMarginLoss, r(3, 5),
                                 lambda: torch.tensor([[3, 0, -1, 1, 2], [1, -1, 0, 0, 0], [4, 2, 1, -1, 0]])),
}

def rms_norm_with_weights(shape, **kwargs):
    """nn.RMSNorm with random weights (they start at one)."""
    def make():
        norm = nn.RMSNorm(shape, **kwargs)
        with torch.no_grad():
            norm.weight.normal_()
        return norm
    return make


# torch.nn classes PyTorch 1.13 does not have: tested where the installed torch has them.
NEWER_CASES = {
    "RMSNorm": case("RMSNorm", rms_norm_with_weights([5, 6]), r(2, 3, 5, 6)),
    "RMSNorm_eps": case("RMSNorm", rms_norm_with_weights(6, eps=1e-3), r(2, 3, 6)),
    "CircularPad1d": case("CircularPad1d", lambda: nn.CircularPad1d((1, 2)), r(1, 2, 5)),
    "CircularPad2d": case("CircularPad2d", lambda: nn.CircularPad2d((1, 2, 2, 1)), r(1, 2, 4, 4)),
    "CircularPad3d": case("CircularPad3d", lambda: nn.CircularPad3d(1), r(1, 1, 3, 3, 3)),
    "ZeroPad1d": case("ZeroPad1d", lambda: nn.ZeroPad1d((2, 1)), r(1, 2, 4)),
    "ZeroPad3d": case("ZeroPad3d", lambda: nn.ZeroPad3d((1, 0, 0, 1, 1, 1)), r(1, 1, 2, 3, 3)),
    "LPPool3d": case("LPPool3d", lambda: nn.LPPool3d(2, 2), pos(1, 2, 4, 4, 4)),
}
CASES.update({name: c for name, c in NEWER_CASES.items() if hasattr(nn, c[0])})


# Cases that ONNX cannot express below some opset: (first opset, text the export's error must
# contain there). Below it the export must fail with that text and write nothing.
MIN_OPSET = {
    name: (12, "supported from opset 12")  # NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss
    for name in ["NLLLoss", "NLLLoss2d", "CrossEntropyLoss", "CrossEntropyLoss_smoothing"]
}

# Cases whose PyTorch 2 code (the Debian 13 build's 2.6) onnxport refuses, with the message the
# refusal must hold: a scripted nn.Transformer given a causal tgt_mask decides at run time whether
# the mask is causal (_detect_is_causal_mask compares it with a generated one) and passes
# scaled_dot_product_attention either no mask and is_causal=True or the mask: an attn_mask that is
# None on one run-time path, which onnxport does not carry into an op (PyTorch 1.13's code passes
# the mask on every path and exports).
REFUSED_ON_TORCH2 = {
    "Transformer_masks": "reads 'attn_mask",
}

EXCEPTIONS = {
    "Fold": "aten::col2im: ONNX has Col2Im from opset 18, past the opsets this suite runs at (11, 13, 17); "
            "the per-op rows col2im and col2im_unbatched test it at 18-22 on a build with ONNX 1.17",
    "Module": "the base class; every case here is one",
    "Container": "deprecated base class with no forward",
    "ModuleDict": "a container without forward; its modules are exported through the module that calls them",
    "ModuleList": "a container without forward; its modules are exported through the module that calls them",
    "ParameterDict": "a container of parameters without forward",
    "ParameterList": "a container of parameters without forward",
    "RNNBase": "abstract base of RNN/LSTM/GRU (tested through them)",
    "RNNCellBase": "abstract base of RNNCell/LSTMCell/GRUCell (tested through them)",
    "DataParallel": "multi-GPU wrapper; torch.jit.script rejects it (its forward takes *inputs, **kwargs)",
    "SyncBatchNorm": "torch.jit.script rejects it without torch.distributed (unknown attribute on "
                     "distributed_c10d.group); for export it converts to BatchNorm (tested)",
    "FractionalMaxPool2d": "draws random pooling regions on every call: no fixed output to compare",
    "FractionalMaxPool3d": "draws random pooling regions on every call: no fixed output to compare",
    "AdaptiveLogSoftmaxWithLoss": "torch.jit.script rejects it in 1.13 (unknown type annotation for its Linear head)",
    "CTCLoss": "aten::ctc_loss has no ONNX counterpart (torch.onnx 1.13 has none either); the export reports it "
               "as unmapped",
    "MaxUnpool1d": "torch.jit.script fails on it in torch 1.13 (isIntList() internal assert in its constructor's sizes)",
    "MaxUnpool2d": "torch.jit.script fails on it in torch 1.13 (isIntList() internal assert in its constructor's sizes)",
    "MaxUnpool3d": "torch.jit.script fails on it in torch 1.13 (isIntList() internal assert in its constructor's sizes)",
    "CrossMapLRN2d": "its forward calls a Python autograd Function, which torch.jit.script rejects",
    "TripletMarginWithDistanceLoss": "torch.jit.script rejects it in 1.13, with or without a distance function "
                                     "(keyword-only arguments with defaults)",
    **{f"Lazy{base}": f"uninitialized parameters cannot be scripted; after the first call it is {base} (tested)"
       for base in ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
                    "ConvTranspose2d", "ConvTranspose3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
                    "Linear"]},
}
