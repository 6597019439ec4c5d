#!/usr/bin/python3
"""The torchaudio suite: torchaudio 0.13 transforms, filters and models, scripted and traced,
exported by the onnxport CLI and judged by ONNX Runtime against PyTorch.

Rows are "<case>.<mode>.opset<N>" (audio_cases.py: cases, modes script/trace, opsets 13 and 17,
also 11 for the STFT-based transforms). For each row:
  1. make_torchaudio.py (cached in the build tree) has saved the torch.jit.script/trace module, its
     inputs and its outputs; if PyTorch itself cannot script/trace the case the row is
     not-scriptable-in-torch (skipped, not a failure);
  2. `onnxport export` writes the ONNX file (--mode script for scripted .pt files, trace for traced
     ones; --load-op-library libtorchaudio.so when the .pt calls torchaudio::* ops);
  3. tests/integration/ort_compare.js runs it in ONNX Runtime and compares every output with
     PyTorch's (per-case rtol/atol; a complex output as torch.view_as_real).
Each row ends pass, fail (first line of onnxport's error, ONNX Runtime's error, or the max abs
diff) or not-scriptable-in-torch. Prints the table and pass/fail counts per opset, writes
summary.json and summary.md in --work.

Expectations (tests/torchaudio/expected_failures.txt, "<row id> <reason>" per line): the run
passes when exactly the listed rows among those run fail. It fails when a row fails that is not
listed, when a listed row passes (or is not-scriptable-in-torch: delete the line), and when a
listed id is no row of the suite at all.

Every case runs by default (70 s on 2 idle cores, 2.5 minutes on a busy machine); --sample runs
a fixed quick subset (audio_cases.SAMPLE); --only CASE / --opset N / --mode M narrow the run.
--torch-onnx also exports every row with torch.onnx.export (torch 1.13) and runs that file in ONNX
Runtime the same way, for an "onnxport vs torch.onnx" count (not part of the verdict).

usage: /usr/bin/python3 run_torchaudio.py [--sample] [--only CASE]... [--opset N]... [--mode M]...
           [--torch-onnx] [--onnxport BIN] [--node NODE] [--fixtures DIR] [--work DIR]
           [--expected FILE] [--jobs N] [--keep-onnx] [--no-generate] [--update-expected]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from audio_cases import CASES, SAMPLE  # noqa: E402

ORT_COMPARE = os.path.join(ROOT, "tests", "integration", "ort_compare.js")
EXPECTED = os.path.join(HERE, "expected_failures.txt")
EXPORT_TIMEOUT = 600
ORT_TIMEOUT = 900
PASS, FAIL, SKIP = "pass", "fail", "not-scriptable-in-torch"


def torchaudio_library():
    import torchaudio
    return os.path.join(os.path.dirname(torchaudio.__file__), "lib", "libtorchaudio.so")


# ---------------------------------------------------------------- rows

class Row:
    def __init__(self, case, mode, opset):
        self.case, self.mode, self.opset = case, mode, opset
        self.id = f"{case}.{mode}.opset{opset}"
        self.status, self.reason = None, ""
        self.manifest = None          # fixture manifest (dict) when PyTorch scripted/traced it
        self.onnx = None              # onnxport's file once exported
        self.export_seconds = None
        self.torch_onnx = None        # (status, reason) with --torch-onnx

    def summary(self):
        record = {"id": self.id, "case": self.case, "mode": self.mode, "opset": self.opset, "status": self.status,
                  "reason": self.reason, "export_seconds": self.export_seconds, "note": CASES[self.case].note,
                  "complex_outputs": bool(self.manifest and self.manifest["complex_outputs"])}
        if self.torch_onnx:
            record["torch_onnx"] = {"status": self.torch_onnx[0], "reason": self.torch_onnx[1]}
        return record


def all_row_ids():
    return {f"{name}.{mode}.opset{opset}" for name, case in CASES.items() for mode in case.modes
            for opset in case.opsets}


def select_rows(options):
    names = options.only or [n for n in CASES if n in SAMPLE or not options.sample]
    rows = []
    for name in names:
        case = CASES[name]
        for mode in case.modes:
            if options.mode and mode not in options.mode:
                continue
            for opset in case.opsets:
                if not options.opset or opset in options.opset:
                    rows.append(Row(name, mode, opset))
    return names, rows


# ---------------------------------------------------------------- fixtures

def generate(options, names):
    cmd = [options.python, os.path.join(HERE, "make_torchaudio.py"), options.fixtures]
    for name in names:
        cmd += ["--only", name]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit("run_torchaudio: make_torchaudio.py failed")
    print(proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else "fixtures ready", flush=True)


def load_fixture(options, row):
    stem = os.path.join(options.fixtures, f"{row.case}.{row.mode}")
    try:
        with open(stem + ".status.json") as f:
            status = json.load(f)
    except OSError:
        raise SystemExit(f"run_torchaudio: no fixture {stem}.status.json (run make_torchaudio.py or drop --no-generate)")
    if status["status"] != "ok":
        row.status, row.reason = SKIP, status["reason"]
        return
    with open(stem + ".json") as f:
        row.manifest = json.load(f)


# ---------------------------------------------------------------- onnxport

def onnxport_error(stderr, stdout):
    """onnxport's error line, shortened: the message without its '(op ..., pack ..., model ...)'
    context and hint, plus the source line it names; for 'unsupported op: N operators have no
    mapping at opset K:' the ops listed on the lines after it."""
    lines = [line.rstrip() for line in (stderr or stdout).splitlines() if line.strip()]
    errors = [k for k, line in enumerate(lines) if line.startswith("onnxport:")]
    if not errors:
        return lines[-1].strip()[:300] if lines else "no message"
    k = errors[0]
    text = lines[k][len("onnxport:"):].strip()
    if text.endswith(":"):  # a list follows, one indented line per op
        ops = []
        for line in lines[k + 1:]:
            m = re.match(r"^\s+(\S+) x\d+ in \S+(?: \(supported from opset (\d+)\))?", line)
            if not m:
                break
            ops.append(m.group(1) + (f" (from opset {m.group(2)})" if m.group(2) else ""))
        text = f"{text} {', '.join(ops)}"
    where = re.search(r"\bat (/\S+?|\S+?):(\d+)[,)]", text)
    text = re.split(r" \((?:op |model |the op's )| — ", text)[0]
    if where:
        text += f" [{os.path.basename(where.group(1))}:{where.group(2)}]"
    return re.sub(r"\s+", " ", text)[:300]


