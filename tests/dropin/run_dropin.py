#!/usr/bin/python3
"""Runs PyTorch 1.13's ONNX Runtime exporter tests (test/onnx/test_pytorch_onnx_onnxruntime.py,
fetched by fetch_pytorch_sources.sh) with onnxport.export or torch.onnx.export as the exporter:
each test method of each chosen (opset, trace/script) test class is one case, passing when every
export it makes matches eager PyTorch in ONNX Runtime on every input set the test gives. With
--exporter onnxport-cli each export goes through the command line on a saved .pt instead.

    run_dropin.py --tests CACHE/test/onnx --exporter onnxport [--opsets 13 17] [--modes trace script]
                  [--sample N --seed S] [--only REGEX] [--work DIR] [--results FILE.json] [--expect FILE]

Cases run in worker processes (dropin_worker.py), --jobs of them; a case that crashes its worker
or makes no progress (enters no stage) for --timeout seconds fails at the stage it was in, and a
new worker takes the rest. The exit
status is 0 unless the harness itself fails (2), or --expect's list disagrees with the run (1).
"""
import argparse
import concurrent.futures
import json
import os
import queue
import random
import re
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
WORKER = os.path.join(HERE, "dropin_worker.py")  # run_symbolic_tests.py sets args.worker to its own
STAGES = ("export", "ort-load", "ort-run", "compare")
STARTUP_TIMEOUT = 300  # seconds a worker may take to import torch and the tests, or between cases
progress_lock = threading.Lock()


class HarnessError(Exception):
    pass


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tests", required=True, help="the extracted test/onnx directory")
    p.add_argument("--exporter", choices=("onnxport", "onnxport-cli", "torch"), required=True,
                   help="onnxport-cli: the model saved with torch.jit.save (traced on the test's args unless "
                        "scripted) and exported by the onnxport executable (--cli)")
    p.add_argument("--cli", default=os.path.join(REPO, "build", "bin", "onnxport"),
                   help="the onnxport executable, for --exporter onnxport-cli")
    p.add_argument("--opsets", type=int, nargs="+", default=[13, 17])
    p.add_argument("--modes", nargs="+", choices=("trace", "script"), default=["trace", "script"],
                   help="the test classes with is_script False (trace) or True (script)")
    p.add_argument("--keep-initializers-as-inputs", nargs="+", choices=("false", "true"), default=["false"],
                   help="the test classes with keep_initializers_as_inputs False and/or True")
    p.add_argument("--sample", type=int, help="run a fixed random sample of N of the cases")
    p.add_argument("--seed", type=int, default=0, help="the sample's seed")
    p.add_argument("--only", help="only the cases whose id matches this regular expression")
    p.add_argument("--work", help="working directory (default: a temporary one)")
    p.add_argument("--results", help="write one JSON record per case to this file")
    p.add_argument("--expect", help="file of the case ids expected to fail, one a line ('id  # reason')")
    p.add_argument("--write-expect", help="write this run's failing cases to this file, in --expect's format")
    p.add_argument("--jobs", type=int, default=1, help="worker processes run in parallel")
    p.add_argument("--timeout", type=float, default=300, help="seconds a case may go without progress")
    p.add_argument("--onnxport-python", default=os.path.join(REPO, "build", "python"),
                   help="directory holding the onnxport package")
    p.add_argument("--node", default="node")
    return p.parse_args()


def test_classes(args):
    """{class name: (opset, mode, keep_initializers_as_inputs)} as 1.13's parameterize_class_name names them."""
    return {f"TestONNXRuntime_opset_version_{opset}_is_script_{mode == 'script'}"
            f"_keep_initializers_as_inputs_{keep == 'true'}": (opset, mode, keep == "true")
            for opset in args.opsets for mode in args.modes for keep in args.keep_initializers_as_inputs}


