#!/usr/bin/env bash
# The sanitizer stage: builds SOURCE into BUILD with clang ($CC/$CXX, default clang-14), AddressSanitizer +
# UndefinedBehaviorSanitizer and libFuzzer's coverage instrumentation (one tree serves both),
# then runs under it: the unit tests, the evaluator's tests, the write-safety CLI tests, the
# robustness catalogue and every export of the per-op suite (fixtures from MAIN_BUILD:
# ops.fixtures, fixtures.models). `test-all` also runs every other CLI test under it (CI leaves
# those out for time; it runs them unsanitized). Any sanitizer report fails the run
# (halt_on_error).
#
# Usage: run_sanitized.sh SOURCE BUILD MAIN_BUILD [build|test|test-all]
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
  # -O1 -g1: the optimisation level ASan's documentation suggests, and line tables only (reports
  # keep file:line) instead of full debug info.
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_CXX_COMPILER="${CXX:-clang++-14}" -DCMAKE_C_COMPILER="${CC:-clang-14}" \
    -DONNXPORT_SANITIZE=ON -DONNXPORT_FUZZ=ON -DONNXPORT_BUILD_SAMPLES=OFF -DONNXPORT_BUILD_PYTHON=OFF \
    -DONNXPORT_PACK_FAMILIES="prim;elementwise;tensor;nn;rnn;creation;quantized;reduce;linalg;spectral;torchvision" >/dev/null
  cmake --build "$build" -j2
  echo "sanitized build: $((SECONDS - start)) s"
fi

if [ "$step" = all ] || [ "$step" = test ] || [ "$step" = test-all ]; then
  if [ "$step" = test ]; then
    ctest --test-dir "$build" -R '^(unit|unit\.core|cli\.write_safety|eval\.(onnx_node_tests|run|per_node|domains))$' --output-on-failure -j2
  else
    ctest --test-dir "$build" -L "unit|cli" -E robustness --output-on-failure -j2
  fi
  /usr/bin/python3 "$src/tests/robustness/run_catalogue.py" --onnxport "$build/bin/onnxport" \
    --fixtures "$main_build/fixtures/models" --work "$build/robustness"
  ops="$main_build/fixtures/ops"
  if [ ! -f "$ops/index.json" ]; then
    echo "no per-op fixtures in $ops (run the main build's ops.fixtures first)" >&2
    exit 1
  fi
  rm -rf "$build/ops"
  # Two processes, each half of the cases: in one, the exports took 6 min under ASan.
  "$build/bin/onnxport_export_cases" "$ops/index.json" "$build/ops/shard0" --shard 0/2 &
  shard0=$!
  shard1_status=0
  "$build/bin/onnxport_export_cases" "$ops/index.json" "$build/ops/shard1" --shard 1/2 || shard1_status=$?
  wait "$shard0"
  exit "$shard1_status"
fi
