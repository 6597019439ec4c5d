#!/usr/bin/python3
"""torch.onnx.export worker of the torchaudio suite (run_torchaudio.py --torch-onnx).

Exports each job's TorchScript .pt (torch.jit.load-ed, as the onnxport CLI reads it) with
torch.onnx.export at the job's opset, and appends one JSON line per job to RESULTS: first
{"start": id}, then {"id", "ok", "error", "seconds"}. run_torchaudio.py restarts the worker after
the job it was in when it crashed or hung.

usage: torch_onnx_export.py JOBS.json RESULTS.jsonl
  JOBS.json: [{"id", "model", "inputs": [.npy...], "input_names": [...], "opset", "out"}, ...]
"""
import json
import os
import re
import sys
import time
import warnings

import numpy as np
import torch
import torchaudio  # noqa: F401 - registers torchaudio::* ops, which the .pt files may call


def first_line(error):
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = lines[0] if lines else ""
    text = re.split(r" Please (?:feel free to |send a bug report|open an issue)", text)[0]
    return f"{type(error).__name__}: {text}"[:300]


def main():
    jobs_file, results_file = sys.argv[1:3]
    with open(jobs_file) as f:
        jobs = json.load(f)
    torch.set_num_threads(1)
    with open(results_file, "a") as results:
        def emit(record):
            results.write(json.dumps(record) + "\n")
            results.flush()

        for job in jobs:
            emit({"start": job["id"]})
            start = time.perf_counter()
            if os.path.exists(job["out"]):
                os.remove(job["out"])
            try:
                module = torch.jit.load(job["model"])
                args = tuple(torch.from_numpy(np.load(f)) for f in job["inputs"])
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    torch.onnx.export(module, args, job["out"], opset_version=job["opset"],
                                      input_names=job["input_names"])
                emit({"id": job["id"], "ok": True, "error": "", "seconds": time.perf_counter() - start})
            except Exception as e:  # noqa: BLE001 - any exporter failure is the row's result
                emit({"id": job["id"], "ok": False, "error": first_line(e), "seconds": time.perf_counter() - start})
    return 0


if __name__ == "__main__":
    sys.exit(main())
