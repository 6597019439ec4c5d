"""The per-operator test table: one row per case, every registered op mapping exercised.

A row (see `case`) names the TorchScript ops it exercises, a tiny model, its inputs and the
opsets to export at. tests/ops/make_op_fixtures.py turns every row into a .pt (or .ir) file,
input and expected-output .npy files and a manifest; onnxport_export_cases exports each case at
each opset in one process and checks that every declared op really went through its registered
symbolic; ONNX Runtime then compares the outputs with eager PyTorch. ops.coverage fails for any
op registered by a built-in pack that no row declares.

Models come in three modes:
  trace   (default) `fn(*inputs)` or the module built by `module()`, traced with torch.jit.trace
  script  the module built by `module()` (or `fn` wrapped in Script1..Script3), torch.jit.script;
          for ops that only scripted graphs contain (aten::len, aten::__getitem__, aten::dim ...)
  ir      a TorchScript IR graph (`ir=`), for ops that TorchScript's alias normalization rewrites
          whenever Python code is traced, scripted or loaded (aten::divide -> aten::div ...):
          the mapping is still registered (graphs built in C++ keep them), so it is tested
          through a graph built directly from IR in the export process.
Ops are written "aten::relu" or just "relu" (the aten:: namespace is implied); "aten::slice.t"
names one overload (a node matches when its schema is that overload).

Every traced row whose `module` builds an nn.Module of its own (not one of the table's lambda
wrappers Fn/With, which TorchScript cannot compile) also runs scripted, as `<id>__scripted`
(op_framework.add_script_twins; `no_script_twin="reason"` opts a row out).

The framework (`case`, input specs, wrappers) is op_framework.py; the rows are in
cases_<family>.py, each importing by name what it uses, loaded here in FAMILIES order. A new
family file must be added to FAMILIES (loading fails otherwise, so no rows are skipped).

Inputs are generated per case from a fixed seed (crc32 of the case id), so adding a row never
changes another row's data. `fails={opset: "text"}` declares an expected failure: the export at
that opset must fail with an error containing the text (an op not supported below some opset, a
variant with no ONNX equivalent); it is never skipped silently.
"""
import importlib
import pathlib

from op_framework import CASES, DEFAULT_ATOL, DEFAULT_RTOL, EXPLICIT_OPSETS, NEW_OPSETS, NEWEST_OPSET, OPSETS  # noqa: F401
from op_framework import TORCH1_ONLY, UNREACHABLE  # noqa: F401
from op_framework import add_script_twins

FAMILIES = ("prim", "elementwise", "aliases", "tensor", "nn", "rnn", "dynamic", "creation", "linalg", "mutation",
            "packed", "quantized", "reduce", "script", "torchvision", "torchaudio", "attention",
            "spectral_fft", "spectral_complex")


def _load_families():
    present = {p.stem[len("cases_"):] for p in pathlib.Path(__file__).resolve().parent.glob("cases_*.py")}
    if present != set(FAMILIES):
        raise RuntimeError(f"tests/ops: cases files {sorted(present)} and FAMILIES {sorted(FAMILIES)} differ")
    for family in FAMILIES:
        importlib.import_module(f"cases_{family}")


_load_families()
SCRIPT_TWINS, NO_SCRIPT_TWIN = add_script_twins(CASES)
