#!/usr/bin/python3
"""TorchScript files written by a newer PyTorch (2.6, run inside the Debian 13 root), for the
Debian 12 build (libtorch 1.13) to load and export: every form of aten::scaled_dot_product_attention
(PyTorch 2.0 on), and the modules that call it (nn.MultiheadAttention, nn.TransformerEncoderLayer,
torchvision's VisionTransformer).

Files per case NAME in OUT_DIR are those of tests/fixtures/make_models.py (NAME.pt, NAME.in<k>.npy,
NAME.out<k>.npy, NAME.json). The expected outputs are the newer PyTorch's, computed in float64 (the
model and its float inputs converted) and stored in the model's float32: the comparison then judges
the export, not float32 rounding. The manifest also says how to export the case:
  "rtol", "atol"     tolerances for ort_compare.js
  "export_args"      extra onnxport export arguments (dynamic axes)
  "export_inputs"    --input specs to export with instead of the manifest's files (other sizes than
                     the ones compared, so that a size fixed at export shows as a wrong result)
  "torch"            the PyTorch that wrote it, and how ("trace" / "script")
  "float32_error"    how far that PyTorch's own float32 result is from the float64 one

Weights are random with a fixed seed per case; nothing is downloaded.

Usage (inside the root: bash tests/debian13.sh --shell '/usr/bin/python3 tests/newer_torch/make_fixtures.py OUT_DIR'):
  make_fixtures.py OUT_DIR [--only NAME]... [--skip NAME]... [--force] [--list]
A case whose files are newer than this script is skipped.
"""
import argparse
import copy
import json
import os
import sys
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")
sys.path.insert(0, FIXTURES)
import make_models  # noqa: E402
from npy_io import save_arrays, write_atomically  # noqa: E402

SCRIPTS = [os.path.abspath(__file__), os.path.abspath(make_models.__file__),
           os.path.abspath(os.path.join(FIXTURES, "npy_io.py"))]


# ---------------------------------------------------------------- F.scaled_dot_product_attention called directly

class Sdpa(nn.Module):
    """F.scaled_dot_product_attention(q, k, v) with the call's constant arguments."""

    def __init__(self, is_causal: bool = False, scale: Optional[float] = None, enable_gqa: bool = False):
        super().__init__()
        self.is_causal = is_causal
        self.scale = scale
        self.enable_gqa = enable_gqa

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=self.is_causal, scale=self.scale,
                                              enable_gqa=self.enable_gqa)


class SdpaMasked(nn.Module):
    """F.scaled_dot_product_attention(q, k, v, attn_mask=mask): a bool mask keeps where True, a float one is added."""

    def __init__(self, scale: Optional[float] = None, enable_gqa: bool = False):
        super().__init__()
        self.scale = scale
        self.enable_gqa = enable_gqa

    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=self.scale, enable_gqa=self.enable_gqa)


def qkv(batch=2, heads=4, length=6, source=None, dim=8, kv_heads=None):
    source = source or length
    kv_heads = kv_heads or heads
    return (torch.randn(batch, heads, length, dim), torch.randn(batch, kv_heads, source, dim),
            torch.randn(batch, kv_heads, source, dim))


def keep_mask(*shape):
    """A random bool mask that keeps at least the first key of every query (no row fully masked)."""
    mask = torch.rand(*shape) > 0.4
    mask[..., 0] = True
    return mask


def empty_rows(keep):
    """The mask with the keys of query 2 all dropped."""
    keep[..., 2, :] = False
    return keep


def float_mask(keep):
    """A float mask: 0 where `keep`, -inf elsewhere, random finite biases on some kept entries."""
    return torch.zeros(keep.shape).masked_fill(~keep, float("-inf")) + keep * torch.randn(keep.shape) * 0.5


# ---------------------------------------------------------------- modules that call it

