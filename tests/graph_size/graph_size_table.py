#!/usr/bin/python3
"""Graph-size table: onnxport's exported graphs against torch.onnx 1.13's, model by model.

Every zoo model (tests/zoo/make_zoo.py) and every acceptance model (tests/fixtures/make_models.py)
is exported at opsets 11, 13 and 17 twice: by the onnxport CLI and by
torch.onnx.export(torch.jit.load(MODEL.pt), ...), the way tests/zoo/compare_torch_onnx.py does
(its helpers are imported, not copied). Per model x opset and exporter the table records the
node count (top-level graph, and with the nodes of sub-graphs), the number of initializers,
their bytes (element count x element size, whether stored inline or as external data) and the
file size (external data included); or, when an export fails, the first line of the reason.

Modes (a Markdown table of every row goes to stdout in each):
  (none)                     measure and print
  --check BASELINE.json      also fail (exit 1) when onnxport has more nodes or more initializer
                             bytes than torch.onnx on a row the baseline does not list as a known
                             excess, when a known excess grew beyond its baseline figures, when
                             onnxport fails where the baseline says it exported, or when a row is
                             missing from the run or from the baseline
  --write-baseline FILE      write the table as the new baseline, keeping the reasons of rows that
                             are still excesses (new excesses get an empty reason to fill in)

Speed: the exports of one model run in one Python process (a worker started per model: torch.onnx
in-process, onnxport as a subprocess); torch.onnx's figures are cached in WORK/torch_onnx_cache.json
keyed by the .pt's mtime and size, the opset and the torch version, so a re-run in the same build
tree exports with onnxport only (in this process then). With --check, --torch-from-baseline takes
torch.onnx's figures from the baseline itself when it was written with the installed torch and
onnx (what CI runs: a fresh build tree has no cache, and torch.onnx's exports were most of the
test's time). Every .onnx file is deleted once measured (--keep-onnx keeps them in WORK for a
closer look).

Usage: /usr/bin/python3 graph_size_table.py [--check FILE | --write-baseline FILE]
           [--onnxport build/bin/onnxport] [--zoo build/fixtures/zoo] [--models build/fixtures/models]
           [--work build/graph-size] [--opset N]... [--only NAME]... [--keep-onnx] [--torch-from-baseline]
"""
import argparse
import collections
import hashlib
import json
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "zoo"))
import compare_torch_onnx  # noqa: E402  (imports torch, make_zoo and make_models)
import make_models  # noqa: E402
import make_zoo  # noqa: E402
import torch  # noqa: E402

OPSETS = (11, 13, 17)
EXPORTERS = ("onnxport", "torch.onnx")
# Figures compared with torch.onnx's (and, for a known excess, with the baseline's).
COMPARED = ("nodes", "nodes_total", "init_bytes")
# Figures kept in the baseline (the op histogram "ops" is only printed).
RECORDED = ("nodes", "nodes_total", "initializers", "init_bytes", "file_bytes")
CACHE_NAME = "torch_onnx_cache.json"


# ---------------------------------------------------------------- the models

class Fixture:
    """One model of the table: ID is "acceptance/NAME" or "zoo/NAME"."""

    def __init__(self, group, name, directory):
        self.group, self.name, self.directory = group, name, os.path.abspath(directory)
        self.id = f"{group}/{name}"
        self.manifest_path = os.path.join(self.directory, f"{name}.json")

    def load(self):
        """(manifest, input files, .pt path) via compare_torch_onnx.load_fixture."""
        manifest, inputs = compare_torch_onnx.load_fixture(self.directory, self.name)
        return manifest, inputs, os.path.join(self.directory, manifest["model"])


def all_fixtures(options):
    fixtures = [Fixture("acceptance", name, options.models) for name in make_models.MODELS]
    fixtures += [Fixture("zoo", name, options.zoo) for name in make_zoo.ZOO]
    if options.only:
        fixtures = [f for f in fixtures if f.name in options.only or f.id in options.only]
    return fixtures


