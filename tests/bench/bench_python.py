#!/usr/bin/python3
"""onnxport.export vs torch.onnx.export in one Python process, on the same nn.Module and args.

Usage: PYTHONPATH=build/python bench_python.py [--model resnet50 ...] [--repeat 3] [--opset 17]

Models are torchvision's with random weights (fixed seed). The two exporters run alternately
(onnxport, torch.onnx, onnxport, ...) on the same module object; each figure is the median wall
time of --repeat runs. The first onnxport call of the process also loads the op packs: it is
reported on its own line. Both write to a temporary directory; before each run the previous
output is removed and `sync` runs (outside the timing).
"""
import argparse
import os
import statistics
import tempfile
import time
import warnings

import torch
import torchvision

import onnxport

INPUTS = {"alexnet": (1, 3, 224, 224), "resnet50": (1, 3, 224, 224), "mobilenet_v2": (1, 3, 224, 224),
          "vit_b_16": (1, 3, 224, 224), "swin_t": (1, 3, 224, 224), "vgg11_bn": (1, 3, 224, 224)}


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def timed_export(fn, out):
    """fn's time writing `out`, started with no earlier output left and nothing waiting to be
    written: replacing a file of hundreds of MB still under writeback stalls the writer for
    the previous run's sake (as bench_export.py does, removed and synced before each run)."""
    if os.path.exists(out):
        os.remove(out)
    os.sync()
    return timed(fn)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", action="append", choices=sorted(INPUTS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--opset", type=int, default=17)
    options = ap.parse_args()
    warnings.simplefilter("ignore")
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "m.onnx")
        first = timed(lambda: onnxport.export(torch.nn.Linear(2, 2).eval(), torch.randn(1, 2), out))
        print(f"first onnxport.export call of the process (loads the op packs; a Linear): {first:.2f} s")
        print(f"| model | onnxport.export | torch.onnx.export | ratio |\n|---|---|---|---|")
        for name in options.model or ["alexnet", "resnet50", "vit_b_16"]:
            model = getattr(torchvision.models, name)().eval()
            x = torch.randn(*INPUTS[name])
            ours, theirs = [], []
            for _ in range(options.repeat):
                ours.append(timed_export(lambda: onnxport.export(model, (x,), out, opset_version=options.opset), out))
                theirs.append(timed_export(lambda: torch.onnx.export(model, (x,), out, opset_version=options.opset), out))
            a, b = statistics.median(ours), statistics.median(theirs)
            print(f"| {name} | {a:.2f} s | {b:.2f} s | {a / b:.2f} |", flush=True)


if __name__ == "__main__":
    main()