class SelfAttention(nn.Module):
    """nn.MultiheadAttention on one batch-first sequence, with the masks it is given; the forwards of
    the subclasses return its output, those named ...Weights the attention weights too."""

    def __init__(self, need_weights, average_attn_weights=True, embed=32, heads=4):
        super().__init__()
        self.mha = nn.MultiheadAttention(embed, heads, batch_first=True)
        self.need_weights = need_weights
        self.average_attn_weights = average_attn_weights

    def attend(self, x, key_padding_mask: Optional[torch.Tensor] = None, attn_mask: Optional[torch.Tensor] = None):
        return self.mha(x, x, x, key_padding_mask=key_padding_mask, attn_mask=attn_mask,
                        need_weights=self.need_weights, average_attn_weights=self.average_attn_weights)


class MhaPlain(SelfAttention):
    def forward(self, x):
        return self.attend(x)[0]


class MhaKeyPadding(SelfAttention):
    def forward(self, x, key_padding_mask):
        return self.attend(x, key_padding_mask=key_padding_mask)[0]


class MhaAttnMask(SelfAttention):
    def forward(self, x, attn_mask):
        return self.attend(x, attn_mask=attn_mask)[0]


class MhaBothMasks(SelfAttention):
    def forward(self, x, attn_mask, key_padding_mask):
        return self.attend(x, key_padding_mask=key_padding_mask, attn_mask=attn_mask)[0]


class MhaAttnMaskWeights(SelfAttention):
    def forward(self, x, attn_mask):
        out, weights = self.attend(x, attn_mask=attn_mask)
        assert weights is not None
        return out, weights


class MhaBothMasksWeights(SelfAttention):
    def forward(self, x, attn_mask, key_padding_mask):
        out, weights = self.attend(x, key_padding_mask=key_padding_mask, attn_mask=attn_mask)
        assert weights is not None
        return out, weights


class MhaCross(nn.Module):
    """Cross-attention, query from one sequence, key and value from another (sequence-first)."""

    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(32, 4, kdim=24, vdim=24)

    def forward(self, query, memory, key_padding_mask):
        return self.mha(query, memory, memory, key_padding_mask=key_padding_mask, need_weights=False)[0]


class EncoderLayer(nn.Module):
    def __init__(self, **kwargs):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, batch_first=True, **kwargs)

    def forward(self, src):
        return self.layer(src)


class EncoderLayerMasked(EncoderLayer):
    def forward(self, src, src_mask, src_key_padding_mask):
        return self.layer(src, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask)


class EncoderLayerCausal(EncoderLayer):
    def forward(self, src, src_mask):
        return self.layer(src, src_mask=src_mask, is_causal=True)


def tokens(batch, length, embed=32):
    return torch.randn(batch, length, embed)


def padding(batch, length):
    """A key padding mask (True: padded) that pads the tail of all sequences but the first."""
    mask = torch.zeros(batch, length, dtype=torch.bool)
    for b in range(1, batch):
        mask[b, length - b:] = True
    return mask


def fully_padded(batch, length):
    """A key padding mask with the last sequence all padding."""
    mask = padding(batch, length)
    mask[-1] = True
    return mask


def bool_attn_mask(length, source=None):
    """nn.MultiheadAttention's bool attn_mask: True is NOT attended; the diagonal always is."""
    mask = torch.rand(length, source or length) > 0.6
    mask.fill_diagonal_(False)
    return mask


def causal_float_mask(length):
    return nn.Transformer.generate_square_subsequent_mask(length)


def with_random_head(vit):
    """torchvision zero-initializes the head: random weights give the logits a spread to compare."""
    nn.init.normal_(vit.heads.head.weight, std=0.02)
    return vit


def small_vit():
    from torchvision.models import VisionTransformer
    return with_random_head(VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=32,
                                              mlp_dim=64, num_classes=10))


def vit_b_16():
    from torchvision.models import vit_b_16 as make
    return with_random_head(make())


# ---------------------------------------------------------------- the cases

SDPA = "aten::scaled_dot_product_attention"


class RmsNormBlock(nn.Module):
    """nn.RMSNorm (PyTorch 2.4) over the last two dims with random weights, then F.rms_norm with the
    default eps on values small enough that the default shows (float32's epsilon, 1.2e-7, against a
    mean square near 1e-6)."""

    def __init__(self):
        super().__init__()
        self.norm = nn.RMSNorm([5, 8], eps=1e-5)
        with torch.no_grad():
            self.norm.weight.normal_()

    def forward(self, x):
        return F.rms_norm(self.norm(x) * 1e-3, [8])


