#!/usr/bin/python3
"""PyTorch's own TorchScript files of older releases (test/jit/fixtures, test/cpp/jit and
test/quantization/serialized of Debian's pytorch source package, fetched at test time by
tests/support/fetch_pytorch_sources.sh), exported by this build's onnxport and judged in ONNX Runtime.

The files are of file formats 2-4, written by releases whose operator versions were 2-10; where
an operator's meaning changed since (an integer `/` truncated until operator version 4, `full` with
an integer fill made float until version 5, `linspace`/`logspace` without steps took 100 until 8/9),
libtorch's upgraders rewrite the file's graph at load, and the export must compute what the file's
own release computed. The expected values are therefore written here from each release's
documented behaviour with numpy, not taken from the torch that runs the test; that torch's run of the
loaded file is checked against them too (a disagreement names the side). The quantized models carry
the outputs their PyTorch recorded (NAME.expected.pt).

A row is a file, its inputs and what it must give, or the one-line refusal it must end in. Rows in
versioned_files_expected_failures.txt must fail (a fix fails the test until its line goes).

Usage: versioned_files.py SOURCES_DIR [--only ROW]... [--list]
Environment (set by ctest): ONNXPORT, ONNXPORT_ORT_COMPARE, ONNXPORT_NODE, ONNXPORT_TEST_TMP.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import warnings
from dataclasses import dataclass, field
from typing import Callable, List, Optional

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "support"))
from cli_test import path, run  # noqa: E402

EXPECTED_FAILURES = os.path.join(HERE, "versioned_files_expected_failures.txt")

A_INT = np.array([7, -7, 9, -9, 5, 12], dtype=np.int64)
B_INT = np.array([2, 2, -4, 4, 3, 5], dtype=np.int64)
A_FLOAT = np.array([7.5, -7.0, 9.0, -9.25, 5.0, 12.0], dtype=np.float32)
B_FLOAT = np.array([2.0, 2.5, -4.0, 4.0, 3.0, 0.5], dtype=np.float32)
X_FLOAT = np.linspace(-3.0, 3.0, 12, dtype=np.float32).reshape(3, 4)


def trunc_div(a, b):
    """Integer division rounding toward zero: what `/` on two integer tensors did until operator version 4."""
    q = np.abs(a) // np.abs(b)
    return (q * np.sign(a) * np.sign(b)).astype(np.result_type(a, b))


def true_div(a, b):
    """True division in float32 unless an operand is wider, as PyTorch promotes."""
    out = np.true_divide(a, b)
    wide = any(isinstance(v, np.ndarray) and v.dtype == np.float64 for v in (a, b))
    return out if wide else out.astype(np.float32)


def old_div(a, b):
    """`a / b` of operator versions 0-3: truncating when both are integers, true division otherwise."""
    integral = all(np.issubdtype(np.asarray(v).dtype, np.integer) or isinstance(v, int) for v in (a, b))
    return trunc_div(np.asarray(a), np.asarray(b)) if integral else true_div(a, b)


def gelu(x):
    return (0.5 * x * (1.0 + np.vectorize(math.erf)(x.astype(np.float64) / math.sqrt(2.0)))).astype(np.float32)


@dataclass
class Row:
    """One export of one file. inputs: (name, value) in forward's order, a numpy array (a tensor input)
    or an int / float (a number argument, given as NAME:int=V / NAME:float=V). expected(inputs) gives
    the outputs; a row with `refused` instead must fail in one line holding each of its strings."""
    name: str
    file: str
    inputs: list = field(default_factory=list)
    expected: Optional[Callable] = None
    refused: List[str] = field(default_factory=list)
    export_args: List[str] = field(default_factory=list)
    rtol: float = 1e-5
    atol: float = 1e-6
    torch_check: bool = True  # run the file in the installed torch and compare with `expected`


FIXTURES = "test/jit/fixtures"
UPGRADERS = "test/cpp/jit/upgrader_models"
LITE = "test/cpp/lite_interpreter_runtime"
QUANTIZED = "test/quantization/serialized"


def div_rows():
    rows = []
    # The same scripted modules saved as operator version 2 (.ptl, by the lite interpreter's saver) and 3.
    for version, folder, ext in ((2, UPGRADERS, "ptl"), (3, FIXTURES, "pt")):
        f = lambda stem: f"{folder}/test_versioned_{stem}_v{version}.{ext}"  # noqa: E731
        v = f"v{version}"
        three = lambda a, b: [old_div(a, b)] * 3  # noqa: E731
        rows += [
            Row(f"div_tensor_{v}.int", f("div_tensor"), [("a", A_INT), ("b", B_INT)], three),
            Row(f"div_tensor_{v}.float", f("div_tensor"), [("a", A_FLOAT), ("b", B_FLOAT)], three),
            Row(f"div_tensor_{v}.int_float", f("div_tensor"), [("a", A_INT), ("b", B_FLOAT)], three),
            Row(f"div_tensor_inplace_{v}.int", f("div_tensor_inplace"), [("a", A_INT), ("b", B_INT)],
                lambda a, b: [old_div(a, b)]),
            Row(f"div_tensor_inplace_{v}.float", f("div_tensor_inplace"), [("a", A_FLOAT), ("b", B_FLOAT)],
                lambda a, b: [old_div(a, b)]),
            Row(f"div_tensor_out_{v}.int", f("div_tensor_out"),
                [("a", A_INT), ("b", B_INT), ("out", np.zeros(6, np.int64))], lambda a, b, out: [old_div(a, b)]),
            Row(f"div_tensor_out_{v}.float_out", f("div_tensor_out"),
                [("a", A_INT), ("b", B_INT), ("out", np.zeros(6, np.float32))],
                lambda a, b, out: [true_div(a, b)]),
            Row(f"div_scalar_float_{v}.int", f("div_scalar_float"), [("a", A_INT), ("b", 2.5)],
                lambda a, b: [true_div(a, b)]),
            Row(f"div_scalar_float_{v}.float", f("div_scalar_float"), [("a", A_FLOAT), ("b", -4.0)],
                lambda a, b: [true_div(a, b)]),
            Row(f"div_scalar_int_{v}.int", f("div_scalar_int"), [("a", A_INT), ("b", -4)],
                lambda a, b: [old_div(a, b)]),
            Row(f"div_scalar_int_{v}.float", f("div_scalar_int"), [("a", A_FLOAT), ("b", 3)],
                lambda a, b: [old_div(a, b)]),
            Row(f"div_scalar_inplace_float_{v}", f("div_scalar_inplace_float"), [("a", A_FLOAT), ("b", 2.5)],
                lambda a, b: [true_div(a, b)]),
            Row(f"div_scalar_inplace_int_{v}.int", f("div_scalar_inplace_int"), [("a", A_INT), ("b", 4)],
                lambda a, b: [old_div(a, b)]),
            Row(f"div_scalar_inplace_int_{v}.float", f("div_scalar_inplace_int"), [("a", A_FLOAT), ("b", 4)],
                lambda a, b: [old_div(a, b)]),
            # b * reciprocal(a): no division in the graph, so nothing to upgrade.
            Row(f"div_scalar_reciprocal_float_{v}", f("div_scalar_reciprocal_float"), [("a", A_FLOAT), ("b", 2.5)],
                lambda a, b: [(np.float32(1) / a * np.float32(b)).astype(np.float32)]),
            Row(f"div_scalar_reciprocal_int_{v}", f("div_scalar_reciprocal_int"), [("a", A_INT), ("b", 3)],
                lambda a, b: [(np.float32(1) / a.astype(np.float32) * np.float32(b)).astype(np.float32)]),
            # Division of two numbers was true division in every release; a float result is a 0-d
            # tensor of the default dtype in the ONNX file, as torch.onnx makes it.
            Row(f"div_scalar_scalar_{v}", f("div_scalar_scalar"), [("a", 5.5), ("b", 2), ("c", 2.5), ("d", -3)],
                lambda a, b, c, d: [np.float32(q) for q in (a / b, a / c, b / c, b / d)], torch_check=False),
        ]
    # Operator version 7: since version 4 `/` is true division on integers too.
    modern = f"{FIXTURES}/test_versioned_div_tensor_example_v7.ptl"
    rows += [
        Row("div_tensor_example_v7.int", modern, [("a", A_INT), ("b", B_INT)], lambda a, b: [true_div(a, b)] * 3),
        Row("div_tensor_example_v7.float", modern, [("a", A_FLOAT), ("b", B_FLOAT)], lambda a, b: [true_div(a, b)] * 3),
    ]
    return rows


def creation_rows():
    full = f"{FIXTURES}/test_versioned_full_integer_value_v4.pt"
    preserved = f"{FIXTURES}/test_versioned_full_preserved_v4.pt"
    linspace = lambda a, b, n: np.linspace(a, b, n, dtype=np.float64).astype(np.float32)  # noqa: E731
    logspace = lambda a, b, n: np.power(10.0, np.linspace(a, b, n)).astype(np.float32)  # noqa: E731
    return [
        # Until operator version 5 a `full` given an integer fill and no dtype made a float tensor.
        Row("full_integer_value_v4", full, [("int_fill", 3)],
            lambda v: [np.full((2, 2), v, np.float32), np.ones((2, 2), np.float32)]),
        Row("full_preserved_v4", preserved, [("float_fill", 2.5)],
            lambda v: [np.ones((2, 2), np.float32), np.full((2, 2), v, np.float32), np.full((2, 2), int(v), np.int64),
                       np.full((2, 2), int(v), np.int64), np.full((2, 2), v, np.float16)]),
        # Until operator version 8 (linspace) and 9 (logspace) a missing steps meant 100.
        Row("linspace_v7", f"{FIXTURES}/test_versioned_linspace_v7.ptl", [("a", 1.0), ("b", 9.0)],
            lambda a, b: [linspace(a, b, 5), linspace(a, b, 100)]),
        Row("linspace_out_v7", f"{FIXTURES}/test_versioned_linspace_out_v7.ptl",
            [("a", -2.0), ("b", 3.0), ("out", np.zeros(100, np.float32))], lambda a, b, out: [linspace(a, b, 100)]),
        Row("logspace_v8", f"{FIXTURES}/test_versioned_logspace_v8.ptl", [("a", 0.0), ("b", 2.0)],
            lambda a, b: [logspace(a, b, 5), logspace(a, b, 100)], rtol=1e-5),
        Row("logspace_out_v8", f"{FIXTURES}/test_versioned_logspace_out_v8.ptl",
            [("a", -1.0), ("b", 1.0), ("out", np.zeros(100, np.float32))], lambda a, b, out: [logspace(a, b, 100)]),
        # gelu gained `approximate` in operator version 10; older files mean the exact erf form.
        Row("gelu_v9", f"{FIXTURES}/test_versioned_gelu_v9.ptl", [("x", X_FLOAT)], lambda x: [gelu(x)]),
        Row("gelu_out_v9", f"{FIXTURES}/test_versioned_gelu_out_v9.ptl", [("x", X_FLOAT)], lambda x: [gelu(x)]),
    ]


def module_rows():
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    y = np.full((2, 3), 0.5, np.float32)
    rows = [Row(f"script_module_v{k}", f"test/cpp/jit/script_module_v{k}.ptl", [("y", 4)],
                None) for k in (4, 5, 6)]  # c0 + (1 + y): c0 is the file's own constant, read by torch
    rows += [
        Row("lite_light_model", f"{LITE}/light_model.ptl", [], lambda: [np.array(1, np.int64)], torch_check=False),
        Row("lite_sequence", f"{LITE}/sequence.ptl", [("x", x)], lambda x: [x + 3]),
        Row("lite_to_be_profiled", f"{LITE}/to_be_profiled_module.ptl", [("x", x), ("y", y)],
            lambda x, y: [x * 3 + (y - 2) + (x + 2)]),
        # Modules lowered to a backend hold a torch custom class this libtorch does not register.
        Row("lite_delegate", f"{LITE}/delegate_test.ptl", [("x", x), ("h", y)],
            refused=["delegate_test.ptl", "backend_with_compiler_demo"]),
        Row("lite_delegated_submodule", f"{LITE}/delegated_submodule_with_debug_info.ptl", [("x", x), ("y", y)],
            refused=["delegated_submodule_with_debug_info.ptl", "backend_with_compiler_demo"]),
        # A test-only operator of libtorch that no exporter maps.
        Row("subcmul_v2", f"{FIXTURES}/_test_serialization_subcmul_v2.pt", [("a", x), ("b", y), ("alpha", 2.0)],
            refused=["_test_serialization_subcmul", "_test_serialization_subcmul_v2.pt"]),
        # Random integers (operator version 10): no exporter maps aten::random (torch.onnx 1.13 and
        # 2.6 have no symbolic for it), and no ONNX random op draws PyTorch's numbers to compare.
        *[Row(f"random{suffix}_v10", f"{FIXTURES}/test_versioned_random{suffix}_v10.ptl", [("x", x)],
              refused=[op, "has no mapping", f"test_versioned_random{suffix}_v10.ptl"])
          for suffix, op in (("", "aten::random_.from"), ("_func", "aten::random.from"),
                             ("_out", "aten::random.from_out"))],
    ]
    return rows


def quantized_rows():
    """Graph-mode and dynamic quantized models of older releases, with float inputs and the outputs
    their PyTorch recorded. Those taking a quantized tensor as input are left out: an ONNX input
    cannot carry one."""
    rows = []
    for stem in ("conv2d_graph", "conv2d_graph_v2", "conv2d_graph_v3", "conv2d_nobias_graph",
                 "conv2d_nobias_graph_v2", "conv2d_nobias_graph_v3", "linear_dynamic_qint8",
                 "linear_dynamic_float16", "lstm"):
        for how in ("scripted", "traced"):
            base = f"{QUANTIZED}/TestSerialization.test_{stem}"
            rows.append(Row(f"quantized_{stem}.{how}", f"{base}.{how}.pt", [("input", f"{base}.input.pt")],
                            expected=f"{base}.expected.pt", rtol=1e-3, atol=2e-2, torch_check=False))
    return rows


def all_rows():
    return div_rows() + creation_rows() + module_rows() + quantized_rows()


# ---------------------------------------------------------------- running a row

def load_torch_tensors(sources, rel):
    import torch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = torch.load(os.path.join(sources, rel))
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    return [(v.dequantize() if v.is_quantized else v).numpy() for v in values]


def resolve_inputs(row, sources):
    """The row's inputs with .pt references read: [(name, numpy array or number)]."""
    resolved = []
    for name, value in row.inputs:
        if isinstance(value, str):
            value = load_torch_tensors(sources, value)[0]
        resolved.append((name, value))
    return resolved


