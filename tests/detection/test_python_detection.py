#!/usr/bin/python3
"""torchvision's detection models through onnxport.export, called as torch.onnx.export is called
for them: the model itself (a list of images in, a list of dicts out), dynamic image height and
width. Each file must match PyTorch in ONNX Runtime at the traced image size and at another one
(--image-sizes 1: at the traced size only).

usage: test_python_detection.py --python-path BUILD/python --ort-compare ort_compare.js --work DIR
                                [--only NAME]... [--opsets 11 17] [--image-sizes 1|2]
Prints one line per model and opset and closes with "N passed, M failed".
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import warnings

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_detection_models import calibrate_batchnorm  # noqa: E402

# Few classes and low thresholds: random weights then still give a fixed number of distinct
# scores, so that both runtimes keep the same detections (see make_detection_models.py).
RCNN = dict(num_classes=5, box_score_thresh=0.0001, box_detections_per_img=20)
ONE_STAGE = dict(num_classes=5, score_thresh=0.0001, detections_per_img=20)
MODELS = {
    "fasterrcnn_resnet50_fpn": RCNN,
    "fasterrcnn_mobilenet_v3_large_320_fpn": RCNN,
    "maskrcnn_resnet50_fpn": RCNN,
    "keypointrcnn_resnet50_fpn": dict(RCNN, num_classes=2),
    "retinanet_resnet50_fpn": ONE_STAGE,
    "fcos_resnet50_fpn": ONE_STAGE,
    "ssd300_vgg16": ONE_STAGE,
    "ssdlite320_mobilenet_v3_large": ONE_STAGE,
}
# (height, width) traced, then another size the dynamic axes must take.
SIZES = [(320, 320), (288, 352)]


def build(name):
    torch.manual_seed(0)
    model = getattr(torchvision.models.detection, name)(weights=None, weights_backbone=None, **MODELS[name]).eval()
    calibrate_batchnorm(model)
    return model


def save_case(work, tag, image, outputs):
    """The image and PyTorch's flattened outputs as .npy files and an ort_compare.js manifest."""
    np.save(os.path.join(work, f"{tag}.in0.npy"), image.numpy())
    flat = torch._C._jit_flatten(outputs)[0]
    names = []
    for k, t in enumerate(flat):
        np.save(os.path.join(work, f"{tag}.out{k}.npy"), t.detach().numpy())
        names.append({"file": f"{tag}.out{k}.npy"})
    manifest = os.path.join(work, f"{tag}.json")
    with open(manifest, "w") as fh:
        json.dump({"inputs": [{"name": "images", "file": f"{tag}.in0.npy"}], "outputs": names,
                   "rtol": 1e-3, "atol": 1e-3}, fh)
    return manifest, len(flat)


def run_case(onnxport, name, opset, args):
    model = build(name)
    work = os.path.join(args.work, f"{name}.opset{opset}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    onnx_file = os.path.join(work, "model.onnx")
    torch.manual_seed(1)
    images = [torch.rand(3, h, w) for h, w in SIZES[:args.image_sizes]]
    start = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        onnxport.export(model, ([images[0]],), onnx_file, input_names=["images"], dynamic_axes={"images": [1, 2]},
                        opset_version=opset)
    seconds = time.time() - start
    for k, image in enumerate(images):
        with torch.no_grad():
            expected = model([image])
        manifest, count = save_case(work, f"size{k}", image, expected)
        if count == 0 or expected[0]["scores"].numel() == 0:
            return f"no detections at {tuple(image.shape)}: nothing to compare"
        if len(set(expected[0]["scores"].tolist())) != expected[0]["scores"].numel():
            return f"tied scores at {tuple(image.shape)}: the comparison would depend on tie-breaking"
        r = subprocess.run(["node", args.ort_compare, onnx_file, manifest, "--rtol", "1e-3", "--atol", "1e-3"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return f"ONNX Runtime differs at image {tuple(image.shape)}: " + (r.stdout + r.stderr).strip()[-600:]
    shutil.rmtree(work)
    return f"ok: exported in {seconds:.1f} s, matches PyTorch at {len(images)} image sizes"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python-path", required=True)
    parser.add_argument("--ort-compare", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--only", action="append", choices=sorted(MODELS))
    parser.add_argument("--opsets", type=int, nargs="+", default=[11, 17])
    parser.add_argument("--image-sizes", type=int, choices=[1, 2], default=2)
    args = parser.parse_args()
    sys.path.insert(0, args.python_path)
    import onnxport
    passed = failed = 0
    for name in args.only or MODELS:
        for opset in args.opsets:
            try:
                verdict = run_case(onnxport, name, opset, args)
            except Exception as e:  # an export error is this case's failure
                verdict = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            ok = verdict.startswith("ok")
            passed += ok
            failed += not ok
            print(f"{name} opset {opset}: {verdict}", flush=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
