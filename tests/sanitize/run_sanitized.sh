#!/usr/bin/env bash
# The sanitizer stage: builds SOURCE into BUILD with clang-14, AddressSanitizer +
# UndefinedBehaviorSanitizer and libFuzzer's coverage instrumentation (one tree serves both),
# then runs under it: the unit tests, the CLI tests, the robustness catalogue and every export of
# the per-op suite (fixtures from MAIN_BUILD: ops.fixtures, fixtures.models). Any sanitizer
# report fails the run (halt_on_error).
#
# Usage: run_sanitized.sh SOURCE BUILD MAIN_BUILD [build|test]
set -euo pipefail
src="$1"
build="$2"
main_build="$3"
step="${4:-all}"
# Leak checking is off: libtorch and protobuf keep process-lifetime allocations by design.
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"

if [ "$step" = all ] || [ "$step" = build ]; then
  start=$SECONDS
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14 \
    -DONNXPORT_SANITIZE=ON -DONNXPORT_FUZZ=ON -DONNXPORT_BUILD_SAMPLES=OFF -DONNXPORT_BUILD_PYTHON=OFF \
    -DONNXPORT_PACK_FAMILIES="prim;elementwise;tensor;nn;rnn;creation;quantized;reduce;linalg;spectral;torchvision" >/dev/null
  cmake --build "$build" -j2
  echo "sanitized build: $((SECONDS - start)) s"
fi

if [ "$step" = all ] || [ "$step" = test ]; then
  ctest --test-dir "$build" -L "unit|cli" -E robustness --output-on-failure -j2
  /usr/bin/python3 "$src/tests/robustness/run_catalogue.py" --onnxport "$build/bin/onnxport" \
    --fixtures "$main_build/fixtures/models" --work "$build/robustness"
  ops="$main_build/fixtures/ops"
  if [ ! -f "$ops/index.json" ]; then
    echo "no per-op fixtures in $ops (run the main build's ops.fixtures first)" >&2
    exit 1
  fi
  rm -rf "$build/ops"
  "$build/bin/onnxport_export_cases" "$ops/index.json" "$build/ops"
fi
