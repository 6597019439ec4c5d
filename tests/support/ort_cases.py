"""Many exported models judged in one ONNX Runtime process (tests/integration/ort_compare.js --cases)."""
import json
import os
import subprocess

ORT_COMPARE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration", "ort_compare.js")


def compare_in_ort(node, cases, work):
    """Runs the ort_compare.js cases ({"name", "onnx", "manifest", ...}); returns the failure lines
    and the names of the cases that failed. A harness failure with no FAIL line is a failure too."""
    if not cases:
        return [], set()
    cases_file = os.path.join(work, "ort_cases.json")
    with open(cases_file, "w") as f:
        json.dump(cases, f, indent=1)
    ort = subprocess.run([node, ORT_COMPARE, "--cases", cases_file], capture_output=True, text=True)
    failures, failed = [], set()
    for line in ort.stdout.splitlines():
        if line.startswith("FAIL "):
            failures.append("ONNX Runtime: " + line[:400])
            failed.add(line.split()[1].rstrip(":"))
    if ort.returncode != 0 and not failed:
        failures.append("ONNX Runtime comparison failed:\n" + ort.stdout[-3000:] + ort.stderr[-2000:])
    return failures, failed
