#!/usr/bin/python3
"""Fixtures of the torchaudio suite: every case of audio_cases.CASES, scripted and traced.

For each case NAME and mode MODE (script, trace), in OUT_DIR:
  NAME.MODE.pt               torch.jit.script / torch.jit.trace of the module, torch.jit.save-d
  NAME.MODE.in<k>.npy        its inputs; NAME.MODE.out<k>.npy the TorchScript module's outputs
                             (flattened; a complex output as torch.view_as_real)
  NAME.MODE.json             the manifest tests/integration/ort_compare.js reads, plus rtol/atol,
                             the complex output indices and the custom ops (torchaudio::*) used
  NAME.MODE.status.json      {"status": "ok" | "not-scriptable-in-torch", "reason", "hash"}
When PyTorch itself cannot script or trace a case (or the result does not run), the status is
not-scriptable-in-torch with the first line of PyTorch's error, and there is no .pt.

Cached: a (case, mode) whose status file carries the current hash (this script, audio_cases.py,
npy_io.py, the torch and torchaudio versions) is not rebuilt.

usage: /usr/bin/python3 make_torchaudio.py OUT_DIR [--only NAME]... [--force] [--list]
"""
import argparse
import hashlib
import json
import os
import re
import sys
import time
import warnings

import torch
import torchaudio

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")
sys.path.insert(0, FIXTURES)
sys.path.insert(0, HERE)
from npy_io import save_arrays, write_atomically  # noqa: E402
from audio_cases import CASES  # noqa: E402

SOURCES = [os.path.abspath(__file__), os.path.join(HERE, "audio_cases.py"), os.path.join(FIXTURES, "npy_io.py")]


def generator_hash():
    h = hashlib.sha256()
    for path in SOURCES:
        with open(path, "rb") as f:
            h.update(f.read())
    h.update(f"torch {torch.__version__} torchaudio {torchaudio.__version__}".encode())
    return h.hexdigest()[:16]


def flatten(value):
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flatten(v)]
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"an output is a {type(value).__name__}, not a tensor")
    return [value]


def first_line(error):
    """The error's first line; TorchScript's messages start with an empty line or a schema, so the
    first two non-empty lines when the first ends with ':'."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = lines[0] if lines else ""
    if (text.endswith(":") or text == "Arguments for call are not valid.") and len(lines) > 1:
        text += " " + next((line for line in lines[1:] if line.startswith("Expected")), lines[1])
    text = re.sub(r"___torch_mangle_\d+\.| \(of Python compilation unit at: 0x[0-9a-f]+\)", "", text)
    return f"{type(error).__name__}: {text}"[:300]


def custom_ops(module):
    """The non-aten/prim ops of the module's inlined graph (torchaudio::_lfilter...): the CLI
    must load the library that registers them to read the .pt."""
    kinds = set()

    def visit(block):
        for node in block.nodes():
            kind = node.kind()
            if kind.split("::")[0] not in ("aten", "prim", "profiler"):
                kinds.add(kind)
            for sub in node.blocks():
                visit(sub)
    visit(module.inlined_graph)
    return sorted(kinds)


def seed_of(name):
    return sum(map(ord, name)) * 7 + 11


def compile_module(name, mode, case):
    """Returns (jit_module, inputs) or raises: the same module (same seed) for both modes."""
    torch.manual_seed(seed_of(name))
    module = case.build().eval()
    inputs = tuple(case.inputs())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if mode == "script":
            jit = torch.jit.script(module)
        else:  # traced with autograd on, as a user would (no_grad takes PyTorch's fused fast paths)
            jit = torch.jit.trace(module, inputs, check_trace=False, strict=False)
    return jit, inputs


def build(name, mode, case, out_dir, digest):
    stem = f"{name}.{mode}"
    status_file = os.path.join(out_dir, f"{stem}.status.json")
    start = time.perf_counter()
    try:
        jit, inputs = compile_module(name, mode, case)
        path = os.path.join(out_dir, f"{stem}.pt")
        torch.jit.save(jit, path)
        loaded = torch.jit.load(path)
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raw = flatten(loaded(*inputs))
    except Exception as e:  # noqa: BLE001 - PyTorch's own refusal is the row's result
        verb = "script" if mode == "script" else "trace"
        status = {"status": "not-scriptable-in-torch", "reason": f"torch.jit.{verb}: {first_line(e)}"}
    else:
        complex_outputs = [k for k, t in enumerate(raw) if t.is_complex()]
        outputs = [torch.view_as_real(t) if t.is_complex() else t for t in raw]
        entries = save_arrays(out_dir, f"{stem}.in", inputs)
        for k, e in enumerate(entries):
            e["name"] = f"input{k}"
        manifest = {"model": f"{stem}.pt", "case": name, "mode": mode, "inputs": entries,
                    "outputs": save_arrays(out_dir, f"{stem}.out", outputs), "complex_outputs": complex_outputs,
                    "custom_ops": custom_ops(jit), "rtol": case.rtol, "atol": case.atol}
        write_atomically(os.path.join(out_dir, f"{stem}.json"), json.dumps(manifest, indent=1) + "\n")
        status = {"status": "ok", "reason": ""}
    status.update(hash=digest, seconds=round(time.perf_counter() - start, 2))
    write_atomically(status_file, json.dumps(status, indent=1) + "\n")
    return status


def is_current(out_dir, stem, digest):
    try:
        with open(os.path.join(out_dir, f"{stem}.status.json")) as f:
            status = json.load(f)
    except (OSError, ValueError):
        return False
    if status.get("hash") != digest:
        return False
    return status["status"] != "ok" or all(
        os.path.exists(os.path.join(out_dir, f"{stem}{suffix}")) for suffix in (".pt", ".json"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", nargs="?")
    parser.add_argument("--only", action="append", choices=sorted(CASES), metavar="NAME")
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    parser.add_argument("--list", action="store_true", help="print the case names and exit")
    options = parser.parse_args()
    if options.list:
        print("\n".join(CASES))
        return 0
    if not options.out_dir:
        parser.error("OUT_DIR is required")
    os.makedirs(options.out_dir, exist_ok=True)
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    digest = generator_hash()
    built = cached = 0
    start = time.perf_counter()
    for name in options.only or list(CASES):
        case = CASES[name]
        for mode in case.modes:
            stem = f"{name}.{mode}"
            if not options.force and is_current(options.out_dir, stem, digest):
                cached += 1
                continue
            status = build(name, mode, case, options.out_dir, digest)
            built += 1
            print(f"{stem}: {status['status']} ({status['seconds']} s){' ' + status['reason'] if status['reason'] else ''}",
                  flush=True)
    print(f"torchaudio fixtures in {options.out_dir}: {built} built, {cached} up to date "
          f"({time.perf_counter() - start:.1f} s, generator {digest})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
