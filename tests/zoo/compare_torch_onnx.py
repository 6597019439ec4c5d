#!/usr/bin/python3
"""onnxport against torch.onnx 1.13 on the model zoo: node counts and ONNX Runtime errors.

For every zoo fixture (tests/zoo/make_zoo.py) the same traced .pt is exported twice at opset 17,
by the onnxport CLI and by torch.onnx.export (on the torch.jit.load-ed module, as a C++ user's
.pt would be). Both files run in ONNX Runtime (tests/integration/ort_compare.js, one Node
process) on the fixture's inputs; the max abs error is against the eager PyTorch outputs.
Prints a Markdown table: model, node counts, max abs errors (and why an export failed).

Usage: /usr/bin/python3 compare_torch_onnx.py [--onnxport build/bin/onnxport]
           [--fixtures build/fixtures/zoo] [--work DIR] [--only NAME]...
Build the fixtures first (ctest -R zoo.fixtures, or make_zoo.py OUT_DIR).
"""
import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np
import onnx
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import make_zoo  # noqa: E402

OPSET = 17


def nest(structure, flat):
    """Rebuild forward()'s arguments from the manifest's "args" nesting, e.g. [0, [1, 2]]."""
    if isinstance(structure, int):
        return flat[structure]
    return tuple(nest(s, flat) for s in structure)


def load_fixture(fixtures, name):
    with open(os.path.join(fixtures, f"{name}.json")) as f:
        manifest = json.load(f)
    files = [os.path.join(fixtures, e["file"]) for e in manifest["inputs"]]
    return manifest, files


def export_onnxport(onnxport, fixtures, name, manifest, input_files, out):
    cmd = [onnxport, "export", os.path.join(fixtures, manifest["model"]), "-o", out, "--opset", str(OPSET)]
    for entry, file in zip(manifest["inputs"], input_files):
        cmd += ["--input", f"{entry['name']}={file}"]
    start = time.perf_counter()
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError((run.stderr or run.stdout).strip().splitlines()[-1])
    return time.perf_counter() - start


def export_torch_onnx(fixtures, manifest, input_files, out):
    flat = [torch.from_numpy(np.load(f)) for f in input_files]
    args = nest(manifest["args"], flat)
    start = time.perf_counter()  # load + export, as the onnxport CLI's time includes loading
    module = torch.jit.load(os.path.join(fixtures, manifest["model"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, out, opset_version=OPSET,
                          input_names=[e["name"] for e in manifest["inputs"]])
    return time.perf_counter() - start


def node_count(path):
    return len(onnx.load(path, load_external_data=False).graph.node)


def run_in_ort(cases, work):
    """One ort_compare.js process over every exported file; ORT's outputs are saved as .npy."""
    cases_file = os.path.join(work, "cases.json")
    with open(cases_file, "w") as f:
        json.dump(cases, f, indent=1)
    actual_dir = os.path.join(work, "actual")
    run = subprocess.run(["node", os.path.join(ROOT, "tests", "integration", "ort_compare.js"),
                          "--cases", cases_file, "--save-actual", actual_dir],
                         capture_output=True, text=True)
    failures = {line.split()[1].rstrip(":"): line for line in run.stdout.splitlines()
                if line.startswith("FAIL ") and ":" in line}
    return actual_dir, failures


def max_abs_error(actual_dir, fixtures, manifest, onnx_file):
    base = os.path.basename(onnx_file)[: -len(".onnx")]
    worst = 0.0
    for k, entry in enumerate(manifest["outputs"]):
        path = os.path.join(actual_dir, f"{base}.actual{k}.npy")
        if not os.path.exists(path):
            return None
        got = np.load(path).astype(np.float64)
        want = np.load(os.path.join(fixtures, entry["file"])).astype(np.float64)
        if got.shape != want.shape:
            return float("inf")
        worst = max(worst, float(np.abs(got - want).max()))
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--onnxport", default=os.path.join(ROOT, "build", "bin", "onnxport"))
    parser.add_argument("--fixtures", default=os.path.join(ROOT, "build", "fixtures", "zoo"))
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "zoo-compare"))
    parser.add_argument("--only", action="append", choices=sorted(make_zoo.ZOO), metavar="NAME")
    parser.add_argument("--reuse", action="store_true", help="keep .onnx files already in --work (no timings)")
    options = parser.parse_args()
    options.fixtures, options.work = os.path.abspath(options.fixtures), os.path.abspath(options.work)
    os.makedirs(options.work, exist_ok=True)

    rows, cases = [], []
    for name in options.only or list(make_zoo.ZOO):
        manifest, inputs = load_fixture(options.fixtures, name)
        row = {"name": name, "manifest": manifest, "files": {}, "errors": {}, "seconds": {}}
        exporters = {
            "onnxport": lambda out: export_onnxport(options.onnxport, options.fixtures, name, manifest, inputs, out),
            "torch.onnx": lambda out: export_torch_onnx(options.fixtures, manifest, inputs, out),
        }
        for label, export in exporters.items():
            out = os.path.join(options.work, f"{name}.{label.replace('.', '_')}.onnx")
            try:
                if not (options.reuse and os.path.exists(out)):
                    row["seconds"][label] = export(out)
                row["files"][label] = out
                cases.append({"onnx": out, "manifest": os.path.join(options.fixtures, f"{name}.json"),
                              "rtol": manifest.get("rtol", 1e-3), "atol": manifest.get("atol", 1e-5)})
            except Exception as e:  # noqa: BLE001 - the table reports any exporter failure
                row["errors"][label] = f"export failed: {str(e).splitlines()[0][:120]}"
        print(f"{name}: exported ({', '.join(f'{k} {v:.1f} s' for k, v in row['seconds'].items())})",
              file=sys.stderr, flush=True)
        rows.append(row)

    actual_dir, ort_failures = run_in_ort(cases, options.work)
    print("| model | onnxport nodes | torch.onnx nodes | onnxport max abs err | torch.onnx max abs err | "
          "onnxport s | torch.onnx s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    notes = []
    for row in rows:
        cells = [row["name"]]
        counts, errors = [], []
        for label in ("onnxport", "torch.onnx"):
            file = row["files"].get(label)
            if file is None:
                counts.append("—")
                errors.append("failed")
                notes.append(f"{row['name']} / {label}: {row['errors'][label]}")
                continue
            counts.append(str(node_count(file)))
            err = max_abs_error(actual_dir, options.fixtures, row["manifest"], file)
            base = os.path.basename(file)
            if err is None:
                errors.append("ORT failed")
                notes.append(f"{row['name']} / {label}: {ort_failures.get(base, 'no output from ONNX Runtime')}")
            else:
                errors.append(f"{err:.2e}")
        seconds = [f"{row['seconds'][k]:.1f}" if k in row["seconds"] else "—" for k in ("onnxport", "torch.onnx")]
        print("| " + " | ".join(cells + counts + errors + seconds) + " |")
    for note in notes:
        print(f"\n- {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