def export_onnxport(options, row):
    out = os.path.join(options.work, "onnxport", f"{row.id}.onnx")
    if os.path.exists(out):
        os.remove(out)
    cmd = [options.onnxport, "export", os.path.join(options.fixtures, row.manifest["model"]), "-o", out,
           "--opset", str(row.opset), "--mode", row.mode]
    for entry in row.manifest["inputs"]:
        cmd += ["--input", f"{entry['name']}={os.path.join(options.fixtures, entry['file'])}"]
    if any(op.startswith("torchaudio::") for op in row.manifest["custom_ops"]):
        cmd += ["--load-op-library", options.torchaudio_library]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=EXPORT_TIMEOUT)
    except subprocess.TimeoutExpired:
        row.export_seconds = EXPORT_TIMEOUT
        row.status, row.reason = FAIL, f"export: timed out after {EXPORT_TIMEOUT} s"
        return
    row.export_seconds = round(time.perf_counter() - start, 2)
    if proc.returncode != 0 or not os.path.exists(out):
        row.status = FAIL
        crash = f" (exit status {proc.returncode})" if proc.returncode not in (0, 1) else ""
        row.reason = f"export{crash}: {onnxport_error(proc.stderr, proc.stdout)}"
        return
    row.onnx = out


# ---------------------------------------------------------------- ONNX Runtime

