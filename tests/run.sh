#!/usr/bin/env bash
# The whole test suite: install, build, then every ctest test (unit, loader, per-op, models).
# Pass ctest arguments through, e.g. `bash tests/run.sh -LE models` to skip the slow model tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/install-deps.sh --with-test-deps
bash tests/build.sh
cd "${ONNXPORT_BUILD_DIR:-build}"
# No verdict may depend on the CPU. libtorch and the evaluator reach oneDNN and ATen's vector
# kernels, which pick code by the CPU's instruction sets (AVX-512 here, AVX2 on an AMD EPYC):
# capped at AVX2, every x86-64 machine with AVX2 computes the same bits. ONNX Runtime's kernels
# still choose by CPU; the comparisons' tolerances cover them.
export ONEDNN_MAX_CPU_ISA="${ONEDNN_MAX_CPU_ISA:-AVX2}" ATEN_CPU_CAPABILITY="${ATEN_CPU_CAPABILITY:-avx2}"
# The big-model tests need ~7 GB of disk while they run: say what there was, at the start and the end.
df -h . | sed 's/^/disk at start: /'
trap 'df -h . | sed "s/^/disk at end: /"; du -sh . | sed "s/^/build tree: /"' EXIT
ctest --output-on-failure -j2 "$@"
