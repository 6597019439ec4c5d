"""One worker process of run_dropin.py: imports PyTorch 1.13's test_pytorch_onnx_onnxruntime.py,
routes every export its tests make to the chosen exporter, and runs the cases it is given.

    dropin_worker.py --tests DIR --exporter onnxport|onnxport-cli|torch [--cli BIN] --list CLASS...   -> {"cases": [[class, method], ...]}
    dropin_worker.py --tests DIR --exporter onnxport|torch --run CASES.json  -> per case {"start": i},
        {"stage": S} as it enters and leaves each stage, then {"result": {status, stage, reason, seconds}};
        status "beyond": the test asserts torch.onnx refuses the model, and it exported and matched
        (CASES.json: [{"class": C, "method": M}, ...]; run in the current directory, whose *.onnx are removed after each case)

Replies are JSON lines on the stdout it was started with; whatever the tests print goes to stderr.

The tests check exports with torch.onnx.verification.verify, which exports through
torch.onnx.utils._export, loads the model (_ort_session), runs it on the main inputs and on each
of additional_test_inputs (_run_ort; ONNX Runtime is shim/onnxruntime.py: onnxruntime-node) and
compares each run's outputs with eager PyTorch's (_compare_ort_pytorch_outputs). That is the hook:
`_export` receives exactly what torch.onnx.export would get from the test (a test calling
torch.onnx.export directly reaches it too). With --exporter onnxport the call goes to
onnxport.export with the arguments of torch.onnx.export's signature (private _export flags such
as fixed_batch_size are dropped). Hooks also note the stage (export, ort-load, ort-run, compare)
an exception escaped from.
"""
import argparse
import contextlib
import functools
import glob
import importlib
import inspect
import json
import os
import re
import shutil
import sys
import time
import unittest

import torch
import torch.onnx.utils
from torch.onnx import verification

HERE = os.path.dirname(os.path.abspath(__file__))
TEST_MODULE = "test_pytorch_onnx_onnxruntime"


counts = {"exports": 0, "ort_runs": 0}  # of the running case
replies = None  # the driver's pipe, set by main


def send(**message):
    replies.write(json.dumps(message) + "\n")


def staged(stage, function, counter=None):
    """`function`, counting its calls in counts[counter], telling the driver it runs (so that a
    crash or hang is charged to `stage`) and marking an exception escaping it with `stage`."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if counter:
            counts[counter] += 1
        send(stage=stage)
        try:
            result = function(*args, **kwargs)
        except Exception as e:
            if not hasattr(e, "dropin_stage"):
                e.dropin_stage = stage
            raise
        finally:
            send(stage="test")
        return result

    return wrapper


def onnxport_export(torch_export, public):
    """An _export replacement handing torch.onnx.export's arguments to onnxport.export."""
    import onnxport

    signature = inspect.signature(torch_export)

    def export(*args, **kwargs):
        bound = signature.bind(*args, **kwargs).arguments
        return onnxport.export(**{k: v for k, v in bound.items() if k in public})

    return export


# The .npy dtypes the CLI reads (core/1_base/npy.cpp).
CLI_INPUT_DTYPES = {torch.float32, torch.float64, torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8,
                    torch.bool}