class Worker:
    """One dropin_worker.py process; its reply lines are read by a thread into a queue."""

    def __init__(self, args, env, log, work, *worker_args):
        os.makedirs(work, exist_ok=True)
        command = [sys.executable, getattr(args, "worker", WORKER), "--tests", os.path.abspath(args.tests),
                   "--exporter", args.exporter, *worker_args]
        if args.exporter == "onnxport-cli":
            command += ["--cli", os.path.abspath(args.cli)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, env=dict(env, DROPIN_WORK=work),
                                        cwd=work, text=True)
        self.replies = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.replies.put(json.loads(line))
        self.replies.put(None)

    def reply(self, timeout):
        """The next reply; None when the worker exited; raises queue.Empty after `timeout` seconds."""
        return self.replies.get(timeout=timeout)

    def end(self, grace=5):
        """The worker's exit status, killing it if it still runs after `grace` seconds."""
        try:
            return self.process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


def list_cases(args, env, log):
    """Every case of the chosen test classes: its record's fields, and "class" for the worker."""
    classes = test_classes(args)
    worker = Worker(args, env, log, env["DROPIN_WORK"], "--list", *classes)
    try:
        reply = worker.reply(STARTUP_TIMEOUT)
    except queue.Empty:
        reply = None
    if not reply:
        raise HarnessError(f"listing the test cases failed ({describe_exit(worker.end())}); see {log.name}")
    cases = []
    for cls, method in reply["cases"]:
        opset, mode, keep = classes[cls]
        cases.append({"id": f"{method}[opset{opset}-{mode}{'-init_inputs' if keep else ''}]", "test": method,
                      "opset": opset, "mode": mode, "keep_initializers_as_inputs": keep, "exporter": args.exporter,
                      "class": cls})
    return cases


def run_shard(args, env, log, shard, name, results):
    """Runs the cases of `shard`, a new worker after each crash or timeout; appends their records to `results`."""
    work = os.path.join(env["DROPIN_WORK"], name)
    done = 0
    while done < len(shard):
        cases_file = os.path.join(env["DROPIN_WORK"], f"{name}.cases.json")
        with open(cases_file, "w") as f:
            json.dump([{"class": c["class"], "method": c["test"]} for c in shard[done:]], f)
        worker = Worker(args, env, log, work, "--run", cases_file)
        started, stage, failure = False, None, None  # stage None: no case is running
        while True:
            try:
                reply = worker.reply(args.timeout if stage is not None else STARTUP_TIMEOUT)
            except queue.Empty:
                failure = f"timed out after {args.timeout:g} s"
                break
            if reply is None:
                break
            started = True
            if "start" in reply:
                stage = "test"
            elif "stage" in reply:
                stage = reply["stage"]
            else:
                results.append(record(shard[done], **reply["result"]))
                done, stage = done + 1, None
        status = worker.end(grace=0 if failure else 5)
        if not started or (stage is None and done < len(shard)):
            raise HarnessError(f"a worker stopped outside any case ({describe_exit(status)}); see {log.name}")
        if stage is not None:
            results.append(record(shard[done], "fail" if stage in STAGES else "error", stage,
                                  failure or f"the worker died ({describe_exit(status)})"))
            done += 1


def record(case, status, stage, reason, seconds=None):
    """The case's result record, printed when it is a failure."""
    r = {k: v for k, v in case.items() if k != "class"}
    r.update(status=status, stage=stage, reason=reason, seconds=seconds)
    if status in ("fail", "error"):
        with progress_lock:
            print(f"{status.upper()} {r['id']} [{stage}] {reason}", flush=True)
    return r


def describe_exit(status):
    return f"signal {-status}" if status < 0 else f"exit status {status}"


def read_expectations(path):
    with open(path) as f:
        return {line.split("#")[0].strip() for line in f if line.split("#")[0].strip()}


def write_expectations(path, records, args):
    with open(path, "w") as f:
        f.write(f"# Cases known to fail with {args.exporter} (run_dropin.py --write-expect): id  # [stage] reason\n")
        for r in records:
            if r["status"] in ("fail", "error"):
                f.write(f"{r['id']}  # [{r['stage']}] {r['reason'][:160]}\n")


