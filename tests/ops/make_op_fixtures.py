#!/usr/bin/python3
"""Build the fixtures of the per-operator tests (the table op_cases.py loads) in one process.

For every case ID this writes into OUT_DIR/cases:
  ID.pt           the traced or scripted module (ID.ir: the TorchScript IR text, for mode "ir")
  ID.in<k>.npy    the example inputs
  ID.out<k>.npy   the eager PyTorch outputs, flattened depth-first
  ID.json         the manifest (tests/fixtures/make_models.py's format plus the case's ops/mode)
and then OUT_DIR/index.json, the list onnxport_export_cases reads: per case its manifest, the
declared ops, the opsets, the expected failures and tolerances (written last: complete).

Complex tensors are stored as their real pairs (torch.view_as_real: float[..., 2]), the form the
exported model takes and gives them in; their manifest entries say "complex": true, and
onnxport_export_cases turns such inputs back into complex tensors for the TorchScript model.
A declared op "aten::X[complex]" (the op's entry for complex values) must appear as aten::X.

Every declared op must appear in the case's TorchScript graph (a row that claims an op it does
not contain is an error here), and the traced/scripted module must reproduce the eager outputs.

Usage: /usr/bin/python3 make_op_fixtures.py OUT_DIR [--force] [--list]
A case whose files are newer than this script and the table's files is not rebuilt.
"""
import argparse
import json
import os
import sys
import time
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import op_cases  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
from npy_io import save_arrays, write_atomically  # noqa: E402

SCRIPTS = [os.path.abspath(__file__), os.path.join(HERE, "op_cases.py"), os.path.join(HERE, "op_framework.py"),
           os.path.join(HERE, "..", "fixtures", "npy_io.py")] + sorted(
    os.path.join(HERE, f) for f in os.listdir(HERE) if f.startswith("cases_") and f.endswith(".py"))


class CaseError(Exception):
    pass


def flatten(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flatten(v)]
    raise CaseError(f"unsupported output of type {type(value).__name__} (return tensors, tuples or lists)")


def graph_kinds(graph):
    """Every node kind, and every kind.overload ("aten::add.t") a node's schema names."""
    kinds = set()
    for node in graph.nodes():
        kinds.add(node.kind())
        schema = node.schema()
        if schema != "(no schema)":
            kinds.add(schema.split("(", 1)[0])
        for block in node.blocks():
            kinds |= graph_kinds(block)
    return kinds


def fresh(inputs):
    """Copies of the inputs: in-place ops in a model must not change the saved example values."""
    return [t.clone() for t in inputs]


