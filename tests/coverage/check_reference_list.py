#!/usr/bin/python3
"""Fail unless onnxport maps every op torch.onnx 1.13 maps, at every opset it does, and >= 40 more aten ops.

The reference list (torch113_symbolics.txt, a committed copy: tests never read outside the repo)
has one line per op torch.onnx 1.13 registers a symbolic for, `ns::name LOWEST_OPSET`, spelled as
its registry spells it. torch.onnx looks a node up by its kind minus one trailing `_` (so that
`aten::relu_` finds `aten::relu`), and the dunder ops are registered that way: `aten::__and_` is
TorchScript `aten::__and__`. So a listed `ns::name` is covered by the onnxport op `ns::name` or
`ns::name_`, and an onnxport op X is one torch.onnx has if X or X minus one trailing `_` is listed.

Checks, from `ONNXPORT ops --json` (the registry picks the greatest since-opset <= the target):
  * every listed name is mapped from its listed opset (at least 7, onnxport's lowest) up to 17;
  * at least --min-extra (40) `aten::` ops that torch.onnx 1.13 does not have are mapped, not
    counting in-place forms (`op_`) of ops that are counted.
Prints the counts, the extra ops and every missing name.

Usage: /usr/bin/python3 check_reference_list.py ONNXPORT [--list FILE] [--min-extra N]
"""
import argparse
import collections
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LOWEST_EXPORT_OPSET, HIGHEST_EXPORT_OPSET = 7, 17


def read_reference(path):
    """name -> lowest opset, from `ns::name OPSET` lines ('#' starts a comment)."""
    reference = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.split("#")[0].split()
            if not fields:
                continue
            if len(fields) != 2 or "::" not in fields[0] or not fields[1].isdigit():
                sys.exit(f"{path}:{number}: expected 'ns::op LOWEST_OPSET', got {line.strip()!r}")
            reference[fields[0]] = int(fields[1])
    return reference


def registered(onnxport):
    """op -> set of since-opsets, from the CLI (built-in packs only: ONNXPORT_PLUGIN_PATH unset)."""
    env = {k: v for k, v in os.environ.items() if k != "ONNXPORT_PLUGIN_PATH"}
    out = subprocess.run([onnxport, "ops", "--json"], check=True, capture_output=True, text=True, env=env).stdout
    table = collections.defaultdict(set)
    for entry in json.loads(out):
        table[entry["op"]].add(entry["since_opset"])
    return table


def lowest_mapped_opset(table, name):
    """The lowest opset from which onnxport maps the listed `name` at every opset up to 17, or None."""
    sinces = [min(table[op]) for op in (name, name + "_") if op in table]
    return max(min(sinces), LOWEST_EXPORT_OPSET) if sinces else None


def in_torch_onnx(reference, op):
    return op in reference or (op.endswith("_") and op[:-1] in reference)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("onnxport", help="the onnxport CLI")
    parser.add_argument("--list", default=os.path.join(HERE, "torch113_symbolics.txt"), help="reference list")
    parser.add_argument("--min-extra", type=int, default=40, help="aten ops required beyond the list")
    options = parser.parse_args()

    reference = read_reference(options.list)
    table = registered(options.onnxport)
    absent, late = [], []
    for name, opset in sorted(reference.items()):
        lowest = lowest_mapped_opset(table, name)
        if lowest is None:
            absent.append(f"{name} (torch.onnx from opset {opset})")
        elif lowest > max(opset, LOWEST_EXPORT_OPSET):
            late.append(f"{name} (torch.onnx from opset {opset}, onnxport only from {lowest})")
    extra = sorted(op for op in table if op.startswith("aten::") and not in_torch_onnx(reference, op))
    distinct = [op for op in extra if not (op.endswith("_") and op[:-1] in extra)]

    covered = len(reference) - len(absent) - len(late)
    print(f"reference list: {len(reference)} torch.onnx 1.13 ops ({options.list})")
    print(f"onnxport: {len(table)} ops registered; {covered} of the {len(reference)} listed ops mapped at every "
          f"opset from the listed one to {HIGHEST_EXPORT_OPSET}")
    print(f"aten ops beyond torch.onnx 1.13: {len(distinct)} without in-place forms, {len(extra)} with them "
          f"(at least {options.min_extra} required)")
    print("  " + " ".join(distinct))
    problems = []
    if absent:
        problems.append(f"{len(absent)} listed ops are not mapped at all:\n    " + "\n    ".join(absent))
    if late:
        problems.append(f"{len(late)} listed ops are mapped only from a later opset than torch.onnx maps them:\n    "
                        + "\n    ".join(late))
    if len(distinct) < options.min_extra:
        problems.append(f"only {len(distinct)} aten ops beyond torch.onnx 1.13, {options.min_extra} required")
    for p in problems:
        print("FAIL: " + p)
    if problems:
        print("Add the mappings to the op pack of the op's family (plugins/<family>) with a row in "
              "tests/ops/cases_<family>.py; see docs/operators.md for what each pack maps.")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
