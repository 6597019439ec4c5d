#!/usr/bin/python3
"""Runs PyTorch 1.13's own tests of symbolic functions written in Python (custom op and aten
symbolics registered with torch.onnx.register_custom_op_symbolic, custom_opsets,
torch.autograd.Function with and without a `symbolic`, a symbolic for prim::PythonOp) with
onnxport.export or torch.onnx.export as the exporter, reading them from the fetched
test/onnx/ (fetch_pytorch_sources.sh):

    run_symbolic_tests.py --tests CACHE/test/onnx --exporter onnxport|torch [--opsets 9 .. 17]
                          [--only REGEX] [--work DIR] [--results FILE.json] [--expect FILE] [--internal-graphs]

The cases: test_custom_ops.py's TestCustomAutogradFunction and TestExportAsContribOps,
test_autograd_funs.py's TestAutogradFuns, and the custom op / symbolic / autograd tests of
test_utility_funs.py's TestUtilityFuns_opset_N classes (one per --opsets, default 9 to 17 as 1.13
makes them). NOT_APPLICABLE lists the tests that cannot say anything about an exporter here, with
why; they are listed, not run. Cases run in symbolic_worker.py processes, with run_dropin.py's
driver (a crash or a --timeout fails the case, a new worker runs the rest).

One line per case (PASS, FAIL [stage] reason, SKIP reason, N/A reason) and the totals are printed.
The exit status is 0, 2 if the harness itself fails, and with --expect FILE (one case id a line,
`id  # why`) 1 when a case fails that FILE does not list or passes that it lists.
"""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time

import run_dropin
from run_dropin import HarnessError

HERE = os.path.dirname(os.path.abspath(__file__))

# (test module, class, methods or None for all of them); {opset} makes one class per --opsets.
SELECTION = (
    ("test_custom_ops", "TestCustomAutogradFunction", None),
    ("test_custom_ops", "TestExportAsContribOps", None),
    ("test_autograd_funs", "TestAutogradFuns", None),
    ("test_utility_funs", "TestUtilityFuns_opset_{opset}", (
        "test_custom_opsets_gelu", "test_register_aten_custom_op_symbolic", "test_custom_opsets_inverse",
        "test_custom_layer_tuple", "test_autograd_module_name", "test_autograd_onnx_fallthrough",
        "test_custom_op_fallthrough",
        "test_bad_symbolic_registration",  # registers a `::cat` symbolic whose parse_args misses an argument
    )),
)

