#!/usr/bin/python3
"""torchvision's detection models through onnxport.export, called as torch.onnx.export is called
for them: the model itself (a list of images in, a list of dicts out), dynamic image height and
width. Each file must match PyTorch in ONNX Runtime at the traced image size and at another one
(--image-sizes 1: at the traced size only).

Matching detections: with random weights the ResNet-50 models' scores come within 1e-4 of each
other, closer than two runtimes' float arithmetic agrees (ONNX Runtime's and PyTorch's scores
differ in the fourth decimal). Where two scores are that close, TopK and NMS may keep them in
either order, or keep either of two overlapping boxes. So when the element-wise comparison fails,
the detections are matched as a set: every PyTorch detection must have an ONNX Runtime detection
of the same label whose box, score, mask or keypoints agree within the tolerances; one left
without a partner passes only if a near-tie explains it (its score within SCORE_TIE of the last
kept score; an unpartnered ONNX Runtime box of the same label, overlapping it past NMS's IoU
and scored within SCORE_TIE; or a box clipped at the image's edge to a sliver whose width or
height is within SMALL_TIE of the 0.01 below which torchvision drops a box). Anything else fails.

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
RTOL = ATOL = 1e-3
SCORE_TIE = 2e-3  # scores closer than this may be ordered either way by two runtimes
NMS_IOU = 0.5  # the IoU above which torchvision's box heads suppress the lower-scored box
MIN_BOX_SIZE = 1e-2  # torchvision's box heads drop boxes narrower or lower than this
SMALL_TIE = 2e-3  # box coordinates near 350 agree to about 1e-3 between two runtimes


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
                   "rtol": RTOL, "atol": ATOL}, fh)
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
    tie_matched = []
    for k, image in enumerate(images):
        with torch.no_grad():
            expected = model([image])
        manifest, count = save_case(work, f"size{k}", image, expected)
        if count == 0 or expected[0]["scores"].numel() == 0:
            return f"no detections at {tuple(image.shape)}: nothing to compare"
        if len(set(expected[0]["scores"].tolist())) != expected[0]["scores"].numel():
            return f"tied scores at {tuple(image.shape)}: the comparison would depend on tie-breaking"
        actual_dir = os.path.join(work, f"size{k}.actual")
        os.makedirs(actual_dir)
        r = subprocess.run(["node", args.ort_compare, onnx_file, manifest, "--rtol", str(RTOL), "--atol", str(ATOL),
                            "--save-actual", actual_dir], capture_output=True, text=True)
        if r.returncode == 0:
            continue
        flat = [t.detach().numpy() for t in torch._C._jit_flatten(expected)[0]]
        saved = [os.path.join(actual_dir, f"model.actual{n}.npy") for n in range(count)]
        actual = [np.load(file) if os.path.exists(file) else None for file in saved]
        problem = None if all(a is not None for a in actual) else "ONNX Runtime did not run: " + (r.stdout + r.stderr).strip()[-600:]
        if not problem:
            problem, explained = unmatched_detections(expected[0], flat, actual)
        if problem:
            return f"ONNX Runtime differs at image {tuple(image.shape)}: {problem}"
        tie_matched.append(f"{'x'.join(map(str, image.shape[1:]))}: {len(flat[0]) - explained} of {len(flat[0])} "
                           f"paired, {explained} explained by near-ties")
    shutil.rmtree(work)
    how = f" (matched as sets: {'; '.join(tie_matched)})" if tie_matched else ""
    return f"ok: exported in {seconds:.1f} s, matches PyTorch at {len(images)} image sizes{how}"


def box_iou(a, b):
    width = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    height = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = width * height
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def at_size_cutoff(box):
    return abs(min(box[2] - box[0], box[3] - box[1]) - MIN_BOX_SIZE) <= SMALL_TIE


def unmatched_detections(expected, flat, actual):
    """(None, how many PyTorch detections near-ties explain) if ONNX Runtime's detections are
    PyTorch's up to the order of near-tied scores (see the module's docstring), else (what is
    wrong, 0)."""
    keys = list(expected.keys())  # the flattened outputs follow the dict's order
    if len(flat) != len(keys):
        return f"{len(flat)} outputs for {len(keys)} fields", 0
    field = {key: n for n, key in enumerate(keys)}
    for n, key in enumerate(keys):
        if actual[n].shape[1:] != flat[n].shape[1:] or actual[n].dtype != flat[n].dtype:
            return f"{key}: ONNX Runtime gives {actual[n].dtype}{list(actual[n].shape)}, PyTorch {flat[n].dtype}{list(flat[n].shape)}", 0
    want_scores, got_scores = flat[field["scores"]], actual[field["scores"]]
    want_labels, got_labels = flat[field["labels"]], actual[field["labels"]]
    want_boxes, got_boxes = flat[field["boxes"]], actual[field["boxes"]]

    def same(i, j):
        if want_labels[i] != got_labels[j]:
            return False
        return all(np.allclose(actual[n][j], flat[n][i], rtol=RTOL, atol=ATOL) for n in range(len(keys)))

    free = set(range(len(got_scores)))
    lonely = []
    for i in range(len(want_scores)):
        partner = next((j for j in sorted(free) if same(i, j)), None)
        if partner is None:
            lonely.append(i)
        else:
            free.discard(partner)
    cutoff = min(want_scores.min(initial=np.inf), got_scores.min(initial=np.inf))
    for i in lonely:
        at_cutoff = want_scores[i] - cutoff <= SCORE_TIE and len(want_scores) == len(got_scores)
        nms_twin = next((j for j in free if got_labels[j] == want_labels[i]
                         and abs(float(got_scores[j]) - float(want_scores[i])) <= SCORE_TIE
                         and box_iou(want_boxes[i], got_boxes[j]) > NMS_IOU), None)
        if nms_twin is not None:
            free.discard(nms_twin)
        elif not at_cutoff and not at_size_cutoff(want_boxes[i]):
            return (f"PyTorch's detection {i} (label {want_labels[i]}, score {want_scores[i]:.5f}, box "
                    f"{np.round(want_boxes[i], 2).tolist()}) has no match in ONNX Runtime's and no near-tie explains it"), 0
    for j in free:
        if got_scores[j] - cutoff > SCORE_TIE and not at_size_cutoff(got_boxes[j]):
            return (f"ONNX Runtime's detection {j} (label {got_labels[j]}, score {got_scores[j]:.5f}) "
                    f"is not among PyTorch's and no near-tie explains it"), 0
    return None, len(lonely)


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
