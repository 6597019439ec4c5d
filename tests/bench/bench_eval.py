#!/usr/bin/python3
"""onnxport's evaluator (`onnxport run`) against libtorch's own forward pass on the same model.

Usage: bench_eval.py BUILD_DIR [--model resnet18 ...] [--repeat 3]

For each zoo fixture (BUILD_DIR/fixtures/zoo/<model>.pt with its recorded input), the model is
exported once (opset 17), then, alternating and each in a fresh process:
  - `onnxport run MODEL.onnx --input x=IN.npy`: the evaluator's run time as it reports it
    ("ran in"), without loading the file;
  - libtorch: torch.jit.load(MODEL.pt) and one forward pass under no_grad, timed around the
    forward call alone (the first call, as the evaluator's is), and the median of 3 more calls.
Each figure is the median of --repeat processes; ratio = evaluator / libtorch's first call.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

TORCH_FORWARD = r"""
import sys, time, numpy as np, torch
torch.set_num_threads(int(sys.argv[3]))
m = torch.jit.load(sys.argv[1]).eval()
x = torch.from_numpy(np.load(sys.argv[2]))
with torch.no_grad():
    t0 = time.perf_counter(); m(x); first = time.perf_counter() - t0
    more = []
    for _ in range(3):
        t0 = time.perf_counter(); m(x); more.append(time.perf_counter() - t0)
print(first, sorted(more)[1])
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--model", action="append")
    ap.add_argument("--repeat", type=int, default=3)
    opts = ap.parse_args()
    cli = os.path.join(opts.build, "bin", "onnxport")
    zoo = os.path.join(opts.build, "fixtures", "zoo")
    models = opts.model or ["resnet18", "mobilenet_v2", "densenet121", "vit_b_32"]
    threads = str(os.cpu_count())
    print(f"{'model':<16} {'evaluator s':>12} {'libtorch 1st s':>15} {'libtorch warm s':>16} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in models:
            with open(os.path.join(zoo, f"{name}.json")) as fh:
                manifest = json.load(fh)
            npy = os.path.join(zoo, manifest["inputs"][0]["file"])
            onnx_file = os.path.join(tmp, f"{name}.onnx")
            subprocess.run([cli, "export", os.path.join(zoo, f"{name}.pt"), "-o", onnx_file, "--input",
                            f"x={npy}"], check=True, capture_output=True)
            evaluator, first, warm = [], [], []
            for _ in range(opts.repeat):
                r = subprocess.run([cli, "run", onnx_file, "--input", f"x={npy}"], check=True, capture_output=True,
                                   text=True)
                evaluator.append(float(re.search(r"ran in ([0-9.]+) s", r.stdout).group(1)))
                r = subprocess.run([sys.executable, "-c", TORCH_FORWARD, os.path.join(zoo, f"{name}.pt"), npy,
                                    threads], check=True, capture_output=True, text=True)
                a, b = map(float, r.stdout.split())
                first.append(a)
                warm.append(b)
            e, f, w = statistics.median(evaluator), statistics.median(first), statistics.median(warm)
            print(f"{name:<16} {e:>12.3f} {f:>15.3f} {w:>16.3f} {e / f:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