def input_specs(row, inputs, work):
    """The --input arguments, and the .npy files written for the tensor inputs (the graph's inputs,
    in order: numbers are folded into the graph)."""
    args, files = [], []
    for k, (name, value) in enumerate(inputs):
        if isinstance(value, np.ndarray):
            files.append(os.path.join(work, f"{row.name}.in{k}.npy"))
            np.save(files[-1], value)
            args += ["--input", f"{name}={files[-1]}"]
        else:
            args += ["--input", f"{name}:{'int' if isinstance(value, int) else 'float'}={value!r}"]
    return args, files


def torch_outputs(sources, row, inputs):
    """The file run by the installed torch (its upgraders applied at load)."""
    import torch
    module = torch.jit.load(os.path.join(sources, row.file))
    args = [torch.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v for _, v in inputs]
    with torch.no_grad():
        out = module(*args)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    return [o.numpy() if isinstance(o, torch.Tensor) else np.array(o) for o in outs]


def expected_outputs(sources, row, inputs):
    if isinstance(row.expected, str):
        return load_torch_tensors(sources, row.expected)
    if row.expected is None:
        return torch_outputs(sources, row, inputs)
    return [np.asarray(o) for o in row.expected(*[v for _, v in inputs])]


def check_torch_agrees(sources, row, inputs, expected):
    """The installed torch runs the file as its release did (else the expectation or libtorch's
    upgraders are wrong, and the message says which was compared)."""
    try:
        got = torch_outputs(sources, row, inputs)
    except Exception as e:  # noqa: BLE001 -- any failure of the reference run is reported, not raised
        return f"the installed torch cannot run the file: {str(e).splitlines()[0]}"
    for k, (g, e) in enumerate(zip(got, expected)):
        if g.dtype != e.dtype or g.shape != e.shape or not np.allclose(g.astype(np.float64), e.astype(np.float64),
                                                                      rtol=row.rtol, atol=row.atol):
            return (f"the installed torch gives output {k} = {g.dtype}{list(g.shape)} {g.ravel()[:6]}, "
                    f"the file's release {e.dtype}{list(e.shape)} {e.ravel()[:6]}")
    return None


