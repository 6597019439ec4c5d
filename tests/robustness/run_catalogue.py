#!/usr/bin/python3
"""Runs the catalogue of bad inputs (catalogue.py) against an onnxport binary.

Every row runs in its own fresh directory and must:
  1. exit non-zero, and not by a signal (no SIGSEGV/SIGABRT/SIGXFSZ...), without hanging, and
     with no 'Segmentation fault' / 'terminate called' / 'Aborted' on stderr;
  2. print at most 3 non-empty lines on stderr, matching every expected regular expression;
  3. create no output file (when the output path did not exist before);
  4. leave every file that existed before (a pre-created output, the model, the .npy, the
     config) byte-for-byte unchanged;
  5. leave no other file behind (temporary files included) in the work directory, nor beside
     an output path outside it.
Prints one line per row (PASS/FAIL/SKIP id: reason | stderr), then 'N/M rows pass', and exits
non-zero if any row fails.

usage: run_catalogue.py --onnxport PATH --fixtures DIR [--work DIR] [--only ID]... [--jobs N] [--list]
  --only takes row ids or shell patterns (--only 'npy-*'); --work keeps each row's directory
  (WORK/rows/ID) and the built artifacts (WORK/artifacts) for a later run.
"""
import argparse
import fnmatch
import hashlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import catalogue  # noqa: E402
from catalogue import Context, Skip  # noqa: E402

MAX_STDERR_LINES = 3
CRASH_TEXT = ("Segmentation fault", "terminate called", "Aborted", "core dumped", "AddressSanitizer",
              "runtime error:")


def snapshot(root):
    """Every entry under root: relative path -> (kind, sha256 of a regular file's bytes)."""
    entries = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if os.path.isdir(full) and not os.path.islink(full):
                entries[rel] = ("dir", None)
            elif os.path.islink(full):
                entries[rel] = ("link", os.readlink(full))
            elif not (st.st_mode & 0o170000 == 0o100000):
                entries[rel] = ("special", None)  # FIFO: never open it
            else:
                h = hashlib.sha256()
                try:
                    with open(full, "rb") as f:
                        for chunk in iter(lambda: f.read(1 << 20), b""):
                            h.update(chunk)
                    entries[rel] = ("file", h.hexdigest())
                except OSError as e:
                    entries[rel] = ("file", f"unreadable: {e}")
    return entries


def describe_signal(code):
    try:
        return signal.Signals(code).name
    except ValueError:
        return f"signal {code}"


def run_row(row, args, art):
    work = os.path.join(args.work, "rows", row.id)
    if os.path.exists(work):
        subprocess.run(["umount", "-l", *[os.path.join(work, d) for d in os.listdir(work)
                                          if os.path.ismount(os.path.join(work, d))]], capture_output=True)
        shutil.rmtree(work)
    os.makedirs(work)
    ctx = Context(work=work, art=art, fixtures=args.fixtures)
    try:
        try:
            for step in row.setup:
                step(ctx)
        except Skip as e:
            return "SKIP", str(e), ""
        except Exception as e:  # noqa: BLE001 - a broken setup is the harness's failure, reported as such
            return "FAIL", f"setup failed (not onnxport's fault): {type(e).__name__}: {e}", ""
        return check_row(row, args, ctx)
    finally:
        for undo in reversed(ctx.teardown):
            try:
                undo()
            except Exception:  # noqa: BLE001 - teardown must not hide the row's result
                pass


def outside_output(row):
    """An output path outside the work dir: (its directory, its basename), else None."""
    if row.output and os.path.isabs(row.output):
        return os.path.dirname(row.output), os.path.basename(row.output)
    return None