def cli_export(torch_export, cli):
    """An _export replacement that does what a user of the command line does with the test's
    model: save it as TorchScript (a scripted module as it is, any other module traced on the
    test's args with torch.jit.trace), save each example input as .npy, and run `onnxport export`
    with torch.onnx.export's options as flags. The flags a user moving from torch.onnx would pass
    are: --mode auto (torch.onnx keeps the control flow of scripted code, also inside a traced
    model), --drop-unused-inputs, --ignore-unknown-dynamic-axes and --warn-unproven-dynamic-axes
    (its leniency); and --default-dtype where the test has set torch's default dtype, which a .pt
    does not record. What a .pt file and .npy inputs cannot carry (keyword, number, None or
    nested inputs, custom opsets, other operator export types) skips the case."""
    import subprocess
    import tempfile

    import numpy as np

    signature = inspect.signature(torch_export)

    def skip(why):
        raise unittest.SkipTest("not for the command line: " + why)

    def export(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        model, inputs, f = a["model"], a["args"], a["f"]
        if isinstance(inputs, torch.Tensor):
            inputs = (inputs,)
        inputs = tuple(inputs)
        if inputs and isinstance(inputs[-1], dict):
            if inputs[-1]:
                skip("keyword inputs")
            inputs = inputs[:-1]
        for x in inputs:
            if not isinstance(x, torch.Tensor):
                skip(f"an input of type {type(x).__name__}")
            if x.dtype not in CLI_INPUT_DTYPES:
                skip(f"an input of dtype {x.dtype}")
        if a.get("custom_opsets") or a.get("export_modules_as_functions"):
            skip("custom opsets or modules as functions")
        op_type = a.get("operator_export_type")
        if op_type not in (None, torch.onnx.OperatorExportTypes.ONNX):
            skip(f"operator_export_type {op_type}")
        if isinstance(model, torch.jit.ScriptFunction):
            skip("a script function (torch.jit.save takes modules)")
        work = tempfile.mkdtemp(prefix="dropin-cli-", dir=".")
        pt = os.path.join(work, "model.pt")
        training = a.get("training") or torch.onnx.TrainingMode.EVAL
        if isinstance(model, torch.jit.ScriptModule):
            model.save(pt)
        else:
            was_training = model.training
            if training != torch.onnx.TrainingMode.PRESERVE:
                model.train(training == torch.onnx.TrainingMode.TRAINING)
            try:
                torch.jit.trace(model, inputs, check_trace=False).save(pt)
            except Exception as e:
                skip("torch.jit.trace fails on it: " + one_line(e))
            finally:
                model.train(was_training)
        names = list(a.get("input_names") or [])
        command = [cli, "export", pt, "-o", os.path.join(work, "model.onnx"), "--mode", "auto",
                   "--opset", str(a.get("opset_version") or 14), "--drop-unused-inputs", "--warn-unproven-dynamic-axes",
                   "--ignore-unknown-dynamic-axes", "--training",
                   {torch.onnx.TrainingMode.TRAINING: "train", torch.onnx.TrainingMode.PRESERVE: "preserve"}.get(
                       training, "eval")]
        for k, x in enumerate(inputs):
            name = names[k] if k < len(names) else f"input_{k}"
            npy = os.path.join(work, f"in{k}.npy")
            np.save(npy, x.detach().numpy())
            command += ["--input", f"{name}={npy}"]
        if len(names) > len(inputs):
            command += ["--input-names", ",".join(names)]
        if a.get("output_names"):
            command += ["--output-names", ",".join(a["output_names"])]
        for name, axes in (a.get("dynamic_axes") or {}).items():
            pairs = axes.items() if isinstance(axes, dict) else ((axis, f"{name}_dynamic_axes_{axis + 1}") for axis in axes)
            command += ["--dynamic-axes", f"{name}:" + ",".join(f"{axis}={dim}" for axis, dim in pairs)]
        if a.get("do_constant_folding") is False:
            command.append("--no-constant-folding")
        if a.get("export_params") is False:
            command.append("--no-export-params")
        if a.get("keep_initializers_as_inputs"):
            command.append("--keep-initializers-as-inputs")
        if torch.get_default_dtype() != torch.float32:  # the test set it: a .pt does not record it
            command += ["--default-dtype", str(torch.get_default_dtype()).replace("torch.", "")]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            # A refusal, as torch.onnx raises one (a RuntimeError too): tests that expect the exporter
            # to refuse an input catch this class.
            raise torch.onnx.errors.OnnxExporterError("onnxport export: " + " ".join(done.stderr.split())[:400])
        with open(os.path.join(work, "model.onnx"), "rb") as written:
            data = written.read()
        if isinstance(f, (str, os.PathLike)):
            with open(f, "wb") as out:
                out.write(data)
        else:
            f.write(data)

    return export


def install_hooks(exporter, cli=None):
    export = torch.onnx.utils._export
    if exporter == "onnxport":
        export = onnxport_export(export, inspect.signature(torch.onnx.utils.export).parameters)
    elif exporter == "onnxport-cli":
        export = cli_export(export, cli)
    torch.onnx.utils._export = staged("export", export, "exports")
    verification._ort_session = staged("ort-load", verification._ort_session)
    # PyTorch 2 renamed the verification steps the tests go through (_run_ort -> _run_onnx, ...).
    run = "_run_ort" if hasattr(verification, "_run_ort") else "_run_onnx"
    compare = ("_compare_ort_pytorch_outputs" if hasattr(verification, "_compare_ort_pytorch_outputs")
               else "_compare_onnx_pytorch_outputs")
    setattr(verification, run, staged("ort-run", getattr(verification, run), "ort_runs"))  # feeds the inputs, runs
    setattr(verification, compare, staged("compare", getattr(verification, compare)))


def import_tests(tests_dir, name=TEST_MODULE):
    sys.argv = sys.argv[:1]  # common_utils parses the command line at import
    for path in reversed([tests_dir, os.path.join(HERE, "shim")]):  # shim: onnxruntime, expecttest, parameterized
        if path not in sys.path:
            sys.path.insert(0, path)
    return importlib.import_module(name)


def one_line(e):
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}"[:300]


