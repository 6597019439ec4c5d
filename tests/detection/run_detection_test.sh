#!/usr/bin/env bash
# Export one torchvision detection model with torchvision's own op library loaded (its .pt holds
# torchvision::nms / roi_align), then compare boxes, scores and labels with PyTorch in ONNX Runtime.
# usage: run_detection_test.sh ONNXPORT NODE PYTHON FIXTURE_DIR NAME WORK_DIR
set -euo pipefail
onnxport=$1 node=$2 python=$3 fixtures=$4 name=$5 work=$6
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ops_library=$("$python" -c 'import glob, os, torchvision; print(glob.glob(os.path.join(os.path.dirname(torchvision.__file__), "_C*.so"))[0])')
mkdir -p "$work"
onnx_file=$work/$name.onnx
rm -f "$onnx_file"
"$onnxport" export "$fixtures/$name.pt" -o "$onnx_file" --opset 17 --load-op-library "$ops_library" \
  --input "images=$fixtures/$name.in0.npy"
"$node" "$here/../integration/ort_compare.js" "$onnx_file" "$fixtures/$name.json"
rm -f "$onnx_file"
