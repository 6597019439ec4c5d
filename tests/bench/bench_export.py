#!/usr/bin/python3
"""Export time, peak RSS and node count: `onnxport export` vs `torch.onnx.export`, same .pt.

Usage: bench_export.py --onnxport build/bin/onnxport --fixtures build/fixtures/models \
           --fixtures build/fixtures/zoo --model alexnet --model resnet ... [--opset 17] [--repeat 3]
           [--markdown docs/benchmarks.md]

The two exporters run alternately (onnxport, torch.onnx, onnxport, ...; each round starts one
program later than the round before, so each takes every place in turn), each export in a fresh
process under GNU time (`/usr/bin/time -v`, Debian package `time`), so peak RSS is the whole
process's high-water mark; medians are reported, with the time ratio and onnxport's slowest
stages from its --timings line. The .pt files and example inputs come from the fixture
manifests (`<name>.json`: tests/fixtures/make_models.py, tests/zoo/make_zoo.py,
tests/scale/make_big_models.py).

The model file is read once before the first round, so every run finds it in the page cache, and
`sync` runs before each run, so none waits for the writes of the one before.
A third program joins the alternation when it is built (onnxport_bench_floor, beside onnxport, or
--floor BIN): the floor, what no export of that .pt can avoid here — libtorch's start-up,
torch::jit::load, one forward pass, the parameter bytes written once. The table gives its median,
onnxport's time over it, and its time over torch.onnx's (a floor above a time-ratio target means
no exporter that loads the model with libtorch can reach that target on this machine).

--markdown FILE replaces the table between the lines `<!-- bench table -->` and
`<!-- end bench table -->` of FILE (the prose around it stays), or writes a new FILE.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import statistics
import sys
import tempfile
import time

TORCH_EXPORT = r"""
import json, sys, numpy as np, torch
manifest, out, opset = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = json.load(open(manifest))
d = __import__('os').path.dirname(manifest)
model = torch.jit.load(__import__('os').path.join(d, m['model']))
inputs = [torch.from_numpy(np.load(__import__('os').path.join(d, i['file']))) for i in m['inputs']]
def nest(spec):  # manifest "args": how flat inputs nest into forward()'s arguments
    return tuple(nest(s) for s in spec) if isinstance(spec, list) else inputs[spec]
args = nest(m['args']) if 'args' in m else tuple(inputs)
torch.onnx.export(model, args, out, opset_version=opset, do_constant_folding=True)
"""


def timed(cmd):
    r = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, None, r.stderr[-2000:]
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", r.stderr)
    h = float(wall.group(1) or 0)
    seconds = h * 3600 + float(wall.group(2)) * 60 + float(wall.group(3))
    rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))
    return seconds, rss_kb / 1024.0, None


def node_count(path):
    import onnx
    return len(onnx.load(path, load_external_data=False).graph.node)


def remove_outputs(path):
    """A run's output and whatever it wrote beside it (each program writes into a directory of its own)."""
    d = os.path.dirname(path)
    shutil.rmtree(d)
    os.makedirs(d)


def onnxport_command(args, fixtures, manifest, out):
    cmd = [args.onnxport, "export", os.path.join(fixtures, manifest["model"]), "-o", out, "--opset",
           str(args.opset), "--timings"]
    for i in manifest["inputs"]:
        cmd += ["--input", f"{i['name']}={os.path.join(fixtures, i['file'])}"]
    return cmd


def stage_seconds(stderr):
    """{'load': 0.43, ...} from onnxport's `timings:` line."""
    line = next((l for l in stderr.splitlines() if l.startswith("timings:")), "")
    return {m.group(1): float(m.group(2)) for m in re.finditer(r" ([a-z ]+?) (\d+\.\d+) s \(peak", line)}


def timed_run(cmd):
    """(seconds, peak RSS MiB, stderr + stdout) of one process, or (seconds, MiB, error line).
    Dirty pages of the run before are flushed first (untimed): each run then writes into a clean
    page cache, instead of waiting for the previous program's gigabytes to reach the disk."""
    os.sync()
    r = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", r.stderr)
    seconds = float(wall.group(1) or 0) * 3600 + float(wall.group(2)) * 60 + float(wall.group(3))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1)) / 1024.0
    if r.returncode != 0:
        lines = [l for l in r.stderr.splitlines() if l.strip() and not l.startswith("\t")]
        return seconds, rss, (lines[-1] if lines else "failed")
    return seconds, rss, r.stderr + r.stdout


