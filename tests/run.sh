#!/usr/bin/env bash
# The whole test suite: install, build, then every ctest test (unit, loader, per-op, models).
# Pass ctest arguments through, e.g. `bash tests/run.sh -LE models` to skip the slow model tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/install-deps.sh --with-test-deps
bash tests/build.sh
cd build
# The big-model tests need ~7 GB of disk while they run: say what there was, at the start and the end.
df -h . | sed 's/^/disk at start: /'
trap 'df -h . | sed "s/^/disk at end: /"; du -sh . | sed "s/^/build tree: /"' EXIT
ctest --output-on-failure -j2 "$@"