# ---------------------------------------------------------------- exporting

class ExportFailed(Exception):
    pass


def first_error_line(run):
    """The line saying why the onnxport CLI failed: its 'onnxport: <kind>: ...' line, not a hint
    or a warning; the first output line otherwise; the exit status when there is no output."""
    lines = [line.strip() for line in (run.stderr + "\n" + run.stdout).splitlines() if line.strip()]
    for line in lines:
        if line.startswith("onnxport: ") and not line.startswith("onnxport: warning:"):
            return line
    if lines:
        return lines[0]
    if run.returncode < 0:
        return f"onnxport killed by {signal.Signals(-run.returncode).name}"
    return f"onnxport exited with status {run.returncode} and no message"


def export_onnxport(cli, pt, manifest, inputs, out, opset):
    """The CLI as tests/integration/run_model_test.sh calls it (exact inputs from the .npy files).
    compare_torch_onnx.export_onnxport is not used: its opset is fixed and it keeps the last
    line of a failure (a hint), where this table wants the first."""
    cmd = [cli, "export", pt, "-o", out, "--opset", str(opset)]
    for entry, file in zip(manifest["inputs"], inputs):
        cmd += ["--input", f"{entry['name']}={file}"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise ExportFailed(first_error_line(run))


def export_torch_onnx(fixture_dir, manifest, inputs, out, opset):
    """compare_torch_onnx.export_torch_onnx (torch.jit.load + torch.onnx.export with the manifest's
    input names and argument nesting) at `opset`: that helper reads its module's OPSET on each call."""
    compare_torch_onnx.OPSET = opset
    try:
        compare_torch_onnx.export_torch_onnx(fixture_dir, manifest, inputs, out)
    finally:
        compare_torch_onnx.OPSET = 17


# ---------------------------------------------------------------- measuring

def graphs_of(graph):
    """The graph and all its sub-graphs (If branches, Loop/Scan bodies), depth first."""
    yield graph
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                yield from graphs_of(attribute.g)
            elif attribute.type == onnx.AttributeProto.GRAPHS:
                for sub in attribute.graphs:
                    yield from graphs_of(sub)


def tensor_bytes(tensor):
    """Bytes of the tensor's values as raw data, wherever they are stored."""
    if tensor.data_type == onnx.TensorProto.STRING:
        return sum(len(s) for s in tensor.string_data)
    count = math.prod(tensor.dims)
    return count * np.dtype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[tensor.data_type]).itemsize


def parameter_index(pt):
    """{(dtype, shape, digest of the bytes): [state_dict names]} of the saved module's parameters
    and buffers: what an initializer holding a parameter unchanged must be named after."""
    import torch  # the worker and the main process both have it (compare_torch_onnx imports it)
    index = collections.defaultdict(list)
    for name, tensor in torch.jit.load(pt, map_location="cpu").state_dict().items():
        if tensor.is_quantized or tensor.numel() < 2:
            continue
        array = tensor.detach().contiguous().numpy()
        index[(array.dtype.str, array.shape, hashlib.sha1(array.tobytes()).hexdigest())].append(name)
    return index


def misnamed_parameters(model, index):
    """Initializers that hold a parameter's values unchanged under another name than its path."""
    misnamed = []
    for graph in graphs_of(model.graph):
        for tensor in graph.initializer:
            if math.prod(tensor.dims) < 2 or tensor.data_location == onnx.TensorProto.EXTERNAL:
                continue
            array = np.ascontiguousarray(numpy_helper.to_array(tensor))
            names = index.get((array.dtype.str, array.shape, hashlib.sha1(array.tobytes()).hexdigest()))
            if names and tensor.name not in names:
                misnamed.append(f"{tensor.name} holds {names[0]}")
    return misnamed


