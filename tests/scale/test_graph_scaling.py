#!/usr/bin/env python3
"""Export time must grow linearly with the graph's size (issue "Export at the speed of the disk").

Exports the chain models of tests/scale/make_chain_models.py (chain_<N>.pt, about N ONNX nodes,
a fixed pool of 32 tiny parameters, so that only the graph grows) with
`onnxport export chain_<N>.pt -o OUT --input x:4x8:float32 --timings`, RUNS times per size with
the sizes interleaved (ascending, descending, ascending, ...), and takes per-size minima of:
the process's wall time, its CPU time (user + sys), and each stage the CLI reports on stderr
(`timings: load X s (peak N MiB), prepare ..., ..., check ..., total ...`). Minima, not medians:
other work on the machine only ever adds time, and it adds more to the big graph, whose working
set is the larger (a CI run measured chain_50000's pipeline at 4.30 s, then 6.85 and 6.68 s in
the next two rounds, CPU time 7.8 s then 12.0 s, while chain_10000 stayed at 0.38-0.49 s); the
least disturbed run is the best estimate of what the export itself costs.

Criterion. Process start-up (loading libtorch and the op packs) and other fixed costs make small
graphs look slow per node, so per-node times are not compared directly. Instead:

  pipeline(N) = sum of the stages from `prepare` to `check` (everything after `load`; `load` is
                mostly torch::jit::load, libtorch's, and start-up is outside the stages)
  line(N)     = the straight line a + b*N through pipeline() at the two smallest sizes
                (its intercept absorbs the fixed costs)

  every larger size N must satisfy  pipeline(N) <= LIMIT * line(N) + SLACK   (LIMIT 1.2, SLACK 0.25 s)

A size that breaks it is confirmed on the process's CPU time (the same test on the line through
the CPU times of the two smallest sizes: start-up and load are in it, absorbed by the intercept);
the test fails only if both break it. A stage slowed by other work on a busy machine shows in
wall time but hardly in CPU time; a super-linear pass shows in both.

Sensitivity: with sizes 1k/10k/50k, a pass costing c*N^2 is predicted by the line at only ~22% of
its real cost at 50k, so the test fails once such a pass takes more than ~21% of the 50k export
(e.g. uniquing 50k names by scanning all names: ~10^9 comparisons, seconds). An export that runs
longer than max(MIN_TIMEOUT, 3 x the line's prediction of the process's wall time) is killed and
fails the test (and is not repeated). A first round already more than 2 x LIMIT over the line is
not repeated either: the verdict could not change.

Also fails if a model's node count (counted in the written ONNX with the onnx package) is not
within 20% of the requested size.

Exit status: 0 pass, 1 fail (super-linear, timed out, node counts off), 2 setup or export error.
Usage: test_graph_scaling.py --onnxport BIN --fixtures DIR [--sizes 1000,10000,50000] [--runs 3]
"""
import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import onnx

STAGE_RE = re.compile(r"^\s*(?P<name>[a-z][a-z ]*?) (?P<secs>[0-9.]+) s(?: \(peak (?P<peak>[0-9]+) MiB\))?\s*$")
NODE_TOLERANCE = 0.20
STOP_EARLY_FACTOR = 2.0   # a first round this many times over LIMIT fails the test at once
TIMEOUT_FACTOR = 3.0      # times the line's prediction of the process's wall time


class Run:
    def __init__(self, wall, cpu, stages, peak):
        self.wall, self.cpu, self.stages, self.peak = wall, cpu, stages, peak

    @property
    def pipeline(self):
        return sum(v for k, v in self.stages.items() if k not in ("load", "total"))


def parse_timings(stderr):
    lines = [l for l in stderr.splitlines() if l.startswith("timings:")]
    if not lines:
        return None, None
    stages, peak = {}, 0
    for part in lines[-1][len("timings:"):].split(","):
        m = STAGE_RE.match(part)
        if not m:
            raise ValueError(f"cannot parse stage {part!r} in: {lines[-1]}")
        stages[m["name"]] = float(m["secs"])
        if m["peak"]:
            peak = max(peak, int(m["peak"]))
    return stages, peak


def export(binary, model, out, timeout):
    """One export: a Run, or None if it took longer than `timeout` seconds."""
    cmd = [binary, "export", model, "-o", out, "--input", "x:4x8:float32", "--timings"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"error: {' '.join(cmd)} exited with {proc.returncode}")
    stages, peak = parse_timings(proc.stderr)
    if stages is None:
        sys.stderr.write(proc.stderr)
        raise SystemExit("error: no `timings:` line on stderr (does this onnxport have --timings?)")
    return Run(wall, cpu, stages, peak)


def line_through(p, q):
    """(a, b) of y = a + b*x through the points p and q; a slope below 0 (noise) counts as 0."""
    (x1, y1), (x2, y2) = p, q
    b = max((y2 - y1) / (x2 - x1), 0.0)
    return y1 - b * x1, b