class Case:
    """One fixture: a module and its inputs; `mode` trace or script; `grad` traces with autograd on,
    as a user does who traces without torch.no_grad() (the fused fast paths then stay out and the
    attention modules call aten::scaled_dot_product_attention). `calls`: an operator the saved graph
    must call (nn.MultiheadAttention computes the weights it returns without SDPA: None).
    `float64_reference`: the expected outputs are the model's in float64 (cast back), else the
    eager float32 ones (where float64 means something else: rms_norm's default eps is the
    epsilon of the input's dtype)."""

    def __init__(self, seed, make_model, make_args, names, mode="trace", grad=True, rtol=1e-4, atol=1e-5,
                 export_args=(), export_inputs=None, calls=SDPA, float64_reference=True):
        self.seed, self.make_model, self.make_args, self.names = seed, make_model, make_args, names
        self.mode, self.grad, self.rtol, self.atol = mode, grad, rtol, atol
        self.calls = calls
        self.float64_reference = float64_reference
        self.export_args, self.export_inputs = list(export_args), export_inputs


# q, k, v: [2, 4, 6, 8]; GQA: 8 query heads over 2 key/value heads.
QKV = ["q", "k", "v"]
CASES = {
    "sdpa_plain": Case(1, Sdpa, qkv, QKV),
    "sdpa_causal": Case(2, lambda: Sdpa(is_causal=True), qkv, QKV),
    "sdpa_causal_longer_keys": Case(3, lambda: Sdpa(is_causal=True), lambda: qkv(length=5, source=9), QKV),
    "sdpa_bool_mask": Case(4, SdpaMasked, lambda: (*qkv(), keep_mask(2, 1, 6, 6)), QKV + ["mask"]),
    "sdpa_float_mask": Case(5, SdpaMasked, lambda: (*qkv(), torch.randn(6, 6)), QKV + ["mask"]),
    # A query whose keys are all masked out: zeros from PyTorch 2.5 on.
    "sdpa_bool_mask_empty_row": Case(14, SdpaMasked, lambda: (*qkv(), empty_rows(keep_mask(2, 1, 6, 6))),
                                     QKV + ["mask"]),
    "sdpa_float_mask_empty_row": Case(15, SdpaMasked, lambda: (*qkv(), float_mask(empty_rows(keep_mask(6, 6)))),
                                      QKV + ["mask"]),
    "sdpa_scale": Case(6, lambda: Sdpa(scale=0.3), qkv, QKV),
    "sdpa_gqa": Case(7, lambda: Sdpa(enable_gqa=True), lambda: qkv(heads=8, kv_heads=2), QKV),
    "sdpa_gqa_causal_scale": Case(8, lambda: Sdpa(is_causal=True, scale=0.25, enable_gqa=True),
                                  lambda: qkv(heads=6, kv_heads=3, length=7), QKV),
    "sdpa_gqa_bool_mask": Case(9, lambda: SdpaMasked(enable_gqa=True),
                               lambda: (*qkv(heads=4, kv_heads=1), keep_mask(6, 6)), QKV + ["mask"]),
    "sdpa_3d": Case(10, Sdpa, lambda: (torch.randn(3, 5, 8), torch.randn(3, 7, 8), torch.randn(3, 7, 4)), QKV),
    # Exported at lengths 5 and 9 with the lengths dynamic, compared at 7 and 11.
    "sdpa_causal_dynamic": Case(11, lambda: Sdpa(is_causal=True), lambda: qkv(length=7, source=11), QKV,
                                export_args=["--dynamic-axes", "q:2=L", "--dynamic-axes", "k:2=S",
                                             "--dynamic-axes", "v:2=S"],
                                export_inputs=["q:2x4x5x8:float32", "k:2x4x9x8:float32", "v:2x4x9x8:float32"]),
    "sdpa_script": Case(12, lambda: SdpaMasked(scale=0.5), lambda: (*qkv(), torch.randn(2, 4, 6, 6)),
                        QKV + ["mask"], mode="script"),
    "sdpa_script_causal_gqa": Case(13, lambda: Sdpa(is_causal=True, enable_gqa=True),
                                   lambda: qkv(heads=4, kv_heads=2), QKV, mode="script"),

    "mha_plain": Case(20, lambda: MhaPlain(False), lambda: (tokens(2, 6),), ["x"]),
    "mha_key_padding": Case(21, lambda: MhaKeyPadding(False), lambda: (tokens(3, 6), padding(3, 6)),
                            ["x", "key_padding_mask"]),
    "mha_fully_padded": Case(30, lambda: MhaKeyPadding(False), lambda: (tokens(3, 6), fully_padded(3, 6)),
                             ["x", "key_padding_mask"]),
    "mha_attn_mask_bool": Case(22, lambda: MhaAttnMask(False), lambda: (tokens(2, 6), bool_attn_mask(6)),
                               ["x", "attn_mask"]),
    "mha_attn_mask_float": Case(23, lambda: MhaAttnMask(False), lambda: (tokens(2, 6), torch.randn(6, 6)),
                                ["x", "attn_mask"]),
    "mha_both_masks": Case(24, lambda: MhaBothMasks(False),
                           lambda: (tokens(3, 6), causal_float_mask(6), padding(3, 6)),
                           ["x", "attn_mask", "key_padding_mask"]),
    "mha_need_weights": Case(25, lambda: MhaBothMasksWeights(True),
                             lambda: (tokens(3, 6), bool_attn_mask(6), padding(3, 6)),
                             ["x", "attn_mask", "key_padding_mask"], calls=None),
    "mha_need_weights_per_head": Case(26, lambda: MhaAttnMaskWeights(True, average_attn_weights=False),
                                      lambda: (tokens(2, 6), torch.randn(8, 6, 6)), ["x", "attn_mask"],
                                      calls=None),
    "mha_cross": Case(27, MhaCross, lambda: (torch.randn(5, 2, 32), torch.randn(7, 2, 24), padding(2, 7)),
                      ["query", "memory", "key_padding_mask"]),
    "mha_script": Case(28, lambda: MhaKeyPadding(False), lambda: (tokens(3, 6), padding(3, 6)),
                       ["x", "key_padding_mask"], mode="script"),
    # Scripted, onnxport takes the fast path (aten::_native_multi_head_attention with the masks merged,
    # mask_type 2), which treats any nonzero mask value as masked out: a 0/-inf float mask keeps the
    # comparison with the eager (slow path) outputs fair.
    "mha_script_both_masks": Case(31, lambda: MhaBothMasks(False),
                                  lambda: (tokens(3, 6), causal_float_mask(6), padding(3, 6)),
                                  ["x", "attn_mask", "key_padding_mask"], mode="script"),
    "mha_script_need_weights": Case(29, lambda: MhaAttnMaskWeights(True), lambda: (tokens(2, 6), bool_attn_mask(6)),
                                    ["x", "attn_mask"], mode="script"),

    "encoder_layer": Case(40, lambda: EncoderLayer(dropout=0.1), lambda: (tokens(2, 7),), ["src"]),
    "encoder_layer_norm_first_gelu": Case(41, lambda: EncoderLayer(norm_first=True, activation="gelu"),
                                          lambda: (tokens(2, 7),), ["src"]),
    "encoder_layer_masks": Case(42, EncoderLayerMasked, lambda: (tokens(3, 7), causal_float_mask(7), padding(3, 7)),
                                ["src", "src_mask", "src_key_padding_mask"]),
    "encoder_layer_causal": Case(43, EncoderLayerCausal, lambda: (tokens(2, 7), causal_float_mask(7)),
                                 ["src", "src_mask"]),
    "encoder_layer_dynamic": Case(44, EncoderLayer, lambda: (tokens(2, 9),), ["src"],
                                  export_args=["--dynamic-axes", "src:0=batch,1=length"],
                                  export_inputs=["src:3x5x32:float32"]),
    "encoder_layer_script": Case(45, EncoderLayer, lambda: (tokens(2, 7),), ["src"], mode="script"),

    "rms_norm": Case(70, RmsNormBlock, lambda: (torch.randn(2, 3, 5, 8),), ["x"], calls="aten::rms_norm",
                     float64_reference=False),
    "rms_norm_script": Case(71, RmsNormBlock, lambda: (torch.randn(2, 3, 5, 8),), ["x"], mode="script",
                            calls="aten::rms_norm", float64_reference=False),

    "vit_small": Case(60, small_vit, lambda: (torch.randn(2, 3, 32, 32),), ["images"], rtol=1e-3, atol=1e-4),
    "vit_b_16": Case(61, vit_b_16, lambda: (torch.randn(1, 3, 224, 224),), ["images"], rtol=1e-3, atol=1e-4),
}


