#!/usr/bin/python3
"""Fail unless every op mapping the op packs register is exercised by a row of the table (cases_*.py).

Reads `ONNXPORT ops --json` (torch op, since-opset, pack) and the table, and checks:
  * every registered torch op is declared by a row at an opset where it must export and pass
    (rows whose only opsets are expected failures do not count), or is listed in
    op_cases.UNREACHABLE with the reason no convertible graph can contain it;
  * every registration (op, since-opset) is selected by at least one such opset: an opset-11
    mapping is only tested by a row exporting at opset >= 11 (and below the next mapping);
  * the table names no op that nothing registers and no UNREACHABLE op is also exercised.
onnxport_export_cases checks the other direction: a declared op really is converted.

An op's entry for complex values (Registrar::add_complex, listed as "aten::X[complex]") is
covered by rows that declare "X[complex]": their export must convert a node of aten::X through
that entry (complex values flow through it), which onnxport_export_cases checks; a row declaring
plain "X" covers only the real entry.

Usage: /usr/bin/python3 check_coverage.py ONNXPORT [--plugin-dir DIR]...
"""
import argparse
import collections
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import op_cases  # noqa: E402


def cli_json(onnxport, command, plugin_dirs):
    cmd = [onnxport, command, "--json"]
    for d in plugin_dirs:
        cmd += ["--plugin-dir", d]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def registered(onnxport, plugin_dirs):
    """op -> {since_opset: pack} from the CLI's registry listing."""
    table = collections.defaultdict(dict)
    for e in cli_json(onnxport, "ops", plugin_dirs):
        table[e["op"]][e["since_opset"]] = e["pack"]
    return table


def broken_packs(onnxport, plugin_dirs):
    """'file: error' for every op pack that did not load (its ops would look unregistered)."""
    return [f"{p['file']}: {p['error']}" for p in cli_json(onnxport, "plugins", plugin_dirs)
            if p["status"] != "loaded"]


def tested_opsets():
    """op -> the opsets at which some row exports it expecting success, and the rows."""
    opsets, rows = collections.defaultdict(set), collections.defaultdict(list)
    for c in op_cases.CASES:
        passing = [o for o in c.opsets if o not in c.fails]
        for op in c.ops:
            opsets[op] |= set(passing)
            if passing:
                rows[op].append(c.id)
    return opsets, rows


def selected_entry(sinces, opset):
    """The since-opset of the registration the registry picks for `opset` (None if none)."""
    eligible = [s for s in sinces if s <= opset]
    return max(eligible) if eligible else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("onnxport", help="the onnxport CLI whose registry is checked")
    parser.add_argument("--plugin-dir", action="append", default=[], help="extra op pack directory")
    options = parser.parse_args()

    registry = registered(options.onnxport, options.plugin_dir)
    opsets, rows = tested_opsets()
    problems = [f"op pack {p} (fix the pack first: its ops count as unregistered)"
                for p in broken_packs(options.onnxport, options.plugin_dir)]
    past_this_onnx = []
    torch1_only_ops = {op for ops, _ in op_cases.TORCH1_ONLY.values() for op in ops}
    for op in sorted(registry):
        # Mappings from an opset this machine's ONNX does not have (ONNX 1.12: 18 and later) cannot
        # export here; the rows that test them run on a build with the newer ONNX.
        sinces = {s: p for s, p in registry[op].items() if s <= op_cases.NEWEST_OPSET}
        past_this_onnx += [f"{op}@{s}" for s in registry[op] if s > op_cases.NEWEST_OPSET]
        if not sinces:
            continue
        packs = "/".join(sorted(set(sinces.values())))
        if op in op_cases.UNREACHABLE:
            if rows.get(op):
                problems.append(f"{op} [{packs}] is listed in UNREACHABLE but exercised by {', '.join(rows[op])}")
            continue
        if not rows.get(op) and op in torch1_only_ops:
            continue  # its rows record what PyTorch 1.x traces; printed below
        if not rows.get(op):
            hint = ""
            if op.endswith("[complex]") and rows.get(op[:-len("[complex]")]):
                hint = (f"; rows declaring {op[:-len('[complex]')]} cover its real entry only: declare "
                        f"{op.split('::', 1)[1]} in a row whose complex values flow through the op")
            problems.append(f"{op} [{packs}]: no row of tests/ops/op_cases.py exercises it "
                            f"(registered since opset {', '.join(map(str, sorted(sinces)))}){hint}")
            continue
        hit = {selected_entry(sinces, o) for o in opsets[op]}
        for since in sorted(sinces):
            if since in hit:
                continue
            reachable = [o for o in op_cases.OPSETS if selected_entry(sinces, o) == since]
            hint = (f"add a row exporting it at opset {reachable[0]}" if reachable else
                    f"no opset of {op_cases.OPSETS} selects it")
            problems.append(f"{op} [{packs}]: the mapping since opset {since} is never tested ({hint}; "
                            f"rows test opsets {sorted(opsets[op])})")
    for op in sorted(set(rows) - set(registry)):
        hint = (f" (only {op}[complex], its entry for complex values: declare that)"
                if op + "[complex]" in registry else "")
        problems.append(f"{op} is declared by {', '.join(rows[op])} but no op pack registers it{hint}")
    for op in sorted(set(op_cases.UNREACHABLE) - set(registry)):
        problems.append(f"{op} is listed in UNREACHABLE but no op pack registers it: remove it")

    for op in sorted(set(op_cases.UNREACHABLE) & set(registry)):
        print(f"unreachable (no row possible): {op}: {op_cases.UNREACHABLE[op]}")
    for id, (ops, why) in sorted(op_cases.TORCH1_ONLY.items()):
        print(f"left out under PyTorch 2: {id} ({', '.join(ops)}): {why}")
    if past_this_onnx:
        print(f"not tested here (from an opset past this ONNX's {op_cases.NEWEST_OPSET}): {', '.join(past_this_onnx)}")
    entries = sum(len(s) for s in registry.values())
    exercised = len([op for op in registry if rows.get(op)])
    print(f"{len(registry)} registered torch ops ({entries} registrations): {exercised} exercised by "
          f"{len(op_cases.CASES)} rows, {len(set(op_cases.UNREACHABLE) & set(registry))} unreachable")
    for line in problems:
        print("MISSING " + line)
    if problems:
        print(f"{len(problems)} coverage problems: add rows to tests/ops/op_cases.py")
        return 1
    print("every registered mapping is exercised")
    return 0


if __name__ == "__main__":
    sys.exit(main())
