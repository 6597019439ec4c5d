#!/usr/bin/env python3
"""Fixtures for script mode and dynamic axes (issue 4), built in one process.

For every case: NAME.pt (torch.jit.script or torch.jit.trace of a small model, fixed seed),
and for each input set j a manifest NAME.set<j>.json with its inputs and the TorchScript
module's outputs on them. Input sets differ in the branch taken, the loop trip count or the
sizes of dynamic axes; set 0 is the example the export uses. CASES (below) also says how
to export: mode, dynamic axes, opset, and what the exported graph must contain.

usage: make_script_models.py OUT_DIR        (writes OUT_DIR/cases.json last)
"""
import json
import os
import sys
from typing import List, Optional

import torch
import torch.nn as nn
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
from npy_io import save_arrays, write_atomically  # noqa: E402


# ---------------------------------------------------------------- scripted control flow

class ForLoopState(nn.Module):
    """for over a tensor dim, carrying a hidden state."""
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = torch.zeros(x.size(1))
        for i in range(x.size(0)):
            h = torch.tanh(self.lin(x[i] + h))
        return h


class WhileDataStop(nn.Module):
    """while with a data-dependent stop; returns the value and the trip count."""
    def forward(self, x):
        n = 0
        while bool(x.abs().sum() > 1.0):
            x = x * 0.5
            n += 1
        return x, torch.tensor(n)


class IfShapes(nn.Module):
    """if on a tensor value, with a different output shape per branch."""
    def forward(self, x):
        if bool(x.sum() > 0):
            y = x[:2] * 2.0
        else:
            y = torch.cat([x, x], 0) - 1.0
        return y


class ListAppend(nn.Module):
    """a list built by append in a loop, then stacked and concatenated."""
    def forward(self, x):
        outs: List[torch.Tensor] = []
        for i in range(x.size(0)):
            outs.append(x[i] * float(i + 1))
        return torch.stack(outs, 0), torch.cat(outs, 0)


class EarlyReturn(nn.Module):
    """early returns from nested conditions."""
    def forward(self, x):
        if bool(x.max() > 2.0):
            return x * 0.0
        y = x + 1.0
        if bool(y.mean() < 1.0):
            return y
        return y * 2.0


class WriteThroughView(nn.Module):
    """in-place writes into slices of a tensor inside a loop (y[:, i] = ...; y[i] += ...)."""
    def forward(self, x):
        y = torch.zeros(x.size(0), x.size(1))
        for i in range(x.size(1)):
            y[:, i] = x[:, i] * float(i)
        y[0] += 1.0
        return y


class GreedyDecoder(nn.Module):
    """greedy decoding with a GRU cell: embed the last token, step, argmax; stop at EOS."""
    def __init__(self, vocab=12, hidden=16, eos=0, max_len=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.cell = nn.GRUCell(hidden, hidden)
        self.out = nn.Linear(hidden, vocab)
        self.eos = eos
        self.max_len = max_len

    def forward(self, h, start):
        tokens: List[torch.Tensor] = []
        tok = start
        i = 0
        while i < self.max_len:
            h = self.cell(self.embed(tok), h)
            tok = self.out(h).argmax(1)
            tokens.append(tok)
            i += 1
            if bool(tok[0] == self.eos):
                break
        return torch.stack(tokens, 1), h


# ---------------------------------------------------------------- traced, dynamic axes

class WordLM(nn.Module):
    """word_language_model's shape: embedding, 2-layer LSTM with a zero initial state sized from
    the input, decoder; (seq, batch) in, (seq, batch, vocab) out."""
    def __init__(self, vocab=50, emb=16, hidden=24):
        super().__init__()
        self.encoder = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden, 2)
        self.decoder = nn.Linear(hidden, vocab)
        self.hidden = hidden

    def forward(self, tokens):
        h0 = torch.zeros(2, tokens.size(1), self.hidden)
        out, _ = self.rnn(self.encoder(tokens), (h0, h0))
        return self.decoder(out)


class DefaultArguments(nn.Module):
    """forward(x, scale=2.0, mask=None, bias: bool = True): exported with x alone, the rest take
    their defaults (as calling model(x) does)."""
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, scale: float = 2.0, mask: Optional[torch.Tensor] = None, bias: bool = True):
        y = self.lin(x) * scale
        if mask is not None:
            y = y * mask
        if bias:
            y = y + 1.0
        return y


def transformer_encoder():
    layer = nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=2)


class BakedSize(nn.Module):
    """int() of a size makes the trace fix it: with a dynamic batch this must be refused."""
    def forward(self, x):
        n = int(x.size(0))
        return x[:, 0, :] + torch.ones(n, x.size(2))


def randn(*shape):
    return torch.randn(*shape)


def tokens(*shape, high=12):
    return torch.randint(1, high, shape)


