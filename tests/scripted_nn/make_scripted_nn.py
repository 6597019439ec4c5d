#!/usr/bin/env python3
"""Fixtures for the scripted torch.nn test: every case of nn_cases.CASES, torch.jit.script-ed.

For each case NAME: NAME.pt (the scripted module, eval mode, fixed seed), its inputs and the
scripted module's outputs as .npy files, and NAME.json (the manifest ort_compare.js reads).
OUT_DIR/cases.json (written last) lists the cases with the torch.nn class each one covers.

usage: make_scripted_nn.py OUT_DIR
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
sys.path.insert(0, HERE)
from npy_io import save_arrays, write_atomically  # noqa: E402
from nn_cases import CASES  # noqa: E402


def flatten(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flatten(o)]
    return [out]


def tensor_forward(module):
    """The callable forward: a scripted nn.LSTM/GRU/RNN has no `forward` in torch 1.13, only its
    overloads forward__0 (Tensor input) and forward__1 (PackedSequence); onnxport picks the same."""
    if module._c._has_method("forward"):
        return module
    return module.forward__0


def build(name, cls, ctor, input_makers, out_dir):
    torch.manual_seed(sum(map(ord, name)))
    module = torch.jit.script(ctor().eval())
    inputs = [make() for make in input_makers]
    with torch.no_grad():
        expected = flatten(tensor_forward(module)(*inputs))
    module.save(os.path.join(out_dir, f"{name}.pt"))
    entries = save_arrays(out_dir, f"{name}.in", flatten(inputs))
    for k, e in enumerate(entries):
        e["name"] = f"input{k}"
    manifest = {"model": f"{name}.pt", "inputs": entries, "outputs": save_arrays(out_dir, f"{name}.out", expected)}
    write_atomically(os.path.join(out_dir, f"{name}.json"), json.dumps(manifest, indent=1) + "\n")
    return {"name": name, "class": cls, "model": f"{name}.pt", "manifest": f"{name}.json"}


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    cases = [build(name, cls, ctor, inputs, out_dir) for name, (cls, ctor, inputs) in CASES.items()]
    write_atomically(os.path.join(out_dir, "cases.json"), json.dumps(cases, indent=1) + "\n")
    print(f"{len(cases)} scripted torch.nn fixtures in {out_dir}")


if __name__ == "__main__":
    main()
