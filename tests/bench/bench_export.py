#!/usr/bin/python3
"""Export time, peak RSS and node count: `onnxport export` vs `torch.onnx.export`, same .pt.

Usage: bench_export.py --onnxport build/bin/onnxport --fixtures build/fixtures/models \
           [--model alexnet --model resnet ...] [--opset 17] [--repeat 1]

Each exporter runs in its own process under GNU time (`/usr/bin/time -v`, Debian package
`time`), so peak RSS is the whole process's high-water mark. The .pt files and example inputs
come from tests/fixtures/make_models.py (the `<name>.json` manifests).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

TORCH_EXPORT = r"""
import json, sys, numpy as np, torch
manifest, out, opset = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = json.load(open(manifest))
d = __import__('os').path.dirname(manifest)
model = torch.jit.load(__import__('os').path.join(d, m['model']))
inputs = [torch.from_numpy(np.load(__import__('os').path.join(d, i['file']))) for i in m['inputs']]
def nest(spec):  # manifest "args": how flat inputs nest into forward()'s arguments
    return tuple(nest(s) for s in spec) if isinstance(spec, list) else inputs[spec]
args = nest(m['args']) if 'args' in m else tuple(inputs)
torch.onnx.export(model, args, out, opset_version=opset, do_constant_folding=True)
"""


def timed(cmd):
    r = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, None, r.stderr[-2000:]
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", r.stderr)
    h = float(wall.group(1) or 0)
    seconds = h * 3600 + float(wall.group(2)) * 60 + float(wall.group(3))
    rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))
    return seconds, rss_kb / 1024.0, None


def node_count(path):
    import onnx
    return len(onnx.load(path, load_external_data=False).graph.node)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnxport", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--model", action="append")
    ap.add_argument("--opset", type=int, default=17)
    args = ap.parse_args()
    names = args.model or sorted(f[:-5] for f in os.listdir(args.fixtures) if f.endswith(".json"))
    tmp = tempfile.mkdtemp(prefix="onnxport-bench-")
    print(f"{'model':22} {'exporter':12} {'time s':>8} {'peak RSS MiB':>13} {'nodes':>6}")
    for name in names:
        manifest = os.path.join(args.fixtures, name + ".json")
        m = json.load(open(manifest))
        ours = os.path.join(tmp, name + ".onnxport.onnx")
        theirs = os.path.join(tmp, name + ".torch.onnx")
        cmd = [args.onnxport, "export", os.path.join(args.fixtures, m["model"]), "-o", ours,
               "--opset", str(args.opset)]
        for i in m["inputs"]:
            cmd += ["--input", f"{i['name']}={os.path.join(args.fixtures, i['file'])}"]
        for label, c, out in (("onnxport", cmd, ours),
                              ("torch.onnx", ["/usr/bin/python3", "-c", TORCH_EXPORT, manifest, theirs,
                                              str(args.opset)], theirs)):
            secs, rss, err = timed(c)
            if err:
                print(f"{name:22} {label:12} FAILED: {err.strip().splitlines()[-1] if err.strip() else err}")
                continue
            print(f"{name:22} {label:12} {secs:8.2f} {rss:13.0f} {node_count(out):6d}", flush=True)
            os.remove(out)


if __name__ == "__main__":
    sys.exit(main())