def ort_batch(options, cases, tag):
    """Runs ort_compare.js on cases [{name, onnx, manifest, rtol, atol}]; returns
    {name: (ok, reason)} for every case that got a verdict (a crashed Node process gives none)."""
    cases_file = os.path.join(options.work, f"ort_cases.{tag}.json")
    with open(cases_file, "w") as f:
        json.dump(cases, f, indent=1)
    try:
        proc = subprocess.run([options.node, ORT_COMPARE, "--cases", cases_file], capture_output=True, text=True,
                              timeout=ORT_TIMEOUT)
        stdout = proc.stdout
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
    verdicts, details = {}, {}
    for line in stdout.splitlines():
        m = re.match(r"^  (\S+) out(\d+) ", line)
        if m:
            details.setdefault(m.group(1), []).append(line.strip())
            continue
        m = re.match(r"^(PASS|FAIL) (\S+?)(:| \()(.*)$", line)
        if m:
            name = m.group(2)
            if m.group(1) == "PASS":
                verdicts[name] = (True, "")
            elif m.group(3) == ":":  # the harness's own error: ONNX Runtime could not load or run it
                verdicts[name] = (False, "ONNX Runtime: " + ort_message(m.group(4)))
            else:
                verdicts[name] = (False, mismatch_reason(details.get(name, [])))
    return verdicts


def ort_message(text):
    """ONNX Runtime's error without file paths and C++ source locations/signatures."""
    text = re.sub(r"ONNX Runtime cannot load /\S+?: ", "cannot load: ", text.strip())
    text = re.sub(r"Load model from /\S+ failed: ?", "", text)
    text = re.sub(r"/onnxruntime_src/\S+:\d+ (onnxruntime::[\w:<>~]+\([^)]*\) )?", "", text)
    return text[:300]


def mismatch_reason(lines):
    """From ort_compare's per-output lines: the first failing output's shape/dtype problem or its
    max abs diff."""
    for line in lines:
        if "FAIL" not in line:
            continue
        m = re.match(r"^\S+ (out\d+) \"[^\"]*\" (\S+): (.*)$", line)
        if not m:
            return line[:300]
        output, typed, rest = m.groups()
        if rest.startswith("FAIL "):  # shape or dtype
            return f"{output} {typed}: {rest[len('FAIL '):]}"[:300]
        diff = re.search(r"max_abs_err (\S+)", rest)
        bad = re.search(r"FAIL: (\d+ of \d+) elements", rest)
        return f"max abs diff {diff.group(1) if diff else '?'} ({output} {typed}" + \
            (f", {bad.group(1)} elements out of tolerance)" if bad else ")")
    return "mismatch"


def run_ort(options, items, tag):
    """items: [(key, onnx, manifest_file, rtol, atol)]; returns {key: (ok, reason)}. Cases left
    without a verdict (Node crashed or timed out) are re-run one per process."""
    cases = [{"name": key, "onnx": onnx, "manifest": manifest, "rtol": rtol, "atol": atol}
             for key, onnx, manifest, rtol, atol in items]
    verdicts = ort_batch(options, cases, tag) if cases else {}
    for case in cases:
        if case["name"] not in verdicts:
            single = ort_batch(options, [case], f"{tag}.single")
            verdicts[case["name"]] = single.get(case["name"], (False, "ONNX Runtime: crashed or timed out (no verdict)"))
    return verdicts


def ort_items(options, rows, onnx_of):
    items = []
    for row in rows:
        onnx = onnx_of(row)
        if onnx:
            items.append((row.id, onnx, os.path.join(options.fixtures, f"{row.case}.{row.mode}.json"),
                          row.manifest["rtol"], row.manifest["atol"]))
    return items


def complex_note(row):
    return " [complex output]" if row.manifest and row.manifest["complex_outputs"] else ""


# ---------------------------------------------------------------- torch.onnx