def measure(path, parameters=None):
    """The figures of one .onnx file (its external data files are not read, only sized); with
    `parameters` (parameter_index), also the initializers that hold a parameter under another name."""
    model = onnx.load(path, load_external_data=False)
    all_graphs = list(graphs_of(model.graph))
    initializers = [t for g in all_graphs for t in g.initializer]
    ops = collections.Counter(
        (f"{n.domain}::{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type)
        for g in all_graphs for n in g.node)
    data_files = {os.path.join(os.path.dirname(path), e.value)
                  for t in initializers for e in t.external_data if e.key == "location"}
    figures = {
        "nodes": len(model.graph.node),  # == compare_torch_onnx.node_count(path)
        "nodes_total": sum(len(g.node) for g in all_graphs),
        "initializers": len(initializers),
        "init_bytes": sum(tensor_bytes(t) for t in initializers),
        "file_bytes": os.path.getsize(path) + sum(os.path.getsize(f) for f in data_files if os.path.exists(f)),
        "ops": dict(sorted(ops.items())),
    }
    if parameters is not None:
        figures["misnamed_parameters"] = misnamed_parameters(model, parameters)
    return figures


def remove_onnx(path):
    """Delete an exported file and any external data written beside it."""
    stem = os.path.basename(path)
    directory = os.path.dirname(path)
    for entry in os.listdir(directory):
        if entry == stem or entry.startswith(stem + "."):
            os.remove(os.path.join(directory, entry))


def measure_model(fixture, opsets, torch_opsets, cli, work, keep, save=None):
    """Export one model with onnxport at every opset and with torch.onnx at `torch_opsets`.

    Returns {opset: {exporter: figures | {"error": reason}}}; save(result) is called after each
    export, so a worker that dies still reports what it finished."""
    manifest, inputs, pt = fixture.load()
    parameters = parameter_index(pt)
    result = {}
    for opset in opsets:
        cell = result.setdefault(str(opset), {})
        jobs = [("onnxport", lambda out: export_onnxport(cli, pt, manifest, inputs, out, opset))]
        if opset in torch_opsets:
            jobs.append(("torch.onnx", lambda out: export_torch_onnx(fixture.directory, manifest, inputs, out, opset)))
        for exporter, export in jobs:
            out = os.path.join(work, f"{fixture.group}.{fixture.name}.opset{opset}.{exporter.replace('.', '_')}.onnx")
            remove_onnx(out)
            start = time.perf_counter()
            try:
                export(out)
                seconds = time.perf_counter() - start
                cell[exporter] = measure(out, parameters if exporter == "onnxport" else None)
            except Exception as e:  # noqa: BLE001 - any failure is a table entry
                seconds = time.perf_counter() - start
                text = str(e).strip() or type(e).__name__
                cell[exporter] = {"error": text.splitlines()[0][:300]}
            finally:
                if not keep:
                    remove_onnx(out)
            cell[exporter]["seconds"] = round(seconds, 2)
            outcome = "failed" if "error" in cell[exporter] else f"{cell[exporter]['nodes_total']} nodes"
            print(f"  {fixture.id} opset {opset} {exporter}: {outcome} ({seconds:.1f} s)", file=sys.stderr, flush=True)
            if save:
                save(result)
    return result


def write_json(path, value):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(value, f)
    os.replace(tmp, path)


def worker_main(options):
    """--worker: one model's exports in this process; the result goes to --result as JSON."""
    fixture = Fixture(options.group, options.name, options.fixture_dir)
    measure_model(fixture, options.opset, set(options.torch_opset or []), options.onnxport, options.work,
                  options.keep_onnx, save=lambda result: write_json(options.result, result))
    return 0


# ---------------------------------------------------------------- the torch.onnx cache

def pt_stamp(fixture):
    manifest, _, pt = fixture.load()
    stat = os.stat(pt)
    return {"pt": pt, "mtime_ns": stat.st_mtime_ns, "size": stat.st_size, "torch": torch.__version__}


class TorchCache:
    """torch.onnx's figures per model x opset, valid while the .pt's mtime/size and torch stay."""

    def __init__(self, work):
        self.path = os.path.join(work, CACHE_NAME)
        try:
            with open(self.path) as f:
                self.entries = json.load(f)
        except (OSError, ValueError):
            self.entries = {}

    def get(self, fixture, opset, stamp):
        entry = self.entries.get(f"{fixture.id}@{opset}")
        if entry and entry["stamp"] == stamp:
            return entry["figures"]
        return None

    def put(self, fixture, opset, stamp, figures):
        self.entries[f"{fixture.id}@{opset}"] = {"stamp": stamp, "figures": figures}

    def save(self):
        write_json(self.path, self.entries)


# ---------------------------------------------------------------- running the table

def run_table(options, recorded):
    """{(model id, opset): {exporter: figures | {"error": ...}}} for every fixture and opset;
    torch.onnx's figures come from `recorded` ({(model id, opset): figures}), else the cache, else
    an export."""
    os.makedirs(options.work, exist_ok=True)
    cache = TorchCache(options.work)
    rows = {}
    exported = cached = 0
    for fixture in all_fixtures(options):
        if not os.path.exists(fixture.manifest_path):
            missing = {"error": f"fixture missing: {fixture.manifest_path}"}
            for opset in options.opset:
                rows[(fixture.id, opset)] = {exporter: dict(missing) for exporter in EXPORTERS}
            continue
        stamp = pt_stamp(fixture)
        known = {opset: recorded.get((fixture.id, opset)) or cache.get(fixture, opset, stamp)
                 for opset in options.opset}
        needed = [opset for opset, figures in known.items() if figures is None]
        start = time.perf_counter()
        print(f"{fixture.id}: torch.onnx at {needed or 'no opset (cached)'}", file=sys.stderr, flush=True)
        if needed:
            result = run_worker(options, fixture, needed)
        else:  # onnxport only: no need for a fresh Python process
            result = measure_model(fixture, options.opset, set(), options.onnxport, options.work, options.keep_onnx)
        for opset in options.opset:
            cell = result.get(str(opset), {})
            cell.setdefault("onnxport", {"error": "worker died before this export (see its output above)"})
            if opset in needed:
                if "torch.onnx" in cell:
                    cache.put(fixture, opset, stamp, cell["torch.onnx"])
                    exported += 1
                else:
                    cell["torch.onnx"] = {"error": "worker died before this export (see its output above)"}
            else:
                cell["torch.onnx"] = known[opset]
                cached += 1
            rows[(fixture.id, opset)] = cell
        cache.save()
        print(f"{fixture.id}: done in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    return rows, exported, cached


def run_worker(options, fixture, torch_opsets):
    result_file = os.path.join(options.work, f"{fixture.group}.{fixture.name}.result.json")
    if os.path.exists(result_file):
        os.remove(result_file)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--group", fixture.group, "--name", fixture.name,
           "--fixture-dir", fixture.directory, "--result", result_file, "--onnxport", options.onnxport,
           "--work", options.work]
    cmd += [arg for opset in options.opset for arg in ("--opset", str(opset))]
    cmd += [arg for opset in torch_opsets for arg in ("--torch-opset", str(opset))]
    if options.keep_onnx:
        cmd.append("--keep-onnx")
    # The worker's own output (torch warnings, progress) goes to stderr: stdout is the table's.
    status = subprocess.run(cmd, stdout=sys.stderr).returncode
    if status != 0:
        print(f"{fixture.id}: worker exited with status {status}", file=sys.stderr, flush=True)
    try:
        with open(result_file) as f:
            result = json.load(f)
        os.remove(result_file)
    except (OSError, ValueError):
        result = {}
    return result


# ---------------------------------------------------------------- judging against the baseline

def is_error(figures):
    return figures is None or "error" in figures


def excess_of(cell):
    """The compared figures where onnxport is above torch.onnx ({} if either export failed)."""
    op, ref = cell["onnxport"], cell["torch.onnx"]
    if is_error(op) or is_error(ref):
        return {}
    return {m: (op[m], ref[m]) for m in COMPARED if op[m] > ref[m]}


def judge(key, cell, base):
    """(verdict text, failed?, notes) of one row measured now, against its baseline row."""
    op, ref = cell["onnxport"], cell["torch.onnx"]
    notes = []
    if base is None:
        return "**FAIL**: row not in the baseline (--write-baseline)", True, notes
    base_op = base.get("onnxport")
    if not is_error(ref) and not is_error(base.get("torch.onnx")):
        changed = [m for m in RECORDED if ref[m] != base["torch.onnx"][m]]
        if changed:
            notes.append(f"torch.onnx figures differ from the baseline's ({', '.join(changed)}): another torch build?")
    if is_error(op):
        if is_error(base_op):
            return "onnxport fails (as in the baseline)", False, notes
        return "**FAIL**: onnxport export fails; the baseline has it exporting", True, notes
    misnamed = op.get("misnamed_parameters") or []
    if misnamed:
        return f"**FAIL**: parameters not named by their path: {'; '.join(misnamed[:3])}", True, notes
    if is_error(ref):
        return "no torch.onnx reference", False, notes
    over = excess_of(cell)
    reason = (base.get("known_excess") or "").strip()
    grown = [] if is_error(base_op) else [m for m in COMPARED if op[m] > base_op[m]]
    shrunk = [] if is_error(base_op) else [m for m in COMPARED if op[m] < base_op[m]]
    if shrunk:
        notes.append(f"onnxport below its baseline figures ({', '.join(shrunk)}): --write-baseline records the gain")
    over_text = ", ".join(f"{m} {a} > {b}" for m, (a, b) in over.items())
    if not over:
        if reason:
            notes.append("no longer an excess: --write-baseline drops its reason")
        return "ok", False, notes
    if not reason:
        return f"**FAIL**: more than torch.onnx ({over_text}) and not a known excess", True, notes
    if grown:
        grown_text = ", ".join(f"{m} {op[m]} > baseline {base_op[m]}" for m in grown)
        return f"**FAIL**: known excess grew ({grown_text})", True, notes
    return f"known excess ({over_text})", False, notes


def baseline_rows(baseline):
    return {(row["model"], row["opset"]): row for row in baseline.get("rows", [])} if baseline else {}


def load_baseline(path):
    with open(path) as f:
        return json.load(f)


def torch_figures_of(baseline, path, parser):
    """{(model id, opset): torch.onnx's figures} recorded in the baseline, which must come from the
    torch and onnx installed here (another version exports other graphs)."""
    versions = {"torch": torch.__version__, "onnx": onnx.__version__}
    stale = [f"{name} {baseline.get(name)} (installed: {version})" for name, version in versions.items()
             if baseline.get(name) != version]
    if stale:
        parser.error(f"--torch-from-baseline: {path} was written with {', '.join(stale)}: "
                     "run without it to export with torch.onnx, or rewrite the baseline")
    return {key: row["torch.onnx"] for key, row in baseline_rows(baseline).items() if "torch.onnx" in row}


def row_figures(figures):
    if is_error(figures):
        return {"error": figures["error"] if figures else "missing"}
    return {m: figures[m] for m in RECORDED}


def write_baseline(path, rows, old_rows, measured):
    """The baseline: one row per model x opset, kept rows of models not measured this run (--only),
    reasons carried over for rows that are still excesses; returns the excess keys lacking one."""
    merged = {key: row for key, row in old_rows.items() if not measured(key)}
    unexplained = []
    for key, cell in rows.items():
        row = {"model": key[0], "opset": key[1]}
        row.update({e: row_figures(cell[e]) for e in EXPORTERS})
        if excess_of(cell):
            reason = (old_rows.get(key, {}).get("known_excess") or "").strip()
            row["known_excess"] = reason
            if not reason:
                unexplained.append(key)
        merged[key] = row
    order = {fixture_id: k for k, fixture_id in enumerate(
        [f"acceptance/{n}" for n in make_models.MODELS] + [f"zoo/{n}" for n in make_zoo.ZOO])}
    keys = sorted(merged, key=lambda k: (order.get(k[0], len(order)), k[0], k[1]))
    lines = [json.dumps(merged[k]) for k in keys]
    text = ('{\n"about": "tests/graph_size: onnxport vs torch.onnx graph sizes; regenerate with '
            'graph_size_table.py --write-baseline, then give every empty known_excess a one-line reason",\n'
            f'"torch": {json.dumps(torch.__version__)},\n"onnx": {json.dumps(onnx.__version__)},\n'
            '"rows": [\n' + ",\n".join(lines) + "\n]\n}\n")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    return unexplained


# ---------------------------------------------------------------- the Markdown table

def mib(n):
    return f"{n / 2**20:.2f} MiB" if n >= 2**20 else f"{n / 2**10:.1f} KiB"


def pair(cell, fmt):
    texts = []
    for exporter in EXPORTERS:
        figures = cell[exporter]
        texts.append("failed" if is_error(figures) else fmt(figures))
    return " / ".join(texts)


def nodes_text(figures):
    if figures["nodes_total"] != figures["nodes"]:
        return f"{figures['nodes_total']} ({figures['nodes']} top)"
    return str(figures["nodes"])


def op_difference(cell):
    """onnxport minus torch.onnx per op type, biggest differences first."""
    a = collections.Counter(cell["onnxport"].get("ops", {}))
    b = collections.Counter(cell["torch.onnx"].get("ops", {}))
    diff = {op: a[op] - b[op] for op in set(a) | set(b) if a[op] != b[op]}
    return ", ".join(f"{op} {d:+d}" for op, d in sorted(diff.items(), key=lambda kv: (-abs(kv[1]), kv[0])))


def plain_verdict(cell):
    """Without a baseline: what the comparison with torch.onnx says."""
    if is_error(cell["onnxport"]) or is_error(cell["torch.onnx"]):
        return "—"
    return ", ".join(f"more {m}" for m in excess_of(cell)) or "ok"


def print_table(rows, verdicts, missing):
    print("| model | opset | nodes onnxport / torch.onnx | initializers | initializer bytes | file size | verdict |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for key, cell in rows.items():
        print("| " + " | ".join([
            key[0], str(key[1]),
            pair(cell, nodes_text),
            pair(cell, lambda f: str(f["initializers"])),
            pair(cell, lambda f: f"{f['init_bytes']:,}"),
            pair(cell, lambda f: mib(f["file_bytes"])),
            verdicts[key][0]]) + " |")
    for key in missing:
        print(f"| {key[0]} | {key[1]} | — | — | — | — | **FAIL**: in the baseline, not in this run |")
    details = []
    for key, cell in rows.items():
        for exporter in EXPORTERS:
            if is_error(cell[exporter]):
                details.append(f"- {key[0]} opset {key[1]}, {exporter} failed: {cell[exporter]['error']}")
        if excess_of(cell):
            details.append(f"- {key[0]} opset {key[1]}, ops onnxport − torch.onnx: {op_difference(cell)}")
        for note in verdicts[key][2]:
            details.append(f"- {key[0]} opset {key[1]}: {note}")
    if details:
        print()
        print("\n".join(details))


# ---------------------------------------------------------------- main

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", metavar="BASELINE", help="judge the table against this baseline (exit 1 on failure)")
    mode.add_argument("--write-baseline", metavar="BASELINE", help="write the table as the baseline")
    mode.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--onnxport", default=os.path.join(ROOT, "build", "bin", "onnxport"))
    parser.add_argument("--zoo", default=os.path.join(ROOT, "build", "fixtures", "zoo"), help="zoo fixtures")
    parser.add_argument("--models", default=os.path.join(ROOT, "build", "fixtures", "models"),
                        help="acceptance-model fixtures")
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "graph-size"),
                        help="scratch .onnx files and the torch.onnx cache")
    parser.add_argument("--opset", action="append", type=int, help=f"opset (repeatable; default {OPSETS})")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="this model only (NAME or acceptance/NAME, zoo/NAME; repeatable)")
    parser.add_argument("--keep-onnx", action="store_true", help="keep the exported .onnx files in --work")
    parser.add_argument("--torch-from-baseline", action="store_true",
                        help="with --check: take torch.onnx's figures from the baseline (written with the "
                             "installed torch and onnx) instead of exporting")
    # --worker's own arguments
    parser.add_argument("--group", help=argparse.SUPPRESS)
    parser.add_argument("--name", help=argparse.SUPPRESS)
    parser.add_argument("--fixture-dir", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    parser.add_argument("--torch-opset", action="append", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args()
    options.opset = sorted(set(options.opset or OPSETS))
    options.work = os.path.abspath(options.work)
    options.onnxport = os.path.abspath(options.onnxport)
    if options.worker:
        return worker_main(options)

    if options.only:
        known_names = set(make_models.MODELS) | set(make_zoo.ZOO)
        known_names |= {f"acceptance/{n}" for n in make_models.MODELS} | {f"zoo/{n}" for n in make_zoo.ZOO}
        unknown = [n for n in options.only if n not in known_names]
        if unknown:
            parser.error(f"unknown model(s): {', '.join(unknown)}")
    if options.check and not os.path.exists(options.check):
        parser.error(f"no baseline {options.check}: write one with --write-baseline")
    if not os.access(options.onnxport, os.X_OK):
        parser.error(f"no onnxport CLI at {options.onnxport}")

    baseline_path = options.check or options.write_baseline
    baseline = load_baseline(baseline_path) if baseline_path and os.path.exists(baseline_path) else None
    recorded = {}
    if options.torch_from_baseline:
        if not options.check:
            parser.error("--torch-from-baseline needs --check BASELINE")
        recorded = torch_figures_of(baseline, options.check, parser)

    start = time.perf_counter()
    rows, exported, cached = run_table(options, recorded)
    seconds = time.perf_counter() - start

    old_rows = baseline_rows(baseline)
    selected_ids = {f.id for f in all_fixtures(options)}

    restricted = bool(options.only or options.opset != list(OPSETS))

    def measured(key):
        """A baseline row this run answers for: every row, unless --only/--opset narrow the run."""
        return not restricted or (key[0] in selected_ids and key[1] in options.opset)
    if options.check:
        verdicts = {key: judge(key, cell, old_rows.get(key)) for key, cell in rows.items()}
        missing = [key for key in old_rows if key not in rows and measured(key)]
    else:
        verdicts = {key: (plain_verdict(cell), False, []) for key, cell in rows.items()}
        missing = []
    print_table(rows, verdicts, missing)
    source = f"the baseline {options.check}" if recorded else f"the cache in {os.path.join(options.work, CACHE_NAME)}"
    print(f"\n{len(rows)} rows in {seconds:.0f} s ({exported} torch.onnx exports, {cached} from {source})",
          file=sys.stderr)

    if options.write_baseline:
        unexplained = write_baseline(options.write_baseline, rows, old_rows, measured)
        print(f"wrote {options.write_baseline}", file=sys.stderr)
        for key in unexplained:
            print(f"  {key[0]} opset {key[1]}: excess with an empty known_excess: write its reason",
                  file=sys.stderr)
        return 0
    if options.check:
        failures = [key for key, verdict in verdicts.items() if verdict[1]] + missing
        if failures:
            print(f"\nFAILED: {len(failures)} row(s): " + ", ".join(f"{m} opset {o}" for m, o in failures))
            return 1
        print("\nall rows within torch.onnx's figures or their known excess")
    return 0


if __name__ == "__main__":
    sys.exit(main())
