#!/usr/bin/env bash
# ctest newer_torch.fixtures: tests/newer_torch/make_fixtures.py run by the newer PyTorch of the
# Debian 13 root (tests/debian13.sh --shell), writing into OUT_DIR, a directory of this tree (the
# tree is bind-mounted at its own path inside the root).
#
# usage: make_fixtures_in_root.sh OUT_DIR [make_fixtures.py options...]
# Exit 77 (ctest: skipped) when there is no root; a root without python3-torch is a failure. Where
# this system's own PyTorch is 2.x (the Debian 13 build, inside the root), that one writes them.
set -euo pipefail
tree=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=$1
shift
if /usr/bin/python3 -c 'import sys, torch; sys.exit(int(torch.__version__.split(".")[0]) < 2)' 2>/dev/null; then
  exec /usr/bin/python3 "$tree/tests/newer_torch/make_fixtures.py" "$out" "$@"
fi
root=$(bash "$tree/tests/debian13.sh" --print-root)

if [[ ! -e $root/etc/debian_version ]]; then
  echo "SKIP: no Debian 13 root at $root to write the newer PyTorch's files (make it with: bash tests/debian13.sh --build-only)"
  exit 77
fi
if [[ $(id -u) != 0 ]]; then
  echo "SKIP: entering the Debian 13 root at $root needs root (chroot); run ctest as root"
  exit 77
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [[ $out != "$tree"/* ]]; then
  echo "the fixture directory $out is outside the tree $tree, which is all the root sees" >&2
  exit 1
fi
if ! bash "$tree/tests/debian13.sh" --shell '/usr/bin/python3 -c "import torch, torchvision"'; then
  echo "the Debian 13 root at $root has no python3-torch or python3-torchvision: bash tests/debian13.sh --build-only installs them" >&2
  exit 1
fi
bash "$tree/tests/debian13.sh" --shell "/usr/bin/python3 tests/newer_torch/make_fixtures.py '$out' $*"