# ---------------------------------------------------------------- writing

def save_module(module, case, args):
    with torch.set_grad_enabled(case.grad):
        if case.mode == "script":
            return torch.jit.script(module)
        # trace's own re-trace check would run without autograd, where the fast paths differ.
        return torch.jit.trace(module, args, check_trace=False)


def build(name, out_dir):
    case = CASES[name]
    manifest_path = os.path.join(out_dir, f"{name}.json")
    if os.path.exists(manifest_path):
        os.remove(manifest_path)  # until rewritten last, the fixture counts as incomplete
    torch.manual_seed(case.seed)
    model = case.make_model().eval()
    args = case.make_args()
    saved = save_module(model, case, args)
    with torch.set_grad_enabled(case.grad):
        eager = [t.detach() for t in make_models.flatten(model(*args))]
        replayed = [t.detach() for t in make_models.flatten(saved(*args))]
        reference = [t.detach() for t in make_models.flatten(copy.deepcopy(model).double()(*make_models.to_float64(args)))]
    if make_models.max_difference(replayed, eager) > 1e-4:
        raise RuntimeError(f"{name}: the saved module does not reproduce the eager outputs")
    if not all(torch.isfinite(t).all() for t in reference):
        raise RuntimeError(f"{name}: the outputs hold inf or nan")
    expected = [r.to(e.dtype) for r, e in zip(reference, eager)] if case.float64_reference else eager
    if case.calls and case.calls not in str(saved.inlined_graph):
        raise RuntimeError(f"{name}: the saved graph calls no {case.calls}")

    saved.save(os.path.join(out_dir, f"{name}.pt"))
    inputs = save_arrays(out_dir, f"{name}.in", list(args))
    for entry, input_name in zip(inputs, case.names, strict=True):
        entry["name"] = input_name
    manifest = {
        "model": f"{name}.pt",
        "seed": case.seed,
        "inputs": inputs,
        "outputs": save_arrays(out_dir, f"{name}.out", expected),
        "rtol": case.rtol,
        "atol": case.atol,
        "export_args": case.export_args,
        "torch": f"{torch.__version__} {case.mode}",
        "float32_error": make_models.max_difference(eager, reference),
    }
    if case.export_inputs:
        manifest["export_inputs"] = case.export_inputs
    write_atomically(manifest_path, json.dumps(manifest, indent=2) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", nargs="?", help="directory for the .pt/.npy/.json fixtures")
    parser.add_argument("--only", action="append", choices=sorted(CASES), metavar="NAME",
                        help="build only this case (repeatable)")
    parser.add_argument("--skip", action="append", default=[], choices=sorted(CASES), metavar="NAME",
                        help="do not build this case (repeatable)")
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    parser.add_argument("--list", action="store_true", help="print the case names and exit")
    options = parser.parse_args()
    if options.list:
        print("\n".join(CASES))
        return 0
    if not options.out_dir:
        parser.error("OUT_DIR is required")
    print(f"torch {torch.__version__}")
    make_models.build_outdated([n for n in options.only or CASES if n not in options.skip], options.out_dir, SCRIPTS,
                               lambda name: build(name, options.out_dir), options.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
