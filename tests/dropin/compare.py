#!/usr/bin/python3
"""Compares two run_dropin.py results files on the cases both ran: each exporter's totals, the
cases only torch.onnx passes grouped by onnxport's failure (by kind, then by the reason with its
numbers masked), and the cases only onnxport passes, grouped by torch.onnx's failure.

    compare.py ONNXPORT.json TORCH.json [--examples N]
"""
import argparse
import collections
import json
import re


def load(path):
    with open(path) as f:
        return {r["id"]: r for r in json.load(f)}


def totals(records):
    count = collections.Counter(r["status"] for r in records)
    beyond = f", {count['beyond']} exported where the test asserts torch.onnx refuses" if count["beyond"] else ""
    return (f"{count['pass']} passed, {count['fail'] + count['error']} failed, {count['skip']} skipped{beyond} "
            f"(of {len(records)})")


def masked(reason):
    """The reason without what varies between cases of one failure: addresses, temporary names, numbers."""
    reason = re.sub(r"0x[0-9a-f]+|onnxport-\w+", "X", reason)
    return re.sub(r"[0-9]+", "N", reason)


def kind(r):
    """The failure's kind: its stage, exception type and the reason's first two clauses."""
    return f"[{r['stage']}] " + ": ".join(re.split(r": |\(", masked(r["reason"]))[:3]).strip()


def print_groups(title, records, examples):
    print(f"\n{title}: {len(records)}")
    kinds = collections.Counter(kind(r) for r in records)
    for key, count in sorted(kinds.items(), key=lambda k: (-k[1], k[0])):
        print(f"{count:5d}  {key}")
    print("  by reason:")
    groups = collections.defaultdict(list)
    for r in records:
        groups[f"[{r['stage']}] {masked(r['reason'])}"].append(r)
    for key, members in sorted(groups.items(), key=lambda g: (-len(g[1]), g[0])):
        print(f"{len(members):5d}  {key}")
        for r in members[:examples]:
            print(f"         {r['id']}: {r['reason']}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("onnxport")
    p.add_argument("torch")
    p.add_argument("--examples", type=int, default=2, help="case ids shown per group")
    args = p.parse_args()
    ours, theirs = load(args.onnxport), load(args.torch)
    common = [i for i in ours if i in theirs]
    print(f"{len(common)} cases in both files")
    print(f"onnxport:   {totals([ours[i] for i in common])}")
    print(f"torch.onnx: {totals([theirs[i] for i in common])}")
    failed = ("fail", "error")
    print_groups("passed by torch.onnx only (onnxport's failure)",
                 [ours[i] for i in common if theirs[i]["status"] == "pass" and ours[i]["status"] in failed],
                 args.examples)
    print_groups("passed by onnxport only (torch.onnx's failure)",
                 [theirs[i] for i in common if ours[i]["status"] == "pass" and theirs[i]["status"] in failed],
                 args.examples)


if __name__ == "__main__":
    main()
