#!/usr/bin/python3
"""The files a newer PyTorch wrote (tests/newer_torch/make_fixtures.py, in the Debian 13 root)
exported by this build's onnxport at one opset, and every export judged in ONNX Runtime against the
newer PyTorch's outputs (ort_compare.js, one process for all cases). A scripted file is exported twice:
as onnxport chooses (auto), and with its control flow kept (--mode script, case NAME.script_mode).
With --verify, onnxport verify then runs each file in this build's libtorch (the registered kernels)
against onnxport's evaluator.

Usage: export_and_compare.py FIXTURE_DIR --opset N [--only NAME]... [--skip NAME]... [--verify]
Environment (set by ctest): ONNXPORT (the CLI), ONNXPORT_ORT_COMPARE (ort_compare.js),
ONNXPORT_NODE (node), ONNXPORT_TEST_TMP (scratch directory).
Without fixtures (no Debian root made them) the test is skipped: exit 77.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "support"))
from cli_test import path, run  # noqa: E402

SKIPPED = 77  # SKIP_RETURN_CODE in tests/newer_torch/CMakeLists.txt


def manifests(fixture_dir, only, skip):
    found = {os.path.basename(f)[:-len(".json")]: f for f in sorted(glob.glob(os.path.join(fixture_dir, "*.json")))}
    missing = [name for name in only if name not in found]
    if missing:
        raise SystemExit(f"no fixture {', '.join(missing)} in {fixture_dir}: the newer_torch.fixtures test makes them")
    return {name: found[name] for name in (only or found) if name not in skip}


def input_args(manifest_path, manifest, for_export):
    """--input NAME=FILE.npy per manifest input, or the manifest's own export_inputs specs to export with."""
    if for_export and "export_inputs" in manifest:
        return [arg for spec in manifest["export_inputs"] for arg in ("--input", spec)]
    here = os.path.dirname(manifest_path)
    return [arg for e in manifest["inputs"] for arg in ("--input", f"{e['name']}={os.path.join(here, e['file'])}")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("fixture_dir")
    parser.add_argument("--opset", type=int, required=True)
    parser.add_argument("--only", action="append", default=[], metavar="NAME")
    parser.add_argument("--skip", action="append", default=[], metavar="NAME")
    parser.add_argument("--verify", action="store_true", help="also run onnxport verify on each case")
    options = parser.parse_args()

    if not glob.glob(os.path.join(options.fixture_dir, "*.json")):
        print(f"SKIP: no newer PyTorch's files in {options.fixture_dir}: its newer_torch.fixtures test writes "
              "them where the Debian root exists (bash tests/debian13.sh --build-only; for sid, README)")
        return SKIPPED

    os.makedirs(path(), exist_ok=True)
    cases, failed = [], []
    for name, manifest_path in manifests(options.fixture_dir, options.only, options.skip).items():
        with open(manifest_path) as f:
            manifest = json.load(f)
        for label, mode_args in export_modes(name, manifest):
            case = export(label, manifest_path, manifest, options, mode_args)
            (cases if case else failed).append(case or label)

    if cases:
        cases_file = path(f"cases.opset{options.opset}.json")
        with open(cases_file, "w") as f:
            json.dump(cases, f, indent=1)
        compare = subprocess.run([os.environ.get("ONNXPORT_NODE", "node"), os.environ["ONNXPORT_ORT_COMPARE"],
                                  "--cases", cases_file], capture_output=True, text=True)
        print(compare.stdout + compare.stderr, end="")
        failed += [line.split()[1].rstrip(":") for line in compare.stdout.splitlines() if line.startswith("FAIL ")]
        if compare.returncode not in (0, 1):
            failed.append("ort_compare.js")
    for case in cases:  # a passing export is not kept (vit_b_16's is 330 MiB)
        if case["name"] not in failed:
            os.remove(case["onnx"])
    failed = sorted(set(failed))
    total = len(cases) + len([f for f in failed if f not in {c["name"] for c in cases}])
    print(f"newer_torch at opset {options.opset}: {total - len(failed)} of {total} exports passed"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def export_modes(name, manifest):
    """(label, extra export arguments) per export: a scripted file also with its control flow kept
    (--mode script), besides onnxport's own choice."""
    modes = [(name, [])]
    if manifest["torch"].endswith(" script"):
        modes.append((f"{name}.script_mode", ["--mode", "script"]))
    return modes


def export(label, manifest_path, manifest, options, mode_args):
    """Exports one case (and verifies it with --verify); its ort_compare.js case, or None on failure."""
    model = os.path.join(os.path.dirname(manifest_path), manifest["model"])
    onnx_file = os.path.abspath(path(f"{label}.opset{options.opset}.onnx"))
    r = run("export", model, "-o", onnx_file, "--opset", str(options.opset), *input_args(manifest_path, manifest, True),
            *manifest.get("export_args", []), *mode_args, ok=False)
    if r.returncode != 0:
        print(f"FAIL {label} ({manifest['torch']}): onnxport export exited {r.returncode}: {r.stderr.strip()}")
        return None
    if options.verify:
        r = run("verify", model, onnx_file, *input_args(manifest_path, manifest, False),
                "--rtol", str(manifest["rtol"]), "--atol", str(manifest["atol"]), ok=False)
        if r.returncode != 0:
            print(f"FAIL {label}: onnxport verify exited {r.returncode}: {(r.stdout + r.stderr).strip()}")
            return None
    return {"name": label, "onnx": onnx_file, "manifest": os.path.abspath(manifest_path),
            "rtol": manifest["rtol"], "atol": manifest["atol"]}


if __name__ == "__main__":
    sys.exit(main())
