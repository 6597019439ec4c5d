"""One worker process of run_dropin.py: imports PyTorch 1.13's test_pytorch_onnx_onnxruntime.py,
routes every export its tests make to the chosen exporter, and runs the cases it is given.

    dropin_worker.py --tests DIR --exporter onnxport|torch --list CLASS...   -> {"cases": [[class, method], ...]}
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


def install_hooks(exporter):
    export = torch.onnx.utils._export
    if exporter == "onnxport":
        export = onnxport_export(export, inspect.signature(torch.onnx.utils.export).parameters)
    torch.onnx.utils._export = staged("export", export, "exports")
    verification._ort_session = staged("ort-load", verification._ort_session)
    verification._run_ort = staged("ort-run", verification._run_ort, "ort_runs")  # feeds the inputs, runs
    verification._compare_ort_pytorch_outputs = staged("compare", verification._compare_ort_pytorch_outputs)


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
        if isinstance(e, AssertionError) and str(e).endswith(" not raised") and counts["ort_runs"]:
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
    parser.add_argument("--exporter", choices=("onnxport", "torch"), required=True)
    parser.add_argument("--list", nargs="+", metavar="CLASS")
    parser.add_argument("--run", metavar="CASES.json")
    args = parser.parse_args()

    take_stdout()
    install_hooks(args.exporter)
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


if __name__ == "__main__":
    main()