def run_torch_onnx(options, rows):
    """Exports every row PyTorch could script/trace with torch.onnx.export (worker process,
    restarted after a crash or a hang) and judges the files in ONNX Runtime."""
    out_dir = os.path.join(options.work, "torch_onnx")
    os.makedirs(out_dir, exist_ok=True)
    todo = [row for row in rows if row.manifest]
    jobs = {row.id: {"id": row.id, "model": os.path.join(options.fixtures, row.manifest["model"]),
                     "inputs": [os.path.join(options.fixtures, e["file"]) for e in row.manifest["inputs"]],
                     "input_names": [e["name"] for e in row.manifest["inputs"]], "opset": row.opset,
                     "out": os.path.join(out_dir, f"{row.id}.onnx")} for row in todo}
    results = {}
    pending = [row.id for row in todo]
    worker = os.path.join(HERE, "torch_onnx_export.py")
    while pending:
        jobs_file = os.path.join(options.work, "torch_onnx_jobs.json")
        results_file = os.path.join(options.work, "torch_onnx_results.jsonl")
        with open(jobs_file, "w") as f:
            json.dump([jobs[i] for i in pending], f)
        open(results_file, "w").close()
        proc = subprocess.Popen([options.python, worker, jobs_file, results_file],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        current, last_change, seen = None, time.monotonic(), 0
        while proc.poll() is None:
            time.sleep(0.2)
            with open(results_file) as f:
                lines = f.read().splitlines()
            if len(lines) != seen:
                seen, last_change = len(lines), time.monotonic()
            if time.monotonic() - last_change > EXPORT_TIMEOUT:
                proc.kill()
                proc.wait()
                break
        with open(results_file) as f:
            records = [json.loads(line) for line in f.read().splitlines() if line.strip()]
        for record in records:
            if "start" in record:
                current = record["start"]
            else:
                results[record["id"]] = (record["ok"], record["error"])
                current = None
        if current is not None:  # crashed or hung in this job
            results[current] = (False, "torch.onnx.export crashed or timed out (exit status "
                                       f"{proc.returncode})")
        pending = [i for i in pending if i not in results]
    for row in rows:
        if not row.manifest:
            row.torch_onnx = (SKIP, row.reason)
        elif not results[row.id][0]:
            row.torch_onnx = (FAIL, "export: " + results[row.id][1])
    verdicts = run_ort(options, ort_items(options, [r for r in todo if results[r.id][0]],
                                          lambda r: jobs[r.id]["out"]), "torch_onnx")
    for row in todo:
        if row.id in verdicts:
            ok, reason = verdicts[row.id]
            row.torch_onnx = (PASS, "") if ok else (FAIL, reason)
            if ok and not options.keep_onnx:
                os.remove(jobs[row.id]["out"])


# ---------------------------------------------------------------- expectations

def read_expected(path):
    """{row id: reason} from lines "<row id> <reason>"; lines starting with '#' are comments."""
    expected = {}
    if not os.path.exists(path):
        return expected
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            row_id, _, reason = line.partition(" ")
            if row_id in expected:
                raise SystemExit(f"{path}:{number}: {row_id} is listed twice")
            expected[row_id] = reason.strip()
    return expected


def check_expectations(rows, expected, path):
    name = os.path.basename(path)
    problems = []
    known = all_row_ids()
    for row_id in sorted(set(expected) - known):
        problems.append(f"{name} lists {row_id}, which is no row of the suite (remove the line)")
    for row in rows:
        listed = row.id in expected
        if row.status == FAIL and not listed:
            problems.append(f"UNEXPECTED FAILURE {row.id}: {row.reason}")
        elif row.status == PASS and listed:
            problems.append(f"EXPECTED FAILURE NOW PASSES {row.id} (listed: {expected[row.id]}): "
                            f"remove it from {name}")
        elif row.status == SKIP and listed:
            problems.append(f"{row.id} is listed as an expected failure but PyTorch cannot script/trace it "
                            f"({row.reason}): remove the line")
    return problems


def write_expected(path, rows, expected):
    """--update-expected: the listed rows that still fail keep their reason, new failures get
    the reason the run found; rows not run keep their lines."""
    ran = {row.id for row in rows}
    lines = {row_id: reason for row_id, reason in expected.items() if row_id not in ran and row_id in all_row_ids()}
    for row in rows:
        if row.status == FAIL:
            lines[row.id] = expected.get(row.id) or row.reason
    order = {f"{name}.{mode}.opset{opset}": k for k, (name, mode, opset) in enumerate(
        (n, m, o) for n, c in CASES.items() for m in c.modes for o in c.opsets)}
    header = [line for line in open(path).read().splitlines() if line.startswith("#")] if os.path.exists(path) else []
    with open(path, "w") as f:
        f.write("\n".join(header + [f"{i} {lines[i]}" for i in sorted(lines, key=order.get)]) + "\n")


# ---------------------------------------------------------------- report

def counts(rows, key=lambda r: r.status):
    table = {}
    for row in rows:
        per = table.setdefault(row.opset, {PASS: 0, FAIL: 0, SKIP: 0})
        per[key(row)] += 1
    return dict(sorted(table.items()))


def markdown(rows, options, timings, with_torch):
    head = "| row | status | reason |" + (" torch.onnx |" if with_torch else "")
    lines = [head, "|---|---|---|" + ("---|" if with_torch else "")]
    for row in rows:
        cells = [row.id, row.status, (row.reason + complex_note(row) if row.status == FAIL else row.reason)
                 .replace("|", "\\|")]
        if with_torch:
            status, reason = row.torch_onnx
            cells.append(status if status != FAIL else f"fail: {reason}".replace("|", "\\|"))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("| opset | onnxport pass | onnxport fail | not scriptable/traceable in torch |"
                 + (" torch.onnx pass | torch.onnx fail |" if with_torch else ""))
    lines.append("|---:|---:|---:|---:|" + ("---:|---:|" if with_torch else ""))
    torch_counts = counts(rows, lambda r: r.torch_onnx[0]) if with_torch else {}
    for opset, c in counts(rows).items():
        cells = [str(opset), str(c[PASS]), str(c[FAIL]), str(c[SKIP])]
        if with_torch:
            cells += [str(torch_counts[opset][PASS]), str(torch_counts[opset][FAIL])]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Timings: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))
    return "\n".join(lines) + "\n"