def export_row(row, sources, work):
    """Exports the row; (ort_compare case or None, failure message or None)."""
    onnx_file = os.path.join(work, f"{row.name}.onnx")
    if os.path.exists(onnx_file):
        os.remove(onnx_file)
    inputs = resolve_inputs(row, sources)
    specs, input_files = input_specs(row, inputs, work)
    r = run("export", os.path.join(sources, row.file), "-o", onnx_file, *specs,
            *row.export_args, ok=False)
    message = (r.stderr or r.stdout).strip()
    if row.refused:
        if r.returncode == 0:
            return None, "exported, but it should be refused"
        lines = message.splitlines()
        missing = [s for s in row.refused if s not in message]
        if len(lines) != 1 or missing or os.path.exists(onnx_file):
            return None, (f"the refusal should be one line naming {', '.join(row.refused)} and leave no file; "
                          f"got {len(lines)} line(s): {message[:400]}")
        return None, None
    if r.returncode != 0:
        return None, f"onnxport export exited {r.returncode}: {message}"
    expected = expected_outputs(sources, row, inputs)
    if row.torch_check and row.expected is not None:
        disagreement = check_torch_agrees(sources, row, inputs, expected)
        if disagreement:
            return None, disagreement
    manifest = {
        "inputs": [{"file": os.path.basename(f)} for f in input_files],
        "outputs": [{"file": os.path.basename(f)} for f in save_all(work, f"{row.name}.out", expected)],
    }
    manifest_file = os.path.join(work, f"{row.name}.json")
    with open(manifest_file, "w") as f:
        json.dump(manifest, f)
    return {"name": row.name, "onnx": onnx_file, "manifest": manifest_file, "rtol": row.rtol, "atol": row.atol}, None


