#!/usr/bin/env bash
# The main job on the bundled default: install, build, export the C++ AlexNet sample in-process,
# check it, and print its graph.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/install-deps.sh
bash tests/build.sh
build/bin/onnxport_sample_alexnet build/alexnet.onnx
build/bin/onnxport check build/alexnet.onnx
build/bin/onnxport inspect build/alexnet.onnx