def print_table(rows, with_torch):
    width = max(len(r.id) for r in rows)
    for row in rows:
        reason = row.reason + (complex_note(row) if row.status == FAIL else "")
        line = f"{row.id:<{width}}  {row.status:<23}  {reason}"
        if with_torch:
            status, why = row.torch_onnx
            line += f"  | torch.onnx: {status}" + (f" ({why[:120]})" if status == FAIL else "")
        print(line)


# ---------------------------------------------------------------- main

def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--onnxport", default=os.path.join(ROOT, "build", "bin", "onnxport"))
    p.add_argument("--node", default="node")
    p.add_argument("--python", default=sys.executable, help="Python with torch/torchaudio for the fixtures")
    p.add_argument("--fixtures", default=os.path.join(ROOT, "build", "tests", "torchaudio", "fixtures"))
    p.add_argument("--work", default=os.path.join(ROOT, "build", "tests", "torchaudio", "work"))
    p.add_argument("--expected", default=EXPECTED)
    p.add_argument("--sample", action="store_true",
                   help="only the quick subset audio_cases.SAMPLE (one case of each kind); default: every case")
    p.add_argument("--only", action="append", choices=sorted(CASES), metavar="CASE")
    p.add_argument("--opset", type=int, action="append")
    p.add_argument("--mode", action="append", choices=["script", "trace"])
    p.add_argument("--jobs", type=int, default=2, help="parallel exports")
    p.add_argument("--torch-onnx", action="store_true", help="also export with torch.onnx.export and count")
    p.add_argument("--keep-onnx", action="store_true", help="keep the ONNX files of passing rows")
    p.add_argument("--no-generate", action="store_true", help="use the fixtures as they are")
    p.add_argument("--update-expected", action="store_true",
                   help="rewrite --expected from this run's failures (keeps the reasons of listed rows)")
    options = p.parse_args()
    options.fixtures, options.work = os.path.abspath(options.fixtures), os.path.abspath(options.work)
    os.makedirs(os.path.join(options.work, "onnxport"), exist_ok=True)
    options.torchaudio_library = torchaudio_library()

    probe = subprocess.run([options.onnxport, "--version"], capture_output=True, text=True)
    if probe.returncode != 0:  # e.g. a library half-written by a concurrent build
        print(f"run_torchaudio: {options.onnxport} does not run: {(probe.stderr or probe.stdout).strip()[:300]}",
              file=sys.stderr)
        return 2

    timings = {}
    start = time.perf_counter()
    names, rows = select_rows(options)
    if not rows:
        p.error("no rows selected")
    if not options.no_generate:
        generate(options, names)
    timings["fixtures"] = time.perf_counter() - start
    for row in rows:
        load_fixture(options, row)

    stage = time.perf_counter()
    to_export = [row for row in rows if row.manifest]
    done = [0]
    lock = threading.Lock()

    def export(row):
        export_onnxport(options, row)
        with lock:
            done[0] += 1
            if done[0] % 20 == 0:
                print(f"  exported {done[0]}/{len(to_export)}", flush=True)
    with ThreadPoolExecutor(options.jobs) as pool:
        list(pool.map(export, to_export))
    timings["onnxport export"] = time.perf_counter() - stage
    broken = [row.id for row in to_export if row.reason.startswith("export (exit status 127)")]
    if broken:  # the CLI could not even start: no verdict on the rows
        print(f"run_torchaudio: {options.onnxport} failed to start for {len(broken)} rows (e.g. {broken[0]}: "
              f"{next(r.reason for r in rows if r.id == broken[0])}); was it rebuilt during the run? Run again.",
              file=sys.stderr)
        return 2

    stage = time.perf_counter()
    verdicts = run_ort(options, ort_items(options, rows, lambda r: r.onnx), "onnxport")
    for row in rows:
        if row.onnx:
            ok, reason = verdicts[row.id]
            row.status, row.reason = (PASS, "") if ok else (FAIL, reason)
            if ok and not options.keep_onnx:
                os.remove(row.onnx)
    timings["ONNX Runtime"] = time.perf_counter() - stage

    if options.torch_onnx:
        stage = time.perf_counter()
        run_torch_onnx(options, rows)
        timings["torch.onnx (export + ONNX Runtime)"] = time.perf_counter() - stage
    timings["total"] = time.perf_counter() - start

    print_table(rows, options.torch_onnx)
    print()
    for opset, c in counts(rows).items():
        line = f"opset {opset}: {c[PASS]} pass, {c[FAIL]} fail, {c[SKIP]} not scriptable/traceable in torch"
        if options.torch_onnx:
            t = counts(rows, lambda r: r.torch_onnx[0])[opset]
            line += f" | torch.onnx: {t[PASS]} pass, {t[FAIL]} fail"
        print(line)
    print(f"{len(rows)} rows ({len(names)} cases{', the --sample subset' if options.sample and not options.only else ''}); "
          + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))

    md = markdown(rows, options, timings, options.torch_onnx)
    with open(os.path.join(options.work, "summary.md"), "w") as f:
        f.write(md)
    with open(os.path.join(options.work, "summary.json"), "w") as f:
        json.dump({"rows": [r.summary() for r in rows], "counts": counts(rows),
                   "torch_onnx_counts": counts(rows, lambda r: r.torch_onnx[0]) if options.torch_onnx else None,
                   "timings": timings}, f, indent=1)
    print(f"summary: {os.path.join(options.work, 'summary.md')} and summary.json")

    expected = read_expected(options.expected)
    if options.update_expected:
        write_expected(options.expected, rows, expected)
        print(f"rewrote {options.expected}")
        expected = read_expected(options.expected)
    problems = check_expectations(rows, expected, options.expected)
    if problems:
        print("\nFAILED (expectations, " + os.path.relpath(options.expected, ROOT) + "):\n  " + "\n  ".join(problems))
        return 1
    listed = sum(1 for r in rows if r.status == FAIL)
    print(f"OK: {listed} failing rows, all listed in {os.path.relpath(options.expected, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