def floor_command(args, fixtures, manifest, out):
    """The floor program's command, or None when forward() takes nested arguments (it passes the
    inputs flat) or no floor program is built."""
    if not args.floor or manifest.get("args", list(range(len(manifest["inputs"])))) != list(
            range(len(manifest["inputs"]))):
        return None
    return [args.floor, os.path.join(fixtures, manifest["model"]), out] + \
        [os.path.join(fixtures, i["file"]) for i in manifest["inputs"]]


def floor_parts(stdout):
    """{'load': s, 'forward': s, 'write': s} from the floor program's line."""
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"([a-z]+) ([0-9.]+) s", stdout)}


def read_once(path):
    """Reads the file so that the page cache holds it before the first run: otherwise whichever
    program runs first (onnxport) also pays for reading it from disk."""
    with open(path, "rb") as f:
        while f.read(16 << 20):
            pass


def find_fixture(fixture_dirs, name):
    for d in fixture_dirs:
        if os.path.exists(os.path.join(d, name + ".json")):
            return d
    raise SystemExit(f"no fixture {name}.json in {fixture_dirs}")


def bench_model(args, fixtures, name, tmp):
    """Alternating runs of both exporters; medians of each."""
    manifest_path = os.path.join(fixtures, name + ".json")
    manifest = json.load(open(manifest_path))
    params = os.path.getsize(os.path.join(fixtures, manifest["model"]))
    for program in ("onnxport", "torch", "floor"):
        os.makedirs(os.path.join(tmp, program), exist_ok=True)
    ours, theirs = os.path.join(tmp, "onnxport", name + ".onnx"), os.path.join(tmp, "torch", name + ".onnx")
    floor_out = os.path.join(tmp, "floor", name + ".bin")
    runs = {"onnxport": [], "torch.onnx": [], "floor": []}
    stages, floor_stages, nodes, failure = [], [], {}, {}
    commands = [("onnxport", onnxport_command(args, fixtures, manifest, ours), ours),
                ("torch.onnx", ["/usr/bin/python3", "-c", TORCH_EXPORT, manifest_path, theirs, str(args.opset)],
                 theirs),
                ("floor", floor_command(args, fixtures, manifest, floor_out), floor_out)]
    read_once(os.path.join(fixtures, manifest["model"]))
    for round_index in range(args.repeat):
        # Each program takes each place in the round in turn, so none always runs right after
        # torch.onnx's (which frees 1-2 GB and deletes its output).
        shift = round_index % len(commands)
        for label, cmd, out in commands[shift:] + commands[:shift]:
            if cmd is None or (label == "torch.onnx" and args.skip_torch):
                continue
            seconds, rss, text = timed_run(cmd)
            if not os.path.exists(out):
                failure[label] = f"{text} (after {seconds:.1f} s, {rss:.0f} MiB)"
            else:
                runs[label].append((seconds, rss))
                if label == "floor":
                    floor_stages.append(floor_parts(text))
                else:
                    nodes[label] = node_count(out)
                if label == "onnxport":
                    stages.append(stage_seconds(text))
            remove_outputs(out)
    return dict(name=name, params_mib=params / 2**20, runs=runs, nodes=nodes, failure=failure, stages=stages,
                floor_stages=floor_stages)


def median(values):
    return statistics.median(values) if values else None


