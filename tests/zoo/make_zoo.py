#!/usr/bin/python3
"""Build the model-zoo fixtures: one model of every torchvision 0.14 classification family plus
two small transformers, traced with torch.jit.trace, in one process.

Files per model NAME in OUT_DIR are those of tests/fixtures/make_models.py (NAME.pt, NAME.in<k>.npy,
NAME.out<k>.npy, NAME.json); the manifest also carries the model's comparison tolerances
("rtol", "atol"), which tests/integration/run_model_test.sh passes to ort_compare.js.
Weights are random (fixed seed per model); BatchNorm statistics and classifier scale are set as in
make_models.py so that float32 rounding alone cannot exceed the tolerances.

Usage: /usr/bin/python3 make_zoo.py OUT_DIR [--only NAME]... [--force] [--list]
A model whose files are newer than this script and make_models.py is skipped.
"""
import argparse
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.models as tvm

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")
sys.path.insert(0, FIXTURES)
import make_models  # noqa: E402

SCRIPTS = [os.path.abspath(__file__), os.path.abspath(make_models.__file__),
           os.path.abspath(os.path.join(FIXTURES, "npy_io.py"))]


# ---------------------------------------------------------------- transformers written here

class TextEncoder(nn.Module):
    """Token embedding + learned positions + nn.TransformerEncoder (GELU, final LayerNorm) + mean-pooled head.

    Takes (batch, seq) token ids; the encoder runs sequence-first, nn.TransformerEncoder's default
    layout (batch-first would let eager PyTorch take its fused fast path, which is not what tracing records).
    """

    def __init__(self, vocab=100, d_model=64, heads=4, layers=2, seq=12, classes=10):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.position = nn.Parameter(torch.randn(1, seq, d_model) * 0.1)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=128, dropout=0.1, activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d_model))
        self.head = nn.Linear(d_model, classes)

    def forward(self, tokens):
        x = self.embed(tokens) + self.position[:, : tokens.shape[1]]
        return self.head(self.encoder(x.transpose(0, 1)).mean(0))


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, heads, context):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.register_buffer("causal", torch.tril(torch.ones(context, context, dtype=torch.bool)))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(c // self.heads)
        scores = scores.masked_fill(~self.causal[:t, :t], float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))


class DecoderBlock(nn.Module):
    def __init__(self, d_model, heads, context):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, heads, context)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    """A GPT-style decoder: token + position embeddings, pre-LN blocks with causal attention, LM head."""

    def __init__(self, vocab=128, d_model=64, heads=4, layers=2, context=32):
        super().__init__()
        self.tokens = nn.Embedding(vocab, d_model)
        self.positions = nn.Embedding(context, d_model)
        self.blocks = nn.Sequential(*[DecoderBlock(d_model, heads, context) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, idx):
        positions = torch.arange(idx.shape[1], device=idx.device)
        x = self.tokens(idx) + self.positions(positions)
        return self.lm_head(self.ln_f(self.blocks(x)))


# ---------------------------------------------------------------- the zoo table

def image(size):
    return lambda: (torch.randn(1, 3, size, size),)


def tokens(shape, vocab):
    return lambda: (torch.randint(0, vocab, shape, dtype=torch.int64),)


def vit_b_32():
    """vit_b_32 on 96x96 images (9 patches + class token: the linear layers dominate, and this
    PyTorch build multiplies matrices with a generic BLAS). torchvision zero-initializes the
    head; random weights give its logits a spread to compare."""
    model = tvm.vit_b_32(image_size=96)
    nn.init.normal_(model.heads.head.weight, std=0.02)
    return model


class Model:
    """One zoo entry. head_std: see make_models.normalize_head (None keeps the logits as built);
    grad: trace with autograd on (see make_models.write_fixture)."""

    def __init__(self, seed, make_model, make_args, head_std=0.1, rtol=1e-3, atol=1e-5, grad=False):
        self.seed, self.make_model, self.make_args = seed, make_model, make_args
        self.head_std, self.rtol, self.atol, self.grad = head_std, rtol, atol, grad


# Tolerances are the default rtol 1e-3 / atol 1e-5 everywhere; head_std keeps the logits small
# (as make_models.py explains) so deep random nets' float32 rounding stays below atol.
# Images are 128x128 where the net's adaptive pooling allows it (a third of the work of 224x224
# for fixtures, export and ORT alike); alexnet/vgg keep 224 so that their 6x6/7x7 adaptive pools
# stay exact pooling windows, inception_v3 keeps 224 for its stride-2 stem and reductions. At 128,
# swin_t pads every stage to whole 7x7 windows and its last stage (4x4) has no shift: both paths
# of torchvision's shifted_window_attention are exported.
ZOO = {
    "alexnet": Model(201, tvm.alexnet, image(224)),
    "vgg11": Model(202, tvm.vgg11, image(224)),
    "resnet18": Model(203, tvm.resnet18, image(128)),
    "resnext50_32x4d": Model(204, tvm.resnext50_32x4d, image(128), head_std=0.05),
    "wide_resnet50_2": Model(205, tvm.wide_resnet50_2, image(128), head_std=0.05),
    "densenet121": Model(206, tvm.densenet121, image(128)),
    "inception_v3": Model(207, lambda: tvm.inception_v3(aux_logits=False, init_weights=True), image(224),
                          head_std=0.05),
    "googlenet": Model(208, lambda: tvm.googlenet(aux_logits=False, init_weights=True), image(128)),
    "squeezenet1_1": Model(209, tvm.squeezenet1_1, image(128), head_std=None),
    "mobilenet_v2": Model(210, tvm.mobilenet_v2, image(128)),
    "mobilenet_v3_small": Model(211, tvm.mobilenet_v3_small, image(128)),
    "shufflenet_v2_x0_5": Model(212, tvm.shufflenet_v2_x0_5, image(128)),
    "mnasnet0_5": Model(213, tvm.mnasnet0_5, image(128)),
    "efficientnet_b0": Model(214, tvm.efficientnet_b0, image(128)),
    "regnet_y_400mf": Model(215, tvm.regnet_y_400mf, image(128)),
    "convnext_tiny": Model(216, tvm.convnext_tiny, image(128)),
    # Traced under no_grad, torchvision's batch-first attention takes PyTorch's fused fast path
    # (aten::_native_multi_head_attention), which onnxport does not export yet; traced with
    # autograd on, it records the decomposed attention.
    "vit_b_32": Model(217, vit_b_32, image(96), grad=True),
    "swin_t": Model(218, tvm.swin_t, image(128)),
    "transformer_encoder": Model(219, TextEncoder, tokens((2, 12), 100)),
    "tiny_gpt": Model(220, TinyGPT, tokens((1, 24), 128)),
}


def build(name, out_dir):
    m = ZOO[name]
    make_models.write_fixture(out_dir, name, m.seed, m.make_model, m.make_args, m.head_std,
                              extra={"rtol": m.rtol, "atol": m.atol}, grad=m.grad)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", nargs="?", help="directory for the .pt/.npy/.json fixtures")
    parser.add_argument("--only", action="append", choices=sorted(ZOO), metavar="NAME",
                        help=f"build only this model (repeatable): {', '.join(sorted(ZOO))}")
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    parser.add_argument("--list", action="store_true", help="print the model names and exit")
    options = parser.parse_args()
    if options.list:
        print("\n".join(ZOO))
        return 0
    if not options.out_dir:
        parser.error("OUT_DIR is required")

    make_models.build_outdated(options.only or list(ZOO), options.out_dir, SCRIPTS,
                               lambda name: build(name, options.out_dir), options.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