def check_expectations(records, expected_failures):
    """Lines saying where the run disagrees with the list of expected failures (none: it agrees)."""
    problems = []
    for r in records:
        failed = r["status"] in ("fail", "error")
        if failed and r["id"] not in expected_failures:
            problems.append(f"unexpected failure: {r['id']} [{r['stage']}] {r['reason']}")
        elif r["status"] in ("pass", "beyond") and r["id"] in expected_failures:
            problems.append(f"now passes, remove it from the expectations: {r['id']}")
    return problems


def worker_env(args, work):
    """The workers' environment: the onnxport package, node for the ONNX Runtime shim, one thread."""
    return dict(os.environ, DROPIN_WORK=os.path.abspath(work), DROPIN_NODE=args.node, DROPIN_ORT_THREADS="1",
                OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(filter(None, [os.path.abspath(args.onnxport_python),
                                                                              os.environ.get("PYTHONPATH")])))


def check_onnxruntime(args):
    if subprocess.run([args.node, os.path.join(HERE, "ort_server.js")], stdin=subprocess.DEVNULL).returncode:
        raise HarnessError(f"onnxruntime-node does not load with {args.node} (npm ci in {REPO}?)")


def run_cases(args, env, log, cases):
    """The records of `cases`, in their order, run by --jobs workers."""
    results = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        shards = [pool.submit(run_shard, args, env, log, cases[j::args.jobs], f"shard{j}", results)
                  for j in range(args.jobs)]
        for shard in shards:
            shard.result()  # raises the shard's HarnessError
    order = {c["id"]: i for i, c in enumerate(cases)}
    return sorted(results, key=lambda r: order[r["id"]])


def main():
    args = parse_args()
    work = args.work or tempfile.mkdtemp(prefix="dropin-")
    os.makedirs(work, exist_ok=True)
    env = worker_env(args, work)
    if not os.path.isfile(os.path.join(args.tests, "test_pytorch_onnx_onnxruntime.py")):
        raise HarnessError(f"no test_pytorch_onnx_onnxruntime.py in {args.tests} (fetch_pytorch_sources.sh CACHE_DIR "
                           "puts it in CACHE_DIR/test/onnx)")
    check_onnxruntime(args)
    with open(os.path.join(work, f"worker-{args.exporter}.log"), "w") as log:
        cases = list_cases(args, env, log)
        if args.only:
            cases = [c for c in cases if re.search(args.only, c["id"])]
        if args.sample is not None and args.sample < len(cases):
            chosen = set(random.Random(args.seed).sample(range(len(cases)), args.sample))
            cases = [c for i, c in enumerate(cases) if i in chosen]
        print(f"run_dropin: {len(cases)} cases with {args.exporter}, work dir {work}", flush=True)
        records = run_cases(args, env, log, cases)
    if args.results:
        with open(args.results, "w") as f:
            json.dump(records, f, indent=1)
    count = {s: sum(r["status"] == s for r in records) for s in ("pass", "beyond", "fail", "error", "skip")}
    by_stage = {s: sum(r["stage"] == s for r in records if r["status"] in ("fail", "error")) for s in (*STAGES, "test")}
    print("failed by stage: " + ", ".join(f"{s} {n}" for s, n in by_stage.items()))
    print(f"{count['pass']} passed, {count['fail'] + count['error']} failed"
          + (f", {count['skip']} skipped" if count["skip"] else "")
          + (f", {count['beyond']} exported where the test asserts torch.onnx refuses" if count["beyond"] else ""))
    if args.write_expect:
        write_expectations(args.write_expect, records, args)
    return exit_status(records, args.expect)


def exit_status(records, expect_file):
    """1 (printing why) when the records differ from the expectation file's failures, else 0."""
    if not expect_file:
        return 0
    problems = check_expectations(records, read_expectations(expect_file))
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except HarnessError as e:
        print(f"run_dropin: {e}", file=sys.stderr)
        sys.exit(2)
