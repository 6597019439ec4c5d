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
# The root is made once with debootstrap (minbase) and kept outside the checkout
# (ONNXPORT_DEBIAN13_ROOT, default /var/lib/onnxport/debian13); later runs reuse it. A root is put in
# place only once debootstrap has finished, so an interrupted run never leaves a half-made one.
# The tree is bind-mounted at its own path inside the root, so paths are the same in and out: the
# Debian 13 build ends at build-debian13/ (CLI build-debian13/bin/onnxport, Python package
# build-debian13/python) beside the Debian 12 build/. The mounts live in a private mount namespace
# (unshare) and vanish with this script, whatever ends it.
set -euo pipefail
tree="$(cd "$(dirname "$0")/.." && pwd)"
root="${ONNXPORT_DEBIAN13_ROOT:-/var/lib/onnxport/debian13}"
mirror="${ONNXPORT_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

mode=test
case "${1:-}" in
  --print-root) echo "$root"; exit 0 ;;
  --build-only) mode=build; shift ;;
  --prepare) mode=prepare; shift ;;
  --shell) mode=shell; shift ;;
esac

if [ "$(id -u)" != 0 ]; then
  echo "tests/debian13.sh: needs root (debootstrap, mount, chroot); run it as root" >&2
  exit 1
fi

if [ ! -e "$root/etc/debian_version" ]; then
  command -v debootstrap >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap; }
  partial="$root.partial"
  rm -rf "$partial"
  mkdir -p "$(dirname "$root")"
  echo "debian13: making the root $root with debootstrap (minbase trixie, a few minutes)"
  debootstrap --variant=minbase trixie "$partial" "$mirror"
  mv "$partial" "$root"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

case "$mode" in
  test) inner=(bash tests/run.sh "$@") ;;
  build) inner=(bash -c 'bash tests/install-deps.sh --with-test-deps && bash tests/build.sh') ;;
  prepare) inner=(bash tests/install-deps.sh) ;;
  shell) if [ $# -gt 0 ]; then inner=(bash -c "$*"); else inner=(bash); fi ;;
esac

# The inner command sees the same environment the tests do outside, less what names this machine's
# Python or compilers, with the build directory named for the platform.
exec unshare --mount --propagation private bash -c '
  set -euo pipefail
  root="$1"; tree="$2"; shift 2
  for d in proc sys dev dev/pts dev/shm; do
    mkdir -p "$root/$d"
    mount --bind "/$d" "$root/$d"
  done
  mkdir -p "$root$tree"
  mount --bind "$tree" "$root$tree"
  exec chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 CI="${CI:-}" ONNXPORT_BUILD_DIR=build-debian13 ONNXPORT_BUILD_TARGETS="${ONNXPORT_BUILD_TARGETS:-}" \
    ONNXPORT_CMAKE_ARGS="${ONNXPORT_CMAKE_ARGS:-}" \
    ${ONEDNN_MAX_CPU_ISA:+ONEDNN_MAX_CPU_ISA=$ONEDNN_MAX_CPU_ISA} ${ATEN_CPU_CAPABILITY:+ATEN_CPU_CAPABILITY=$ATEN_CPU_CAPABILITY} \
    bash -c "cd \"\$0\" && exec \"\$@\"" "$tree" "$@"
' debian13 "$root" "$tree" "${inner[@]}"