def run_case(module, cls_name, method):
    """(status, stage, reason) of one test method of one test class."""
    counts.update(exports=0, ort_runs=0)
    test = getattr(module, cls_name)(method)
    default_dtype = torch.get_default_dtype()
    try:
        test.setUp()
        try:
            getattr(test, method)()
        finally:
            test.tearDown()
            test.doCleanups()  # what the test registered with addCleanup (unregistering a symbolic)
            # A test that sets the default dtype restores it only when it passes: not for the next case.
            torch.set_default_dtype(default_dtype)
    except unittest.SkipTest as e:
        return "skip", "", str(e)
    except Exception as e:
        # PyTorch 2's test base appends "To execute this test, run ..." to the message.
        if isinstance(e, AssertionError) and re.match(r"\w+ not raised\b", str(e)) and counts["ort_runs"]:
            # assertRaises around run_test: the test asserts that torch.onnx refuses the model;
            # the exporter exported it and run_test's ONNX Runtime check inside passed.
            return "beyond", "", "the test asserts that torch.onnx refuses it: " + one_line(e)
        stage = getattr(e, "dropin_stage", "test")
        if stage == "test" and isinstance(e, AssertionError) and counts["ort_runs"]:
            stage = "compare"  # the test's own check of ONNX Runtime's outputs
        return ("error" if stage == "test" else "fail"), stage, one_line(e)
    if not counts["exports"]:
        return "skip", "", "the test exports nothing in this mode"
    return "pass", "", ""


def take_stdout():
    """Replies go to the stdout the worker was started with; what the tests print, to stderr."""
    global replies
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tests", required=True)
    parser.add_argument("--exporter", choices=("onnxport", "onnxport-cli", "torch"), required=True)
    parser.add_argument("--cli", help="the onnxport executable (--exporter onnxport-cli)")
    parser.add_argument("--list", nargs="+", metavar="CLASS")
    parser.add_argument("--run", metavar="CASES.json")
    args = parser.parse_args()

    take_stdout()
    install_hooks(args.exporter, args.cli)
    module = import_tests(os.path.abspath(args.tests))
    if args.list:
        loader = unittest.TestLoader()
        send(cases=[[c, m] for c in args.list for m in loader.getTestCaseNames(getattr(module, c))])
        return
    with open(args.run) as f:
        cases = json.load(f)
    for i, case in enumerate(cases):
        send(start=i)
        start = time.monotonic()
        status, stage, reason = run_case(module, case["class"], case["method"])
        send(result={"status": status, "stage": stage, "reason": reason, "seconds": round(time.monotonic() - start, 2)})
        for name in glob.glob("*.onnx"):  # a test may export to a file of its own
            with contextlib.suppress(FileNotFoundError):
                os.remove(name)
        for work in glob.glob("dropin-cli-*"):  # the command line's .pt, .npy and .onnx files
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