def row_text(r):
    t_ours = median([s for s, _ in r["runs"]["onnxport"]])
    t_torch = median([s for s, _ in r["runs"]["torch.onnx"]])
    t_floor = median([s for s, _ in r["runs"]["floor"]])
    m_ours = median([m for _, m in r["runs"]["onnxport"]])
    m_torch = median([m for _, m in r["runs"]["torch.onnx"]])
    fmt = lambda t, m: "failed" if t is None else f"{t:.2f} s / {m:.0f} MiB"
    ratio = f"{t_ours / t_torch:.2f}" if t_ours and t_torch else "-"
    slowest = {}
    for s in r["stages"]:
        for k, v in s.items():
            slowest.setdefault(k, []).append(v)
    top = sorted(((median(v), k) for k, v in slowest.items()), reverse=True)[:3]
    where = ", ".join(f"{k} {v:.2f}" for v, k in top)
    torch_cell = fmt(t_torch, m_torch) if "torch.onnx" not in r["failure"] else "fails: " + r["failure"]["torch.onnx"]
    floor_cell, over_floor, floor_ratio = "-", "-", "-"
    if t_floor:
        parts = {k: median([p[k] for p in r["floor_stages"] if k in p]) for k in ("load", "forward", "write")}
        floor_cell = f"{t_floor:.2f} s (" + ", ".join(f"{k} {v:.2f}" for k, v in parts.items() if v is not None) + ")"
        # The same round's onnxport time over its floor time: their median and range, since a
        # round's figures move together (page cache, the VM's first touch of fresh memory).
        per_round = [o / f for (o, _), (f, _) in zip(r["runs"]["onnxport"], r["runs"]["floor"])]
        over_floor = (f"{t_ours / t_floor:.2f} (rounds {median(per_round):.2f}, {min(per_round):.2f}-"
                      f"{max(per_round):.2f})" if t_ours and per_round else "-")
        floor_ratio = f"{t_floor / t_torch:.2f}" if t_torch else "-"
    return [r["name"], f"{r['params_mib']:.0f}", fmt(t_ours, m_ours), torch_cell, ratio,
            f"{r['nodes'].get('onnxport', '-')} / {r['nodes'].get('torch.onnx', '-')}", where,
            floor_cell, over_floor, floor_ratio]


HEADER = ["model", "params MiB", "onnxport (median time / peak RSS)", "torch.onnx 1.13", "time ratio",
          "nodes (onnxport / torch.onnx)", "onnxport's slowest stages (s)",
          "floor: start-up + (load, forward, write) (s)", "onnxport / floor (per round: median, range)",
          "floor / torch.onnx"]
TABLE_START, TABLE_END = "<!-- bench table -->", "<!-- end bench table -->"


def write_markdown(path, args, rows):
    """The table (with a line on how it was made) between the markers of an existing file, or a new file."""
    machine = f"{os.cpu_count()} cores, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB"
    table = (f"Generated by `tests/bench/bench_export.py` on {time.strftime('%Y-%m-%d')}, {machine}; opset "
             f"{args.opset}, {args.repeat} alternating rounds, medians; each run is a fresh process (peak RSS "
             "from GNU time).\n\n")
    table += "| " + " | ".join(HEADER) + " |\n|" + "---|" * len(HEADER) + "\n"
    for row in rows:
        table += "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |\n"
    text = open(path).read() if os.path.exists(path) else ""
    if TABLE_START in text and TABLE_END in text:
        head, rest = text.split(TABLE_START, 1)
        text = head + TABLE_START + "\n" + table + TABLE_END + rest.split(TABLE_END, 1)[1]
    else:
        text = "# Export benchmark\n\n" + TABLE_START + "\n" + table + TABLE_END + "\n"
    with open(path, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--onnxport", required=True)
    ap.add_argument("--fixtures", action="append", required=True, help="fixture directory (repeatable)")
    ap.add_argument("--model", action="append", required=True)
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--repeat", type=int, default=3, help="alternating rounds per model (medians are reported)")
    ap.add_argument("--skip-torch", action="store_true", help="time onnxport only")
    ap.add_argument("--markdown", help="also write the table into this Markdown file (see above)")
    ap.add_argument("--floor", help="the floor program (default: onnxport_bench_floor beside --onnxport, if built)")
    args = ap.parse_args()
    if not args.floor:
        beside = os.path.join(os.path.dirname(os.path.abspath(args.onnxport)), "onnxport_bench_floor")
        args.floor = beside if os.path.exists(beside) else None
    rows = []
    # torch.onnx's external data for a big model is one file per tensor, beside its output: the
    # whole directory goes at the end, also when a run is interrupted.
    with tempfile.TemporaryDirectory(prefix="onnxport-bench-") as tmp:
        for name in args.model:
            r = bench_model(args, find_fixture(args.fixtures, name), name, tmp)
            rows.append(row_text(r))
            print(" | ".join(rows[-1]), flush=True)
    if args.markdown:
        write_markdown(args.markdown, args, rows)


if __name__ == "__main__":
    sys.exit(main())
