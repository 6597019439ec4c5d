#!/usr/bin/env bash
# Configures and builds everything into ./build (2 parallel jobs; ccache speeds up rebuilds).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DONNXPORT_BUILD_CORE=ON -DONNXPORT_BUILD_TESTS=ON -DONNXPORT_BUILD_SAMPLES=ON \
  -DONNXPORT_PACK_FAMILIES="prim;elementwise;tensor;nn;rnn;creation;quantized;reduce;linalg;spectral;torchvision" "$@"
cmake --build build -j2
