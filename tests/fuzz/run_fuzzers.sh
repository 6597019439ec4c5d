#!/usr/bin/env bash
# Runs libFuzzer targets, each for SECONDS, starting from the committed seed corpus
# (tests/fuzz/corpus/TARGET). New inputs and any crash go to $FUZZ_WORK (default BIN_DIR/fuzz-work),
# never into the checkout. Exits non-zero if a target finds a crash, a leak-free timeout or OOM.
#
# Usage: run_fuzzers.sh BIN_DIR SECONDS [TARGET...]   (no TARGET: all of them)
# FUZZ_SEED=N fixes libFuzzer's random seed. ctest sets it, so that a CI run explores the same
# inputs on every machine and a landing is never failed by a new find by luck of the seed; long
# exploratory runs leave it unset (a new seed each run) and their crashes join the seed corpus.
# Long runs: bash tests/fuzz/run_fuzzers.sh build-fuzz/bin 1800
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$1"
seconds="$2"
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_input_spec fuzz_export_flags fuzz_config_json fuzz_npy fuzz_onnx_file fuzz_onnx_run
                                    fuzz_pack_registration)
work="${FUZZ_WORK:-$bin/fuzz-work}"
# libtorch and protobuf keep process-lifetime allocations; leak reports would be about them.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
seed=()
[ -z "${FUZZ_SEED:-}" ] || seed=(-seed="$FUZZ_SEED")
status=0
for t in "${targets[@]}"; do
  mkdir -p "$work/$t/corpus"
  log="$work/$t/last-run.log"
  if "$bin/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 "${seed[@]}" \
      -artifact_prefix="$work/$t/" "$work/$t/corpus" "$here/corpus/$t" >"$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo "?")
    echo "$t: ok, $runs executions in ${seconds} s, coverage $cov edges, corpus $(ls "$work/$t/corpus" | wc -l) inputs"
  else
    echo "$t: FAILED (log: $log)"
    grep -E "ERROR|SUMMARY|Test unit written" "$log" | head -5 || true
    status=1
  fi
done
exit $status
