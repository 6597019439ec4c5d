#!/usr/bin/env python3
"""Scripted text models through the onnxport CLI, judged by ONNX Runtime (issue 49 item 3).

Each case of make_text_models.py is exported at each opset with the CLI arguments the case lists
(run in the fixtures directory, so its .npy inputs are found); every export must succeed, a case
whose model returns a dict must name the ONNX outputs after its keys (lists numbered: states.0),
and every input set of the case (a second size for the dynamic-axes cases) is run in one ONNX
Runtime process against the scripted module's outputs. Prints the cases passing per opset; exits
77 (ctest's skip) when the fixtures say torchtext is not installed.

usage: run_text_models.py --onnxport BIN --node NODE --fixtures DIR --work DIR [--opset N]... [--only NAME]...
"""
import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from ort_cases import compare_in_ort  # noqa: E402

SKIP = 77
# Exports that must be refused, with the reason: (case, opset) -> text the error must hold.
REFUSED = {("padded_batch_dynamic", 10): "a sequence length known only at run time needs opset 11 or later",
           ("dict_written", 17): "prim::DictConstruct x1 in <top> (a dict the model writes to"}
# Cases that are only exported to be refused (above), never judged in ONNX Runtime.
REFUSED_ONLY = {"dict_written"}


def output_names(onnx_file, onnxport):
    """The graph's output names, from `onnxport inspect` (no Python onnx needed)."""
    text = subprocess.run([onnxport, "inspect", onnx_file], capture_output=True, text=True, check=True).stdout
    names, in_outputs = [], False
    for line in text.splitlines():
        if line.strip().lower().startswith("outputs"):
            in_outputs = True
            continue
        if in_outputs:
            if not line.startswith("    %"):
                break
            names.append(line.strip().lstrip("%").split(" ")[0])
    return names


def export(args, case, opset):
    out = os.path.join(args.work, f"{case['name']}.opset{opset}.onnx")
    if os.path.exists(out):
        os.remove(out)
    cmd = [args.onnxport, "export", case["model"], "-o", out, "--opset", str(opset)] + case["cli"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=args.fixtures)
    if proc.returncode != 0 or not os.path.exists(out):
        return case, opset, None, "export failed: " + " ".join((proc.stderr.strip() or proc.stdout.strip()).splitlines()[-1:])
    if case["output_names"]:
        names = output_names(out, args.onnxport)
        if names != case["output_names"]:
            return case, opset, None, f"output names {names}, expected the dict's keys {case['output_names']}"
    return case, opset, out, None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--onnxport", required=True)
    p.add_argument("--node", default="node")
    p.add_argument("--fixtures", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--only", action="append")
    p.add_argument("--opset", type=int, action="append")
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()
    args.fixtures, args.work = os.path.abspath(args.fixtures), os.path.abspath(args.work)
    args.onnxport = os.path.abspath(args.onnxport)
    os.makedirs(args.work, exist_ok=True)
    cases = json.load(open(os.path.join(args.fixtures, "cases.json")))
    if isinstance(cases, dict) and "skipped" in cases:
        print(f"SKIPPED: {cases['skipped']}")
        return SKIP
    if args.only:
        cases = [c for c in cases if c["name"] in args.only]
    opsets = args.opset or [13, 17]
    judged = [c for c in cases if c["name"] not in REFUSED_ONLY]
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda j: export(args, *j), [(c, o) for o in opsets for c in judged]))

    failures, ort_cases = [], []
    for (name, opset), reason in REFUSED.items():
        case = next((c for c in cases if c["name"] == name), None)
        if case is None:
            continue
        out = os.path.join(args.work, f"{name}.opset{opset}.refused.onnx")
        proc = subprocess.run([args.onnxport, "export", case["model"], "-o", out, "--opset", str(opset)] + case["cli"],
                              capture_output=True, text=True, cwd=args.fixtures)
        if proc.returncode == 0 or os.path.exists(out) or reason not in proc.stderr:
            failures.append(f"{name} (opset {opset}): expected a refusal saying '{reason}' and no file, got exit "
                            f"{proc.returncode}: {proc.stderr.strip()[-300:]}")
    for case, opset, out, why in results:
        if why:
            failures.append(f"{case['name']} (opset {opset}): {why}")
            continue
        for k, manifest in enumerate(case["manifests"]):
            ort_cases.append({"name": f"{case['name']}.opset{opset}.set{k}", "onnx": out,
                              "manifest": os.path.join(args.fixtures, manifest), "rtol": 1e-3, "atol": 1e-4})
    ort_failures, failed_sets = compare_in_ort(args.node, ort_cases, args.work)
    failures += ort_failures
    ort_failed = {name.rsplit(".set", 1)[0] for name in failed_sets}
    for opset in opsets:
        passed = [c["name"] for c, o, out, why in results
                  if o == opset and out and f"{c['name']}.opset{o}" not in ort_failed]
        print(f"opset {opset}: {len(passed)}/{len(judged)} scripted text-model cases match PyTorch in ONNX Runtime")
    if failures:
        print("\nFAILED:\n" + "\n".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
