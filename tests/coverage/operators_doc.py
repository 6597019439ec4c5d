#!/usr/bin/python3
"""Check (or rewrite) docs/operators.md against `onnxport ops --markdown`.

The table is generated from the registry of the built-in op packs, with the committed torch.onnx
1.13 reference list marking the ops torch.onnx does not have. The check fails with a diff when
the committed file differs from what the CLI generates now.

Usage: /usr/bin/python3 operators_doc.py ONNXPORT [--write] [--doc FILE] [--list FILE]
  --write   regenerate the file instead of checking it
"""
import argparse
import difflib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MAX_DIFF_LINES = 60


def generate(onnxport, reference):
    env = {k: v for k, v in os.environ.items() if k != "ONNXPORT_PLUGIN_PATH"}  # built-in packs only
    return subprocess.run([onnxport, "ops", "--markdown", "--reference", reference], check=True,
                          capture_output=True, text=True, env=env).stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("onnxport", help="the onnxport CLI")
    parser.add_argument("--write", action="store_true", help="rewrite the doc instead of checking it")
    parser.add_argument("--doc", default=os.path.join(ROOT, "docs", "operators.md"))
    parser.add_argument("--list", default=os.path.join(HERE, "torch113_symbolics.txt"))
    options = parser.parse_args()

    fresh = generate(options.onnxport, options.list)
    if options.write:
        with open(options.doc, "w") as f:
            f.write(fresh)
        print(f"wrote {options.doc} ({fresh.count(chr(10))} lines)")
        return 0
    try:
        with open(options.doc) as f:
            committed = f.read()
    except OSError as e:
        committed = ""
        print(f"cannot read {options.doc}: {e}")
    if committed == fresh:
        print(f"{options.doc} is up to date ({fresh.count(chr(10))} lines)")
        return 0
    diff = list(difflib.unified_diff(committed.splitlines(), fresh.splitlines(), "committed " + options.doc,
                                     "onnxport ops --markdown", lineterm="", n=1))
    print("\n".join(diff[:MAX_DIFF_LINES]))
    if len(diff) > MAX_DIFF_LINES:
        print(f"... ({len(diff) - MAX_DIFF_LINES} more diff lines)")
    print(f"FAIL: {options.doc} is stale: the op packs register a different table. Regenerate it with\n"
          f"  /usr/bin/python3 tests/coverage/operators_doc.py build/bin/onnxport --write\n"
          f"and commit it.")
    return 1


if __name__ == "__main__":
    sys.exit(main())
