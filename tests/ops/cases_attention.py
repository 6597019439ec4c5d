"""attention rows: the fused fast-path ops that nn.MultiheadAttention(batch_first=True) and
nn.TransformerEncoderLayer(batch_first=True) call in eval mode without grad. The eager outputs
the rows compare with come from the fast path too (fixtures are built under torch.no_grad()).

Each model is a traced row (tracing records the fused op the fast path called) and, like every
row that builds an nn.Module, a scripted twin (op_framework.add_script_twins): in script mode the
core decides the layers' fast-path checks at export (core/3_export/2_prepare/export_time_facts.cpp), so the
scripted graph calls the fused op too."""
import torch
import torch.nn as nn
from torch import Tensor
from op_framework import Input, With, bools, case, f32, grid

MHA = "_native_multi_head_attention"
ENCODER = "_transformer_encoder_layer_fwd"
ATTENTION_TOL = dict(rtol=1e-3, atol=1e-4)


def attention_case(id, op, inputs, module, **kw):
    case(id, [op], inputs, module=module, **ATTENTION_TOL, **kw)


class SelfAttention(nn.Module):
    """Self-attention (query, key and value one tensor: a fast-path condition), both outputs."""
    __constants__ = ["average"]

    def __init__(self, average: bool = True):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 4, batch_first=True)
        self.average = average

    def forward(self, x: Tensor):
        return self.mha(x, x, x, average_attn_weights=self.average)


class MaskedSelfAttention(SelfAttention):
    def forward(self, x: Tensor, key_padding_mask: Tensor):
        return self.mha(x, x, x, key_padding_mask=key_padding_mask, average_attn_weights=self.average)


class SelfAttentionNoWeights(nn.Module):
    """need_weights=False: PyTorch's second output is None, so only the first is returned."""

    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 4, batch_first=True)

    def forward(self, x: Tensor):
        return self.mha(x, x, x, need_weights=False)[0]


def encoder_layer(activation, norm_first):
    return lambda: nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0, activation=activation,
                                              norm_first=norm_first, batch_first=True)


class PaddedEncoderLayer(nn.Module):
    def __init__(self, norm_first: bool):
        super().__init__()
        self.layer = encoder_layer("relu", norm_first)()

    def forward(self, x: Tensor, src_key_padding_mask: Tensor):
        return self.layer(x, src_key_padding_mask=src_key_padding_mask)


# ---- nested tensors from a padding mask: nn.TransformerEncoder's fast path

NESTED = ["_nested_tensor_from_mask", "to_padded_tensor", ENCODER]


class PaddedEncoder(nn.Module):
    """Two batch-first layers given a key padding mask: the encoder packs the batch into a nested
    tensor (padded positions dropped), runs the layers on it and pads the result with zeros."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.TransformerEncoder(encoder_layer("relu", False)(), 2)

    def forward(self, x: Tensor, src_key_padding_mask: Tensor):
        return self.encoder(x, src_key_padding_mask=src_key_padding_mask)


def padding_at_end(*lengths, total):
    """A key padding mask whose rows keep the first `lengths[i]` positions (left-aligned)."""
    return Input((len(lengths), total), torch.bool,
                 lambda s, g: torch.arange(total).unsqueeze(0) >= torch.tensor(lengths).unsqueeze(1))


def padding_inside(total):
    """Padding before a kept position: the encoder's run-time check sends it down the slow path."""
    return Input((2, total), torch.bool,
                 lambda s, g: torch.tensor([[False, True] + [False] * (total - 2), [False] * (total - 1) + [True]]))


# In script the left-alignment check is in the graph: decided at export, applied by to_padded_tensor.
# These rows come before any row that traces nn.TransformerEncoderLayer: in torch 1.13, once that
# class has been traced, scripting nn.TransformerEncoder in the same process finds its first layer
# not to be a TransformerEncoderLayer (isinstance), and the compiled forward loses the fast path.
SCRIPTED_NESTED = ["_nested_tensor_from_mask_left_aligned"] + NESTED
case("encoder_nested_scripted", SCRIPTED_NESTED, [f32(3, 6, 16), padding_at_end(6, 4, 1, total=6)],
     module=PaddedEncoder, script=True, **ATTENTION_TOL)
