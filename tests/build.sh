#!/usr/bin/env bash
# Configures and builds everything into ./build (2 parallel jobs; ccache speeds up rebuilds), or into
# $ONNXPORT_BUILD_DIR (tests/debian13.sh builds the Debian 13 tree into build-debian13).
# ONNXPORT_BUILD_TARGETS (space-separated, e.g. "core/all plugins/all") builds only those targets and
# ONNXPORT_CMAKE_ARGS (space-separated -D options) configures on top of the defaults: CI's Debian 13
# part builds what its fixed part of the suite runs.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${ONNXPORT_BUILD_DIR:-build}"
# ccache keys on paths relative to the tree, so another checkout of it (CI's clone) reuses the
# compiles of this one (ccache's manual, "Compiling in different directories").
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
# -g1 (line tables: backtraces and sanitizer reports keep file:line) instead of -g's full debug
# info, which took ~40% of each core file's compile time.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DONNXPORT_BUILD_CORE=ON -DONNXPORT_BUILD_TESTS=ON -DONNXPORT_BUILD_SAMPLES=ON \
  -DONNXPORT_BUILD_PYTHON=ON \
  -DONNXPORT_PACK_FAMILIES="prim;elementwise;tensor;nn;rnn;creation;quantized;reduce;linalg;spectral;torchvision" \
  ${ONNXPORT_CMAKE_ARGS:-} "$@"
targets=()
for target in ${ONNXPORT_BUILD_TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$build" -j2 "${targets[@]}"
