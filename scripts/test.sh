#!/usr/bin/env bash
# The whole test suite: install, build, then every ctest test (unit, loader, per-op, models).
# Pass ctest arguments through, e.g. `bash scripts/test.sh -LE slow` to skip the slow label.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --with-test-deps
bash scripts/build.sh
cd build
ctest --output-on-failure -j2 "$@"