def predict(line, x):
    return line[0] + line[1] * x


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--onnxport", required=True, help="onnxport binary")
    parser.add_argument("--fixtures", required=True, help="directory of chain_<N>.pt (make_chain_models.py)")
    parser.add_argument("--sizes", default="1000,10000,50000", help="comma-separated, at least 3 (default %(default)s)")
    parser.add_argument("--runs", type=int, default=3, help="exports per size (default %(default)s)")
    parser.add_argument("--limit", type=float, default=1.2, help="allowed factor over the line (default %(default)s)")
    parser.add_argument("--slack", type=float, default=0.25, help="allowed seconds over LIMIT x line (default %(default)s)")
    parser.add_argument("--min-timeout", type=float, default=60.0,
                        help="seconds an export may always take before it is killed (default %(default)s)")
    parser.add_argument("--max-timeout", type=float, default=600.0, help="hard cap per export (default %(default)s)")
    parser.add_argument("--distinct-params", action="store_true",
                        help="use chain_<N>_pp.pt (two parameters per step; make_chain_models.py --distinct-params)")
    parser.add_argument("--work", help="directory for the exported ONNX files (default: a temporary one, removed)")
    args = parser.parse_args()

    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    if len(sizes) < 3:
        parser.error("--sizes needs at least 3 sizes: a line through the two smallest, checked at the others")
    suffix = "_pp" if args.distinct_params else ""
    models = {n: os.path.join(args.fixtures, f"chain_{n}{suffix}.pt") for n in sizes}
    missing = [m for m in models.values() if not os.path.exists(m)]
    if missing:
        raise SystemExit(f"error: missing fixtures {missing}: run tests/scale/make_chain_models.py {args.fixtures}")
    work = args.work or tempfile.mkdtemp(prefix="onnxport_scaling_")
    os.makedirs(work, exist_ok=True)
    outs = {n: os.path.join(work, f"chain_{n}{suffix}.onnx") for n in sizes}

    runs = {n: [] for n in sizes}
    nodes = {}
    timed_out = {}
    failures = []
    small = sizes[:2]
    started = time.perf_counter()
    try:
        for r in range(args.runs):
            order = sizes if r % 2 == 0 else sizes[::-1]
            for n in order:
                timeout = args.max_timeout
                if n not in small:
                    wall_line = line_through(*[(s, statistics.median(x.wall for x in runs[s])) for s in small])
                    timeout = min(args.max_timeout, max(args.min_timeout, TIMEOUT_FACTOR * predict(wall_line, n)))
                run = export(args.onnxport, models[n], outs[n], timeout)
                if run is None:
                    timed_out[n] = timeout
                    why = "" if n in small else (f" (the line through {small[0]} and {small[1]} nodes predicts "
                                                 f"{predict(wall_line, n):.1f} s for the whole process)")
                    print(f"chain_{n}: killed after {timeout:.0f} s{why}", flush=True)
                    break
                runs[n].append(run)
                print(f"run {r + 1} chain_{n}: {run.wall:.2f} s wall, {run.cpu:.2f} s cpu, "
                      f"pipeline {run.pipeline:.2f} s", flush=True)
                if n not in nodes:
                    nodes[n] = len(onnx.load(outs[n], load_external_data=False).graph.node)
            if timed_out:
                break
            if r == 0:  # a clear failure is not repeated
                pipe_line = line_through(*[(s, runs[s][0].pipeline) for s in small])
                if any(runs[n][0].pipeline > STOP_EARLY_FACTOR * args.limit * predict(pipe_line, n) + args.slack
                       for n in sizes[2:]):
                    print(f"first round more than {STOP_EARLY_FACTOR * args.limit:.1f} x over the line: "
                          "not repeated", flush=True)
                    break
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)

    # Minima per size (of the runs that finished).
    done = [n for n in sizes if runs[n]]
    stage_names = []
    for n in done:
        for r in runs[n]:
            for k in r.stages:
                if k not in stage_names and k != "total":
                    stage_names.append(k)
    best = {}
    for n in done:
        rs = runs[n]
        best[n] = {
            "wall": min(r.wall for r in rs),
            "cpu": min(r.cpu for r in rs),
            "pipeline": min(r.pipeline for r in rs),
            "total": min(r.stages.get("total", 0.0) for r in rs),
            "peak": max(r.peak for r in rs),
            "runs": len(rs),
            **{k: min(r.stages.get(k, 0.0) for r in rs) for k in stage_names},
        }

    # The table.
    short = {"prove dynamic axes": "dynax", "onnx passes": "passes"}
    cols = ["size", "nodes", "runs", "process", "cpu", "cli tot"] + [short.get(k, k) for k in stage_names] + \
           ["pipeline", "us/node", "pipe us/node", "x/node", "pipe x/node", "peak MiB"]
    rows = []
    base = sizes[0]
    for n in done:
        m = best[n]
        per_node = 1e6 * m["wall"] / nodes[n]
        pipe_per_node = 1e6 * m["pipeline"] / nodes[n]
        if n == base:
            base_pn, base_ppn = per_node, pipe_per_node
        rows.append([str(n), str(nodes[n]), str(m["runs"]), f"{m['wall']:.2f}", f"{m['cpu']:.2f}", f"{m['total']:.2f}"] +
                    [f"{m[k]:.2f}" for k in stage_names] +
                    [f"{m['pipeline']:.2f}", f"{per_node:.1f}", f"{pipe_per_node:.1f}",
                     f"{per_node / base_pn:.2f}", f"{pipe_per_node / base_ppn:.2f}", str(m["peak"])])
    for n in timed_out:
        if n not in done:
            rows.append([str(n), "?", "0", f">{timed_out[n]:.0f}"] + ["-"] * (len(cols) - 4))
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    print()
    print("least seconds per size over the runs (process = wall time of the whole onnxport process, cpu = its user+sys, "
          "cli tot = the CLI's `total`, pipeline = prepare..check; x/node = time per node / that at "
          f"{base} nodes)")
    print("  ".join(c.rjust(w) for c, w in zip(cols, widths)))
    for r in rows:
        print("  ".join(v.rjust(w) for v, w in zip(r, widths)))
    print()

    # Node counts.
    for n in done:
        if abs(nodes[n] - n) > NODE_TOLERANCE * n:
            failures.append(f"chain_{n}: {nodes[n]} ONNX nodes, not within {NODE_TOLERANCE:.0%} of {n}")

    # The criterion.
    for n in timed_out:
        failures.append(f"chain_{n}: export killed after {timed_out[n]:.0f} s, over {TIMEOUT_FACTOR:.0f} x the "
                        "linear prediction")
    if all(n in best for n in small):
        pipe_line = line_through(*[(s, best[s]["pipeline"]) for s in small])
        cpu_line = line_through(*[(s, best[s]["cpu"]) for s in small])
        print(f"criterion: pipeline(N) <= {args.limit} x line(N) + {args.slack} s, line through the pipeline "
              f"times at {small[0]} and {small[1]} nodes: {pipe_line[0]:.3f} s + {1e6 * pipe_line[1]:.2f} us x N; "
              f"confirmed on process CPU time ({cpu_line[0]:.3f} s + {1e6 * cpu_line[1]:.2f} us x N)")
        for n in sizes[2:]:
            if n not in best:
                continue
            want = predict(pipe_line, n)
            ratio = best[n]["pipeline"] / want if want > 0 else float("inf")
            cpu_want = predict(cpu_line, n)
            cpu_ratio = best[n]["cpu"] / cpu_want if cpu_want > 0 else float("inf")
            wall_bad = best[n]["pipeline"] > args.limit * want + args.slack
            cpu_bad = best[n]["cpu"] > args.limit * cpu_want + args.slack
            verdict = "FAIL" if wall_bad and cpu_bad else ("pass (wall over, CPU time not: a busy machine)"
                                                            if wall_bad else "pass")
            print(f"  {n}: pipeline {best[n]['pipeline']:.2f} s, line {want:.2f} s -> x{ratio:.2f}; "
                  f"cpu {best[n]['cpu']:.2f} s, line {cpu_want:.2f} s -> x{cpu_ratio:.2f}: {verdict}")
            if wall_bad and cpu_bad:
                failures.append(f"chain_{n}: pipeline {best[n]['pipeline']:.2f} s is x{ratio:.2f} the linear "
                                f"prediction {want:.2f} s (limit {args.limit} x + {args.slack} s); CPU x{cpu_ratio:.2f}")
        # Which stages grow faster than linearly (information: each stage's own line, big stages only).
        big = sizes[-1] if sizes[-1] in best else None
        if big:
            notes = []
            for k in stage_names:
                line = line_through(*[(s, best[s][k]) for s in small])
                want = predict(line, big)
                if best[big][k] >= 0.2 and best[big][k] > args.limit * want + args.slack:
                    notes.append(f"{k} {best[big][k]:.2f} s vs line {want:.2f} s (x{best[big][k] / max(want, 1e-3):.1f})")
            if notes:
                print(f"  stages over their own line at {big}: " + "; ".join(notes))
    print(f"test wall time {time.perf_counter() - started:.1f} s")

    if failures:
        print("FAIL: export time is not linear in the graph's size")
        for f in failures:
            print(f"  {f}")
        return 1
    print("PASS: export time is linear in the graph's size")
    return 0


if __name__ == "__main__":
    sys.exit(main())
