#!/usr/bin/env python3
"""Script mode and dynamic axes, end to end (issue 4).

For every case in FIXTURES/cases.json (tests/script/make_script_models.py): export NAME.pt with
the onnxport CLI from input set 0 (--mode script for scripted models, the default trace for
traced ones, --dynamic-axes as the case says), check the ONNX graph holds the control-flow ops
the case expects (at any sub-graph depth) and that dynamic axes are dim_params, then run
EVERY input set in ONNX Runtime (one node process) against the TorchScript module's outputs.
Cases with expect_error must fail with that message and leave no file. Scripted cases are
also exported with --mode trace (which must warn about the data-dependent control flow it
fixes) and --mode auto (which must choose script and say why).

usage: run_script_tests.py --onnxport BIN --node NODE --fixtures DIR --work DIR [--only NAME]
"""
import argparse
import json
import os
import subprocess
import sys

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_COMPARE = os.path.join(HERE, "..", "integration", "ort_compare.js")


def all_op_types(graph):
    ops = set()
    for node in graph.node:
        ops.add(node.op_type)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                ops |= all_op_types(attr.g)
    return ops


def export(args, case, mode, extra=()):
    manifest = json.load(open(os.path.join(args.fixtures, case["manifests"][0])))
    out = os.path.join(args.work, f"{case['name']}.{mode}.onnx")
    cmd = [args.onnxport, "export", os.path.join(args.fixtures, case["model"]), "-o", out, "--mode", mode]
    for e in manifest["inputs"]:
        cmd += ["--input", f"{e['name']}={os.path.join(args.fixtures, e['file'])}"]
    for name, axes in case["dynamic"].items():
        cmd += ["--dynamic-axes", name + ":" + ",".join(f"{a}={d}" for a, d in axes.items())]
    cmd += list(extra)
    if os.path.exists(out):
        os.remove(out)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc, out, cmd


def check_case(args, case, cases_for_ort, failures):
    name = case["name"]
    mode = case["mode"]
    proc, out, cmd = export(args, case, mode, ["--verbose"] if case.get("expect_error") is None else [])
    if case.get("expect_error"):
        if proc.returncode == 0 or case["expect_error"] not in proc.stderr or os.path.exists(out):
            failures.append(f"{name}: expected a failure mentioning '{case['expect_error']}' and no file; "
                            f"got rc={proc.returncode}, file={os.path.exists(out)}, stderr: {proc.stderr.strip()}")
        else:
            print(f"{name}: refused as expected: {proc.stderr.strip().splitlines()[0]}")
        return
    if proc.returncode != 0:
        failures.append(f"{name}: export failed: {' '.join(cmd)}\n{proc.stderr}")
        return
    model = onnx.load(out)
    ops = all_op_types(model.graph)
    missing = [op for op in case["expect_ops"] if op not in ops]
    if missing:
        failures.append(f"{name}: the exported graph lacks {missing} (has {sorted(ops)})")
    for name_, axes in case["dynamic"].items():
        graph_inputs = {i.name: i for i in model.graph.input}
        if name_ not in graph_inputs:
            failures.append(f"{name}: no graph input '{name_}'")
            continue
        dims = graph_inputs[name_].type.tensor_type.shape.dim
        for axis, dim_name in axes.items():
            if dims[int(axis)].dim_param != dim_name:
                failures.append(f"{name}: input {name_} axis {axis} is not dim_param '{dim_name}'")
        if "dynamic axes verified" not in proc.stdout:
            failures.append(f"{name}: the export did not report the dynamic-axes check")
    for m in case["manifests"]:
        cases_for_ort.append({"onnx": out, "manifest": os.path.join(args.fixtures, m)})
    print(f"{name}: exported in {mode} mode, {len(model.graph.node)} top-level nodes, ops {sorted(ops & {'If', 'Loop', 'ConcatFromSequence', 'SequenceInsert'})}")
    if mode == "script":
        traced, _, _ = export(args, case, "trace")
        has_cf = {"If", "Loop"} & ops
        data_dependent = case["data_dependent"]
        # A warning when the trace succeeds, the same text in the error when it cannot trace.
        if data_dependent and "depends on tensor values" not in traced.stderr:
            failures.append(f"{name}: --mode trace did not warn about data-dependent control flow: {traced.stderr}")
        auto, auto_out, _ = export(args, case, "auto", ["--verbose"])
        if auto.returncode != 0:
            failures.append(f"{name}: --mode auto failed: {auto.stderr}")
        elif has_cf and (data_dependent or case["dynamic"]) and "chose script" not in auto.stdout:
            failures.append(f"{name}: --mode auto did not choose script: {auto.stdout[:300]}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--onnxport", required=True)
    p.add_argument("--node", default="node")
    p.add_argument("--fixtures", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--only", action="append")
    args = p.parse_args()
    args.fixtures, args.work = os.path.abspath(args.fixtures), os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)
    cases = json.load(open(os.path.join(args.fixtures, "cases.json")))
    if args.only:
        cases = [c for c in cases if c["name"] in args.only]
    failures, ort_cases = [], []
    for case in cases:
        check_case(args, case, ort_cases, failures)
    cases_file = os.path.join(args.work, "ort_cases.json")
    with open(cases_file, "w") as f:
        json.dump(ort_cases, f, indent=1)
    if ort_cases:
        ort = subprocess.run([args.node, ORT_COMPARE, "--cases", cases_file], capture_output=True, text=True)
        print(ort.stdout)
        if ort.returncode != 0:
            failures.append("ONNX Runtime comparison failed:\n" + ort.stdout[-4000:] + ort.stderr[-2000:])
    if failures:
        print("\nFAILED:\n" + "\n".join(failures))
        return 1
    print(f"all {len(cases)} cases passed ({len(ort_cases)} input sets run in ONNX Runtime)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
