#!/usr/bin/env python3
"""Fixtures for the torchvision detection models (issue 5): ssdlite320_mobilenet_v3_large and
fasterrcnn_mobilenet_v3_large_320_fpn, traced with a wrapper returning (boxes, scores, labels).

No trained weights can be downloaded, and random ones saturate: every top score ties, and NMS/TopK
then pick different boxes among equals in any two runtimes. So the BatchNorm statistics are
calibrated on random images first (as a model's own training would set them), which keeps
activations in range and makes the scores distinct. Fixed seeds throughout.

usage: make_detection_models.py OUT_DIR
"""
import json
import os
import sys
import warnings

import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
from npy_io import save_arrays, write_atomically  # noqa: E402

SIZE = 320


def build(name):
    detection = torchvision.models.detection
    if name == "ssdlite320_mobilenet_v3_large":
        return detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=5,
                                                       score_thresh=0.0001, detections_per_img=20)
    return detection.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None, num_classes=5,
                                                           box_score_thresh=0.0001, box_detections_per_img=20)


def calibrate_batchnorm(model):
    norms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    for bn in norms:
        bn.reset_running_stats()
        bn.momentum = None  # a plain average over the calibration batches
        bn.train()
    with torch.no_grad():
        for _ in range(4):
            model([torch.rand(3, SIZE, SIZE) for _ in range(2)])
    for bn in norms:
        bn.eval()


class FirstImageDetections(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        d = self.model([x[0]])[0]
        return d["boxes"], d["scores"], d["labels"]


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    warnings.simplefilter("ignore")
    for name in ("ssdlite320_mobilenet_v3_large", "fasterrcnn_mobilenet_v3_large_320_fpn"):
        torch.manual_seed(0)
        model = build(name).eval()
        calibrate_batchnorm(model)
        wrapper = FirstImageDetections(model).eval()
        x = torch.rand(1, 3, SIZE, SIZE)
        with torch.no_grad():
            traced = torch.jit.trace(wrapper, x, check_trace=False)
            expected = list(wrapper(x))
        if len(set(expected[1].tolist())) != len(expected[1]):
            raise RuntimeError(f"{name}: tied scores; the comparison would depend on tie-breaking")
        traced.save(os.path.join(out_dir, f"{name}.pt"))
        inputs = save_arrays(out_dir, f"{name}.in", [x])
        inputs[0]["name"] = "images"
        manifest = {"model": f"{name}.pt", "inputs": inputs, "outputs": save_arrays(out_dir, f"{name}.out", expected)}
        write_atomically(os.path.join(out_dir, f"{name}.json"), json.dumps(manifest, indent=1) + "\n")
        print(f"{name}: {len(expected[1])} detections, scores {expected[1][0]:.4f}..{expected[1][-1]:.4f}")


if __name__ == "__main__":
    main()