def specs():
    """name -> (builder, make, input sets, export settings)."""
    return {
        "for_loop_state": dict(data_dependent=False, model=ForLoopState, make="script", sets=[[randn(3, 4)], [randn(6, 4)], [randn(1, 4)]],
                               dynamic={"x": {0: "steps"}}, names=["x"], expect_ops=["Loop"]),
        "while_data_stop": dict(model=WhileDataStop, make="script",
                                sets=[[randn(3, 3)], [randn(3, 3) * 0.01], [randn(3, 3) * 40]],
                                names=["x"], expect_ops=["Loop"]),
        "if_shapes": dict(model=IfShapes, make="script", sets=[[randn(4, 3).abs()], [-randn(4, 3).abs()]],
                          names=["x"], expect_ops=["If"]),
        "list_append": dict(data_dependent=False, model=ListAppend, make="script", sets=[[randn(3, 5)], [randn(5, 5)], [randn(1, 5)]],
                            dynamic={"x": {0: "n"}}, names=["x"], expect_ops=["Loop", "ConcatFromSequence"]),
        "early_return": dict(model=EarlyReturn, make="script",
                             sets=[[randn(3, 4) + 5.0], [randn(3, 4).clamp(-1, 1) - 1.5], [randn(3, 4).clamp(-1, 1) + 0.8]],
                             names=["x"], expect_ops=["If"]),
        "write_through_view": dict(data_dependent=False, model=WriteThroughView, make="script", sets=[[randn(3, 4)], [randn(2, 7)]],
                                   dynamic={"x": {0: "rows", 1: "cols"}}, names=["x"], expect_ops=["Loop"]),
        "greedy_decoder": dict(model=GreedyDecoder, make="script",
                               sets=[[randn(2, 16), tokens(2)], [randn(2, 16) * 3, tokens(2)], [randn(2, 16), torch.tensor([5, 3])]],
                               names=["h", "start"], expect_ops=["Loop", "If", "GRU"], allow_gru=True),
        "word_lm_dynamic": dict(model=WordLM, make="trace", sets=[[tokens(5, 2, high=50)], [tokens(3, 1, high=50)],
                                                                  [tokens(9, 4, high=50)], [tokens(1, 3, high=50)]],
                                dynamic={"tokens": {0: "seq", 1: "batch"}}, names=["tokens"]),
        "transformer_dynamic": dict(model=transformer_encoder, make="trace",
                                    sets=[[randn(2, 5, 16)], [randn(1, 3, 16)], [randn(4, 9, 16)], [randn(3, 1, 16)]],
                                    dynamic={"src": {0: "batch", 1: "seq"}}, names=["src"]),
        "resnet_dynamic": dict(model=lambda: torchvision.models.resnet18(num_classes=10), make="trace",
                               sets=[[randn(2, 3, 64, 64)], [randn(1, 3, 64, 64)], [randn(3, 3, 64, 64)], [randn(5, 3, 64, 64)]],
                               dynamic={"x": {0: "batch"}}, names=["x"]),
        "default_arguments": dict(model=DefaultArguments, make="script", sets=[[randn(3, 4)], [randn(5, 4)]],
                                  dynamic={"x": {0: "n"}}, names=["x"], data_dependent=False),
        "baked_size": dict(model=BakedSize, make="trace", sets=[[randn(2, 3, 4)]], dynamic={"x": {0: "batch"}},
                           names=["x"], expect_error="baked in"),
    }


def flatten(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flatten(o)]
    return [out]


def build(name, spec, out_dir):
    torch.manual_seed(sum(map(ord, name)))
    model = spec["model"]().eval()
    sets = spec["sets"]
    with torch.no_grad():
        if spec["make"] == "script":
            module = torch.jit.script(model)
        else:
            import warnings
            with warnings.catch_warnings(), torch.enable_grad():
                # With grad enabled: under no_grad nn.TransformerEncoder takes its fused fast path
                # (aten::_transformer_encoder_layer_fwd), which is a different test.
                warnings.simplefilter("ignore")
                module = torch.jit.trace(model, tuple(sets[0]), check_trace=False)
    module.save(os.path.join(out_dir, f"{name}.pt"))
    manifests = []
    for j, inputs in enumerate(sets):
        with torch.no_grad():
            # The traced/scripted module is the reference: eager and TorchScript agree on these.
            expected = flatten(module(*inputs))
        entries = save_arrays(out_dir, f"{name}.set{j}.in", inputs)
        for k, e in enumerate(entries):
            e["name"] = spec["names"][k]
        manifest = {"model": f"{name}.pt", "inputs": entries, "outputs": save_arrays(out_dir, f"{name}.set{j}.out", expected)}
        manifest_file = f"{name}.set{j}.json"
        write_atomically(os.path.join(out_dir, manifest_file), json.dumps(manifest, indent=1) + "\n")
        manifests.append(manifest_file)
    return {"name": name, "model": f"{name}.pt", "mode": spec["make"], "manifests": manifests,
            "dynamic": {k: {str(a): n for a, n in v.items()} for k, v in spec.get("dynamic", {}).items()},
            "expect_ops": spec.get("expect_ops", []), "expect_error": spec.get("expect_error"),
            # Scripted control flow that depends on tensor values: a trace must warn about it.
            "data_dependent": spec.get("data_dependent", spec["make"] == "script")}


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    cases = [build(name, spec, out_dir) for name, spec in specs().items()]
    write_atomically(os.path.join(out_dir, "cases.json"), json.dumps(cases, indent=1) + "\n")
    print(f"{len(cases)} script/dynamic-axes fixtures in {out_dir}")


if __name__ == "__main__":
    main()
