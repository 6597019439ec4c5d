#!/usr/bin/env python3
"""Every torch.nn module class, scripted, exported at opsets 11/13/17 and run in ONNX Runtime.

1. Coverage: every nn.Module subclass that torch.nn exports is a case of nn_cases.CASES or is
   in nn_cases.EXCEPTIONS with its reason; a class in neither fails the test.
2. Each fixture (make_scripted_nn.py) is exported with `onnxport export --mode script` at each
   opset; every export must succeed (below a case's nn_cases.MIN_OPSET, and under PyTorch 2 for
   the cases of nn_cases.REFUSED_ON_TORCH2, it must be refused with the reason and write nothing), and all of them run in one ONNX Runtime process against the
   scripted module's outputs.
Prints the number of classes and cases passing per opset.

usage: run_scripted_nn.py --onnxport BIN --node NODE --fixtures DIR --work DIR [--only NAME]... [--opset N]...
"""
import argparse
import inspect
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from nn_cases import CASES, EXCEPTIONS, MIN_OPSET, REFUSED_ON_TORCH2  # noqa: E402
from ort_cases import compare_in_ort  # noqa: E402

TORCH_MAJOR = int(torch.__version__.split(".")[0])



def coverage_failures():
    classes = {name for name, obj in vars(nn).items() if inspect.isclass(obj) and issubclass(obj, nn.Module)}
    tested = {cls for cls, _, _ in CASES.values()}
    failures = [f"torch.nn.{c} is neither tested (nn_cases.CASES) nor listed in nn_cases.EXCEPTIONS"
                for c in sorted(classes - tested - set(EXCEPTIONS))]
    failures += [f"nn_cases lists {c}, which is not a torch.nn module class" for c in sorted((tested | set(EXCEPTIONS)) - classes)]
    failures += [f"{c} is both tested and listed as an exception" for c in sorted(tested & set(EXCEPTIONS))]
    return failures, len(classes)


def export(args, case, opset):
    manifest = json.load(open(os.path.join(args.fixtures, case["manifest"])))
    out = os.path.join(args.work, f"{case['name']}.opset{opset}.onnx")
    if os.path.exists(out):
        os.remove(out)
    cmd = [args.onnxport, "export", os.path.join(args.fixtures, case["model"]), "-o", out, "--mode", "script",
           "--opset", str(opset)]
    for e in manifest["inputs"]:
        cmd += ["--input", f"{e['name']}={os.path.join(args.fixtures, e['file'])}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    message = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-1:]
    first, expected_error = MIN_OPSET.get(case["name"], (0, None))
    if TORCH_MAJOR >= 2 and case["name"] in REFUSED_ON_TORCH2:
        first, expected_error = 99, REFUSED_ON_TORCH2[case["name"]]
    if opset < first:  # must be refused, with the reason, and no file
        refused = proc.returncode != 0 and not os.path.exists(out) and expected_error in proc.stderr
        return case, opset, refused, None, None if refused else [f"expected a refusal mentioning '{expected_error}'"] + message
    ok = proc.returncode == 0 and os.path.exists(out)
    return case, opset, ok, out, None if ok else message


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
    os.makedirs(args.work, exist_ok=True)
    opsets = args.opset or [11, 13, 17]

    failures, class_count = coverage_failures()
    cases = json.load(open(os.path.join(args.fixtures, "cases.json")))
    if args.only:
        cases = [c for c in cases if c["name"] in args.only]
        failures = []
    jobs = [(c, o) for o in opsets for c in cases]
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda j: export(args, *j), jobs))

    ort_cases = []
    for case, opset, ok, out, why in results:
        if not ok:
            failures.append(f"{case['name']} (opset {opset}): export failed: {' '.join(why)}")
        elif out:  # exported (a refusal below MIN_OPSET has no file)
            ort_cases.append({"name": f"{case['name']}.opset{opset}", "onnx": out,
                              "manifest": os.path.join(args.fixtures, case["manifest"])})
    ort_failures, ort_failed = compare_in_ort(args.node, ort_cases, args.work)
    failures += ort_failures
    for opset in opsets:
        exported = [c for c, o, ok, out, _ in results if o == opset and ok and out and
                    f"{c['name']}.opset{o}" not in ort_failed]
        refused = [c for c, o, ok, out, _ in results if o == opset and ok and not out]
        print(f"opset {opset}: {len(exported)}/{len(cases)} cases match PyTorch in ONNX Runtime "
              f"({len({c['class'] for c in exported})}/{len({c['class'] for c in cases})} torch.nn classes)"
              + (f", {len(refused)} refused as expected (MIN_OPSET, REFUSED_ON_TORCH2)" if refused else ""))
    print(f"torch.nn has {class_count} module classes: {len({c['class'] for c in cases})} tested scripted, "
          f"{len(EXCEPTIONS)} listed as exceptions")
    if failures:
        print("\nFAILED:\n" + "\n".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
