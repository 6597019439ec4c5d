#!/usr/bin/env bash
# Builds and tests this tree on Debian 13 (trixie: libtorch 2.6, onnx 1.17) from a Debian 12 machine.
#
#   bash tests/debian13.sh                 # make the root if missing, build into build-debian13/, run every test
#   bash tests/debian13.sh -L unit         # the same, ctest arguments passed through (as tests/run.sh takes them)
#   bash tests/debian13.sh --build-only    # make the root, install, build; run nothing
#   bash tests/debian13.sh --prepare       # make the root and install its Debian packages only (no build,
#                                          # no node_modules: safe beside a Debian 12 build, as .ci/run does)
#   bash tests/debian13.sh --shell [CMD]   # a shell (or CMD) inside the root, in this tree, with the mounts
#   bash tests/debian13.sh --print-root    # print the root's directory and exit
#
# The root is made once with debootstrap (minbase) by tests/debian_root.sh and kept outside the
# checkout (ONNXPORT_DEBIAN13_ROOT, default /var/lib/onnxport/debian13); later runs reuse it. The tree
# is bind-mounted at its own path inside the root, so paths are the same in and out: the Debian 13
# build ends at build-debian13/ (CLI build-debian13/bin/onnxport, Python package build-debian13/python)
# beside the Debian 12 build/.
set -euo pipefail
tree="$(cd "$(dirname "$0")/.." && pwd)"

mode=test
case "${1:-}" in
  --print-root) exec bash "$tree/tests/debian_root.sh" trixie --print-root ;;
  --build-only) mode=build; shift ;;
  --prepare) mode=prepare; shift ;;
  --shell) mode=shell; shift ;;
esac

case "$mode" in
  test) inner=(bash tests/run.sh "$@") ;;
  build) inner=(bash -c 'bash tests/install-deps.sh --with-test-deps && bash tests/build.sh') ;;
  prepare) inner=(bash tests/install-deps.sh) ;;
  shell) if [ $# -gt 0 ]; then inner=(bash -c "$*"); else inner=(bash); fi ;;
esac

# The root is made and entered by tests/debian_root.sh; the build inside is named for the platform.
ONNXPORT_BUILD_DIR=build-debian13 exec bash "$tree/tests/debian_root.sh" trixie --shell "$(printf '%q ' "${inner[@]}")"