def check_row(row, args, ctx):
    fmt = {"fixtures": args.fixtures, "work": ctx.work}
    argv = [args.onnxport] + [a.format(**fmt) for a in row.cmd]
    before = snapshot(ctx.work)
    outside = outside_output(row)
    outside_before = set()
    if outside and os.path.isdir(outside[0]):
        outside_before = {n for n in os.listdir(outside[0]) if n.startswith(outside[1])}
    if row.wrapper:
        command = ["bash", "-c", f"{row.wrapper}; exec {shlex.join(argv)}"]
    else:
        command = argv
    env = {k: v for k, v in os.environ.items() if k != "ONNXPORT_PLUGIN_PATH"}
    env.update(row.env)
    start = time.monotonic()
    proc = subprocess.Popen(command, cwd=ctx.work, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True)
    hung = False
    try:
        out, err = proc.communicate(timeout=row.timeout)
    except subprocess.TimeoutExpired:
        hung = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    elapsed = time.monotonic() - start
    stderr = err.decode(errors="replace")
    lines = [l for l in stderr.splitlines() if l.strip()]
    rc = proc.returncode
    problems = []

    # (1) a non-zero exit that is not a crash or a hang
    if hung:
        problems.append(f"hung: no exit within {row.timeout:g} s (killed)")
    elif rc < 0:
        problems.append(f"crashed: killed by {describe_signal(-rc)}")
    elif row.wrapper and rc > 128 and rc - 128 < 65:
        problems.append(f"crashed: killed by {describe_signal(rc - 128)} (exit {rc})")
    elif rc == 0:
        problems.append("exit 0: the bad input was accepted")
    for text in CRASH_TEXT:
        if text in stderr:
            problems.append(f"crash text on stderr: {text!r}")
    # (2) a short message naming the thing at fault
    if len(lines) > MAX_STDERR_LINES:
        problems.append(f"{len(lines)} non-empty stderr lines (at most {MAX_STDERR_LINES})")
    missing = [p for p in row.expect if not re.search(p, stderr, re.IGNORECASE)]
    if missing:
        problems.append("stderr lacks " + ", ".join(f"/{p}/" for p in missing))
    # (3)-(5) the file system as it was
    after = snapshot(ctx.work)
    output_rel = None
    if row.output and not os.path.isabs(row.output):
        output_rel = os.path.normpath(row.output)
    for rel in sorted(set(after) - set(before)):
        if rel == output_rel:
            problems.append(f"output file created: {rel}")
        else:
            problems.append(f"file left behind: {rel}")
    for rel in sorted(set(before) & set(after)):
        if before[rel] != after[rel]:
            problems.append(f"pre-existing {before[rel][0]} modified: {rel}"
                            + (" (the pre-created output)" if rel == output_rel else ""))
    for rel in sorted(set(before) - set(after)):
        problems.append(f"pre-existing {before[rel][0]} removed: {rel}")
    if outside:
        if os.path.isdir(outside[0]):
            now = {n for n in os.listdir(outside[0]) if n.startswith(outside[1])}
            for name in sorted(now - outside_before):
                problems.append(f"file left behind: {os.path.join(outside[0], name)}")

    seen = " | ".join(lines) if lines else "(empty)"
    status = f"exit {rc}" if not hung else "hung"
    if problems:
        return "FAIL", f"{'; '.join(problems)} [{status}, {elapsed:.1f} s] stderr: {seen}", shlex.join(row.cmd)
    return "PASS", f"[{status}] stderr: {seen}", shlex.join(row.cmd)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--onnxport", help="the onnxport binary (required unless --list)")
    parser.add_argument("--fixtures", help="build/fixtures/models (required unless --list)")
    parser.add_argument("--work", help="scratch directory (default: a fresh temporary one, removed afterwards)")
    parser.add_argument("--only", action="append", default=[], help="row id or shell pattern; repeatable")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--list", action="store_true", help="print the rows and exit")
    parser.add_argument("-v", "--verbose", action="store_true", help="also print each row's command")
    args = parser.parse_args()

    rows = catalogue.check_table()
    if args.only:
        unknown = [p for p in args.only if not any(fnmatch.fnmatchcase(r.id, p) for r in rows)]
        if unknown:
            parser.error(f"--only matches no row: {', '.join(unknown)}")
        rows = [r for r in rows if any(fnmatch.fnmatchcase(r.id, p) for p in args.only)]
    if args.list:
        for r in rows:
            print(f"{r.id:40} onnxport {shlex.join(r.cmd)}\n{'':40} {r.desc}; expect {r.expect}")
        print(f"{len(rows)} rows")
        return 0
    if not args.onnxport or not args.fixtures:
        parser.error("--onnxport and --fixtures are required")

    args.onnxport = os.path.abspath(args.onnxport)
    args.fixtures = os.path.abspath(args.fixtures)
    for _ in range(12):  # the binary may be briefly missing while it is rebuilt
        if os.access(args.onnxport, os.X_OK):
            break
        time.sleep(5)
    else:
        print(f"no executable at {args.onnxport}", file=sys.stderr)
        return 2
    temporary = args.work is None
    args.work = os.path.abspath(args.work or tempfile.mkdtemp(prefix="onnxport-robustness-"))
    art = os.path.join(args.work, "artifacts")
    if not catalogue.artifacts_ready(art):
        shutil.rmtree(art, ignore_errors=True)
        catalogue.build_artifacts(art)

    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda r: (r, run_row(r, args, art)), rows))
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    for r, (status, detail, cmd) in results:
        counts[status] += 1
        print(f"{status} {r.id}: {detail}")
        if args.verbose or status == "FAIL":
            print(f"     onnxport {cmd}   # {r.desc}")
    ran = counts["PASS"] + counts["FAIL"]
    print(f"{counts['PASS']}/{ran} rows pass ({counts['FAIL']} fail, {counts['SKIP']} skipped, "
          f"{len(rows)} in the table, {time.monotonic() - start:.0f} s)")
    if temporary:
        shutil.rmtree(args.work, ignore_errors=True)
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