NOT_APPLICABLE = {
    "TestCustomOps.test_custom_add":
        "runs the export in Caffe2 (caffe2.python.onnx.backend, and do_export from test_pytorch_onnx_caffe2, "
        "which imports it); Debian's PyTorch has no caffe2 Python package. Its C++ op (load_inline) builds here: "
        "TestUtilityFuns_opset_N.test_custom_op_fallthrough exports the same kind of op",
    "TestAutogradFuns.test_aten_unsupported":
        "inspects torch.onnx's intermediate graph (utils._model_to_graph) under ONNX_ATEN_FALLBACK, where the "
        "Function is kept as prim::PythonOp, a graph torch.onnx.export itself refuses to write "
        "(RuntimeError: Couldn't export Python operator Erf): there is no export to compare; its "
        "ONNX_FALLTHROUGH half is test_autograd_onnx_fallthrough's check",
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tests", required=True, help="the extracted test/onnx directory")
    p.add_argument("--exporter", choices=("onnxport", "torch"), required=True)
    p.add_argument("--opsets", type=int, nargs="+", default=list(range(9, 18)),
                   help="the TestUtilityFuns_opset_N classes to run (default 9 to 17, all of them)")
    p.add_argument("--only", help="only the cases whose id (CLASS.test_method) matches this regular expression")
    p.add_argument("--internal-graphs", action="store_true",
                   help="with --exporter torch: run the tests that inspect utils._model_to_graph's graph as "
                        "written, instead of reading the exported file's graph")
    p.add_argument("--work", help="working directory (default: a temporary one); C++ extensions the tests "
                                  "build are kept in WORK/torch_extensions")
    p.add_argument("--results", help="write one JSON record per case to this file")
    p.add_argument("--expect", help="file of the case ids expected to fail, one a line ('id  # why')")
    p.add_argument("--jobs", type=int, default=1, help="worker processes run in parallel")
    p.add_argument("--timeout", type=float, default=300, help="seconds a case may go without progress")
    p.add_argument("--onnxport-python", default=os.path.join(run_dropin.REPO, "build", "python"),
                   help="directory holding the onnxport package")
    p.add_argument("--node", default="node")
    p.set_defaults(worker=os.path.join(HERE, "symbolic_worker.py"))
    args = p.parse_args()
    if args.internal_graphs and args.exporter != "torch":
        p.error("--internal-graphs runs torch.onnx's internals: only with --exporter torch")
    return args


def selected_classes(args):
    return {f"{module}.{cls.format(opset=opset)}": methods for module, cls, methods in SELECTION
            for opset in (args.opsets if "{opset}" in cls else [None])}


def list_cases(args, env, log):
    """The cases of SELECTION, as run_dropin.run_shard takes them ("class" is MODULE.CLASS)."""
    classes = selected_classes(args)
    worker = run_dropin.Worker(args, env, log, env["DROPIN_WORK"], "--list", *classes)
    try:
        reply = worker.reply(run_dropin.STARTUP_TIMEOUT)
    except run_dropin.queue.Empty:
        reply = None
    if not reply:
        raise HarnessError(f"listing the test cases failed ({run_dropin.describe_exit(worker.end())}); see {log.name}")
    found = {}
    for cls, method in reply["cases"]:
        found.setdefault(cls, []).append(method)
    cases = []
    for cls, methods in classes.items():
        missing = sorted(set(methods or ()) - set(found.get(cls, ())))
        if missing:
            raise HarnessError(f"{cls} has no {', '.join(missing)}: not the tests of PyTorch 1.13?")
        for method in found.get(cls, ()):
            if (methods is None or method in methods) and f"{cls.split('.')[1]}.{method}" not in NOT_APPLICABLE:
                cases.append({"id": f"{cls.split('.')[1]}.{method}", "test": method, "exporter": args.exporter,
                              "class": cls})
    return cases


def line(r):
    status = {"pass": "PASS", "fail": "FAIL", "error": "FAIL", "skip": "SKIP", "n/a": "N/A", "beyond": "BEYOND"}[r["status"]]
    detail = f"[{r['stage']}] {r['reason']}" if r["status"] in ("fail", "error") else r["reason"]
    seconds = f" ({r['seconds']:.1f} s)" if r.get("seconds") is not None else ""
    return f"{status:4s}  {r['id']}{seconds}" + (f"  {detail}" if detail else "")


def main():
    args = parse_args()
    work = os.path.abspath(args.work or tempfile.mkdtemp(prefix="symbolics-"))
    os.makedirs(work, exist_ok=True)
    env = run_dropin.worker_env(args, work)
    env.setdefault("TORCH_EXTENSIONS_DIR", os.path.join(work, "torch_extensions"))  # load_inline's builds
    for name in ("test_custom_ops.py", "test_autograd_funs.py", "test_utility_funs.py"):
        if not os.path.isfile(os.path.join(args.tests, name)):
            raise HarnessError(f"no {name} in {args.tests} (fetch_pytorch_sources.sh CACHE_DIR puts the tests in "
                               "CACHE_DIR/test/onnx)")
    run_dropin.check_onnxruntime(args)
    if not shutil.which("ninja") or not shutil.which("c++"):
        print("run_symbolic_tests: no ninja or c++ on PATH: test_custom_op_fallthrough cannot build its C++ op",
              flush=True)
    started = time.monotonic()
    with open(os.path.join(work, f"worker-{args.exporter}.log"), "w") as log:
        cases = list_cases(args, env, log)
        not_applicable = [{"id": i, "test": i.split(".")[1], "exporter": args.exporter, "status": "n/a", "stage": "",
                           "reason": why, "seconds": None} for i, why in NOT_APPLICABLE.items()]
        if args.only:
            cases = [c for c in cases if re.search(args.only, c["id"])]
            not_applicable = [r for r in not_applicable if re.search(args.only, r["id"])]
        print(f"run_symbolic_tests: {len(cases)} cases with {args.exporter}"
              f"{' (internal graphs as written)' if args.internal_graphs else ''}, work dir {work}", flush=True)
        records = run_dropin.run_cases(args, env, log, cases)
    records += not_applicable
    if args.results:
        with open(args.results, "w") as f:
            json.dump(records, f, indent=1)
    print(f"\nresults with {args.exporter}:")
    for r in records:
        print(line(r))
    count = {s: sum(r["status"] == s for r in records) for s in ("pass", "fail", "error", "skip", "n/a", "beyond")}
    print(f"{count['pass']} passed, {count['fail'] + count['error']} failed"
          + (f", {count['skip']} skipped" if count["skip"] else "")
          + (f", {count['beyond']} beyond" if count["beyond"] else "")
          + f", {count['n/a']} not applicable ({time.monotonic() - started:.0f} s)")
    return run_dropin.exit_status(records, args.expect)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except HarnessError as e:
        print(f"run_symbolic_tests: {e}", file=sys.stderr)
        sys.exit(2)