def same(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.is_floating_point() or a.is_complex():
        return torch.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
    return torch.equal(a, b)


def graph_op(op):
    """The node kind a declared op stands for: "aten::fft_rfft[complex]" is aten::fft_rfft."""
    return op[:-len("[complex]")] if op.endswith("[complex]") else op


def save_real_arrays(cases_dir, stem, tensors):
    """save_arrays, complex tensors as their real pairs (entries marked "complex": true)."""
    real = [torch.view_as_real(t.resolve_conj()) if t.is_complex() else t for t in tensors]
    entries = save_arrays(cases_dir, stem, real)
    for entry, t in zip(entries, tensors):
        if t.is_complex():
            entry["complex"] = True
    return entries


def run_ir(c, inputs):
    """The IR graph as a callable, its node kinds and its text (with the case's inputs)."""
    graph = torch._C.parse_ir(c.ir)
    fn = torch._C._create_function_from_graph("forward", graph)
    with torch.no_grad():
        out = fn(*fresh(inputs))
    return out, graph_kinds(graph)


def trace_or_script(c, inputs, path):
    """Saves the traced/scripted module to `path`; returns its eager outputs and the node kinds
    of the graph as reloaded (saving and loading may drop nodes the in-memory graph had)."""
    model = c.build()
    model.train(c.training)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = model(*fresh(inputs))
        if c.mode == "script":
            saved = torch.jit.script(model)
        else:
            saved = torch.jit.trace(model, tuple(fresh(inputs)), check_trace=False)
        saved.save(path)
        loaded = torch.jit.load(path)
        replayed = loaded(*fresh(inputs))
    expected_flat, replayed_flat = flatten(expected), flatten(replayed)
    if len(expected_flat) != len(replayed_flat) or not all(map(same, expected_flat, replayed_flat)):
        raise CaseError(f"the {c.mode}d module, saved and reloaded, does not reproduce the eager outputs")
    return expected, graph_kinds(loaded.inlined_graph)


def build_case(c, cases_dir):
    manifest_path = os.path.join(cases_dir, f"{c.id}.json")
    if os.path.exists(manifest_path):
        os.remove(manifest_path)
    torch.manual_seed(c.seed)
    gen = torch.Generator().manual_seed(c.seed)
    inputs = [spec.make(gen) for spec in c.inputs]
    if c.mode == "ir":
        expected, kinds = run_ir(c, inputs)
        model_file = f"{c.id}.ir"
        with open(os.path.join(cases_dir, model_file), "w") as f:
            f.write(c.ir.strip() + "\n")
    else:
        model_file = f"{c.id}.pt"
        expected, kinds = trace_or_script(c, inputs, os.path.join(cases_dir, model_file))
    missing = [op for op in c.ops if graph_op(op) not in kinds]
    if missing:
        raise CaseError(f"declares {', '.join(missing)} but its {c.mode} graph has only "
                        f"{', '.join(sorted(k for k in kinds if k != 'prim::Constant'))}")
    outputs = flatten(expected)
    for t in outputs:
        if (t.is_floating_point() or t.is_complex()) and not torch.isfinite(t).all():
            raise CaseError("eager outputs contain inf/nan; change the input range")
    input_entries = save_real_arrays(cases_dir, f"{c.id}.in", inputs)
    for k, entry in enumerate(input_entries):
        entry["name"] = f"input{k}"
    manifest = {
        "model": model_file,
        "seed": c.seed,
        "args": list(range(len(inputs))),
        "inputs": input_entries,
        "outputs": save_real_arrays(cases_dir, f"{c.id}.out", outputs),
        "case": c.id,
        "mode": c.mode,
        "ops": list(c.ops),
    }
    write_atomically(manifest_path, json.dumps(manifest, indent=1) + "\n")


def index_entry(c):
    entry = {"id": c.id, "manifest": f"cases/{c.id}.json", "mode": c.mode, "ops": list(c.ops),
             "opsets": list(c.opsets), "expect_fail": {str(o): text for o, text in c.fails.items()},
             "training": c.training, "via": c.via,
             "dynamic_axes": {f"input{k}": axes for k, axes in c.dynamic.items()},
             "dynamic_check": c.dynamic_check}
    if c.rtol is not None:
        entry["rtol"] = c.rtol
    if c.atol is not None:
        entry["atol"] = c.atol
    if c.ort_optimization is not None:
        entry["ort_optimization"] = c.ort_optimization
    return entry


def is_up_to_date(c, cases_dir, script_time):
    manifest_path = os.path.join(cases_dir, f"{c.id}.json")
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
        files = [manifest["model"]] + [e["file"] for e in manifest["inputs"] + manifest["outputs"]]
    except (OSError, ValueError, KeyError):
        return False
    paths = [manifest_path] + [os.path.join(cases_dir, f) for f in files]
    return all(os.path.exists(p) and os.path.getmtime(p) > script_time for p in paths)


def check_table(cases):
    seen = set()
    for c in cases:
        if c.id in seen:
            raise CaseError(f"case id {c.id} is used twice in the cases_*.py files")
        seen.add(c.id)
        for k, axes in c.dynamic.items():
            if not 0 <= k < len(c.inputs) or any(not 0 <= a < len(c.inputs[k].shape) for a in axes):
                raise CaseError(f"case {c.id}: dynamic axes {axes} of input {k} do not exist")
        if not c.opsets:
            raise CaseError(f"case {c.id} has no opsets")
        allowed = op_cases.OPSETS + op_cases.EXPLICIT_OPSETS + op_cases.NEW_OPSETS
        bad = [o for o in c.opsets if o not in allowed]
        if bad:
            raise CaseError(f"case {c.id}: opsets {bad} are not among {allowed}")


def main():
    # The expected outputs are the math of each model, not one CPU library's take on it: libtorch
    # 2.6's oneDNN LSTM in float32 under no_grad is 0.23 off aten::lstm's own math (and off its
    # float64) on the 2-core AMD EPYC, while with oneDNN off it is 6e-8 away. Its slower kernels
    # compute the same ops (the traced and scripted graphs do not change).
    torch.backends.mkldnn.enabled = False
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", help="directory for cases/ and index.json")
    parser.add_argument("--force", action="store_true", help="rebuild every case")
    parser.add_argument("--list", action="store_true", help="print the case ids and their ops, build nothing")
    options = parser.parse_args()

    cases = op_cases.CASES
    check_table(cases)
    if options.list:
        for c in cases:
            print(f"{c.id:36} {c.mode:6} {' '.join(map(str, c.opsets)):20} {' '.join(c.ops)}")
        return 0
    cases_dir = os.path.join(options.out_dir, "cases")
    os.makedirs(cases_dir, exist_ok=True)
    index_path = os.path.join(options.out_dir, "index.json")
    if os.path.exists(index_path):
        os.remove(index_path)
    torch.set_num_threads(1)
    script_time = max(os.path.getmtime(p) for p in SCRIPTS)
    start = time.perf_counter()
    built, failed = 0, []
    for c in cases:
        if not options.force and is_up_to_date(c, cases_dir, script_time):
            continue
        try:
            build_case(c, cases_dir)
            built += 1
        except Exception as e:  # report every broken row, not just the first
            failed.append(f"case {c.id}: {type(e).__name__}: {e}".splitlines()[0])
    for line in failed:
        print(line)
    if failed:
        print(f"{len(failed)} of {len(cases)} cases could not be built; fix their rows in cases_*.py")
        return 1
    index = {"opsets": list(op_cases.OPSETS), "rtol": op_cases.DEFAULT_RTOL, "atol": op_cases.DEFAULT_ATOL,
             "cases": [index_entry(c) for c in cases]}
    write_atomically(index_path, json.dumps(index, indent=1) + "\n")
    exports = sum(len(c.opsets) for c in cases)
    print(f"{len(cases)} cases ({built} rebuilt, {len(cases) - built} up to date), {exports} exports "
          f"listed in {index_path}, {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
