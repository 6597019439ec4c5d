#!/usr/bin/env bash
# ctest newer_torch.fixtures(_sid): tests/newer_torch/make_fixtures.py run by the newer PyTorch of a
# Debian root (tests/debian_root.sh: trixie has PyTorch 2.6, sid 2.14), writing into OUT_DIR, a
# directory of this tree (the tree is bind-mounted at its own path inside the root).
#
# usage: make_fixtures_in_root.sh [--release trixie|sid] [--maker SCRIPT] OUT_DIR [SCRIPT's options...]
#   --maker: the fixture script, relative to the tree (default tests/newer_torch/make_fixtures.py;
#            tests/zoo/make_zoo.py writes the zoo)
# Exit 77 (ctest: skipped) when there is no such root (or, for sid, when run inside the Debian 13
# root, which cannot enter another); a Debian 13 root without python3-torch is a failure, a sid one
# (whose packages change daily) a skip. For trixie, where
# this system's own PyTorch is 2.x (the Debian 13 build, inside the root), that one writes them.
set -euo pipefail
tree=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
release=trixie
maker=tests/newer_torch/make_fixtures.py
while [[ ${1:-} == --* ]]; do
  case "$1" in
    --release) release=$2 ;;
    --maker) maker=$2 ;;
    *) echo "make_fixtures_in_root.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
out=$1
shift
case "$release" in
  trixie) torch_major=2; makes_it="bash tests/debian13.sh --build-only" ;;
  sid) torch_major=; makes_it="bash tests/debian_root.sh sid --install python3-torch python3-torchvision python3-numpy" ;;
  *) echo "make_fixtures_in_root.sh: unknown release '$release' (trixie or sid)" >&2; exit 2 ;;
esac
this_release=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
if [[ $this_release == "$release" ]] ||
   { [[ -n $torch_major ]] && /usr/bin/python3 -c 'import sys, torch; sys.exit(int(torch.__version__.split(".")[0]) < 2)' 2>/dev/null; }; then
  exec /usr/bin/python3 "$tree/$maker" "$out" "$@"
fi
if [[ $this_release != bookworm ]]; then
  echo "SKIP: $release's files are written from the Debian 12 machine (its newer_torch tests make them into $out)"
  exit 77
fi
root=$(bash "$tree/tests/debian_root.sh" "$release" --print-root)
if [[ ! -e $root/etc/debian_version ]]; then
  echo "SKIP: no Debian $release root at $root to write the newer PyTorch's files (make it with: $makes_it)"
  exit 77
fi
if [[ $(id -u) != 0 ]]; then
  echo "SKIP: entering the Debian $release root at $root needs root (chroot); run ctest as root"
  exit 77
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [[ $out != "$tree"/* ]]; then
  echo "the fixture directory $out is outside the tree $tree, which is all the root sees" >&2
  exit 1
fi
if ! bash "$tree/tests/debian_root.sh" "$release" --shell '/usr/bin/python3 -c "import torch, torchvision"'; then
  # sid moves daily: a day on which its PyTorch does not install is a skip, not a failure of ours.
  [[ $release == sid ]] && { echo "SKIP: the Debian sid root at $root has no working python3-torch/torchvision ($makes_it)"; exit 77; }
  echo "the Debian $release root at $root has no python3-torch or python3-torchvision: $makes_it installs them" >&2
  exit 1
fi
bash "$tree/tests/debian_root.sh" "$release" --shell "/usr/bin/python3 $maker '$out' $*"