def save_all(work, stem, arrays):
    files = []
    for k, a in enumerate(arrays):
        files.append(os.path.join(work, f"{stem}{k}.npy"))
        np.save(files[-1], np.asarray(a))
    return files


def read_expected_failures():
    with open(EXPECTED_FAILURES) as f:
        return {line.split("#")[0].strip() for line in f if line.split("#")[0].strip()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sources", help="the directory fetch_pytorch_sources.sh extracted into")
    parser.add_argument("--only", action="append", default=[], metavar="ROW")
    parser.add_argument("--list", action="store_true")
    options = parser.parse_args()

    rows = [r for r in all_rows() if not options.only or r.name in options.only]
    if options.list:
        print("\n".join(f"{r.name}  {r.file}" for r in rows))
        return 0
    work = path("versioned_files")
    os.makedirs(work, exist_ok=True)
    cases, failed = [], {}
    for row in rows:
        case, failure = export_row(row, options.sources, work)
        if failure:
            failed[row.name] = failure
        elif case:
            cases.append(case)
    if cases:
        cases_file = os.path.join(work, "cases.json")
        with open(cases_file, "w") as f:
            json.dump(cases, f, indent=1)
        compare = subprocess.run([os.environ.get("ONNXPORT_NODE", "node"), os.environ["ONNXPORT_ORT_COMPARE"],
                                  "--cases", cases_file], capture_output=True, text=True)
        for line in compare.stdout.splitlines():
            if line.startswith("FAIL "):
                failed[line.split()[1].rstrip(":")] = "ONNX Runtime: " + line
        if compare.returncode not in (0, 1):
            failed["ort_compare.js"] = compare.stdout + compare.stderr

    expected = read_expected_failures()
    for name, failure in sorted(failed.items()):
        print(f"{'XFAIL' if name in expected else 'FAIL'} {name}: {failure}")
    unexpected = sorted(set(failed) - expected)
    fixed = sorted(n for n in expected - set(failed) if n in {r.name for r in rows})
    for name in fixed:
        print(f"FIXED {name}: passes now; remove its line from {os.path.basename(EXPECTED_FAILURES)}")
    passed = len(rows) - len(failed)
    print(f"versioned files: {passed} of {len(rows)} rows passed ({sum(bool(r.refused) for r in rows)} of them "
          f"refusals); {len(failed)} failed, {len(set(failed) & expected)} of them expected")
    return 1 if unexpected or fixed else 0


if __name__ == "__main__":
    sys.exit(main())