case("encoder_nested_scripted_mask_not_left_aligned", SCRIPTED_NESTED, [f32(2, 6, 16), padding_inside(6)],
     module=PaddedEncoder, script=True, **ATTENTION_TOL)
case("encoder_nested_scripted_dynamic", SCRIPTED_NESTED, [f32(2, 5, 16), padding_at_end(5, 3, total=5)],
     module=PaddedEncoder, script=True, dynamic={0: [0, 1], 1: [0, 1]}, **ATTENTION_TOL)

# ---- aten::_native_multi_head_attention

attention_case("mha_self_attention", MHA, [f32(2, 5, 16)], SelfAttention)
attention_case("mha_per_head_weights", MHA, [f32(2, 5, 16)], lambda: SelfAttention(average=False))
# The fused op's second output is an undefined tensor here (None in Python), which nothing uses.
attention_case("mha_no_weights", MHA, [f32(3, 4, 16)], SelfAttentionNoWeights)
attention_case("mha_dynamic_batch_and_length", MHA, [f32(2, 5, 16)], SelfAttention, dynamic={0: [0, 1]})
# mask_type 1. No row of the bool mask is all True (PyTorch's result is NaN there).
attention_case("mha_key_padding_mask", MHA, [f32(2, 5, 16), bools(2, 5)], MaskedSelfAttention)
# PyTorch's kernel makes a float mask bool (nonzero = masked out) instead of adding it.
attention_case("mha_float_key_padding_mask", MHA, [f32(2, 5, 16), grid(2, 5, low=-1, high=0)],
               lambda: MaskedSelfAttention(average=False),
               torch1_only="PyTorch 2's MultiheadAttention leaves its fast path for a float mask")
# Separate query, key and value tensors (same shapes, as PyTorch's kernel requires): the op called
# directly, since the layers' fast path only takes self-attention.
def packed_attention(s, q, k, v):
    return torch._native_multi_head_attention(q, k, v, 16, 4, s.qkv_w, s.qkv_b, s.proj_w, s.proj_b, None, True, False,
                                              None)


case("mha_distinct_qkv", [MHA], [f32(2, 5, 16), f32(2, 5, 16), f32(2, 5, 16)],
     module=lambda: With(packed_attention, qkv_w=torch.randn(48, 16) / 4, qkv_b=torch.randn(48) / 4,
                         proj_w=torch.randn(16, 16) / 4, proj_b=torch.randn(16) / 4), **ATTENTION_TOL)

# ---- aten::_transformer_encoder_layer_fwd

for activation in ("relu", "gelu"):
    for norm_first in (False, True):
        attention_case(f"encoder_layer_{activation}{'_norm_first' if norm_first else ''}", ENCODER, [f32(2, 5, 16)],
                       encoder_layer(activation, norm_first))
attention_case("encoder_layer_dynamic", ENCODER, [f32(2, 5, 16)], encoder_layer("gelu", False), dynamic={0: [0, 1]})
for norm_first in (False, True):
    attention_case(f"encoder_layer_key_padding_mask{'_norm_first' if norm_first else ''}", ENCODER,
                   [f32(2, 5, 16), bools(2, 5)], lambda norm_first=norm_first: PaddedEncoderLayer(norm_first))


# ---- nested tensors from a padding mask, traced

TRACED_ONLY = "scripted in the encoder_nested_scripted rows (built before any trace, see there)"
case("encoder_nested", NESTED, [f32(3, 6, 16), padding_at_end(6, 4, 1, total=6)], module=PaddedEncoder,
     no_script_twin=TRACED_ONLY, **ATTENTION_TOL)
case("encoder_nested_dynamic", NESTED, [f32(2, 5, 16), padding_at_end(5, 3, total=5)], module=PaddedEncoder,
     dynamic={0: [0, 1], 1: [0, 1]}, no_script_twin=TRACED_ONLY, **ATTENTION_TOL)
