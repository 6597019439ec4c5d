#!/usr/bin/env bash
# A Debian root made with debootstrap beside this Debian 12 machine, for what another release's
# PyTorch does: Debian 13 (trixie, PyTorch 2.6; tests/debian13.sh builds and tests the tree in it)
# and Debian sid (PyTorch 2.14; it only writes the files the builds then export).
#
#   bash tests/debian_root.sh RELEASE --print-root     # the root's directory
#   bash tests/debian_root.sh RELEASE --make           # debootstrap it when missing
#   bash tests/debian_root.sh RELEASE --install PKG... # --make, then apt-get install PKG... in it
#   bash tests/debian_root.sh RELEASE --shell [CMD]    # a shell (or CMD) in it, in this tree
#
# RELEASE: trixie or sid. Roots are kept outside the checkout and reused: ONNXPORT_DEBIAN13_ROOT
# (default /var/lib/onnxport/debian13) and ONNXPORT_SID_ROOT (default /var/lib/onnxport/sid). A root
# is put in place only once debootstrap has finished, so an interrupted run never leaves a half-made
# one. The tree is bind-mounted at its own path inside, so paths are the same in and out; the mounts
# live in a private mount namespace (unshare) and vanish with this script, whatever ends it. sid's
# Release file may be past its date on a mirror: apt there skips that check.
set -euo pipefail
tree="$(cd "$(dirname "$0")/.." && pwd)"
mirror="${ONNXPORT_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

usage() {
  echo "usage: $0 trixie|sid --print-root | --make | --install PKG... | --shell [CMD]" >&2
  exit 2
}
[ $# -ge 2 ] || usage
release=$1
mode=$2
shift 2
case "$release" in
  trixie) root="${ONNXPORT_DEBIAN13_ROOT:-/var/lib/onnxport/debian13}" ;;
  sid) root="${ONNXPORT_SID_ROOT:-/var/lib/onnxport/sid}" ;;
  *) usage ;;
esac
apt_options="-o Acquire::Check-Valid-Until=false"

case "$mode" in
  --print-root) echo "$root"; exit 0 ;;
  --make | --install | --shell) ;;
  *) usage ;;
esac
if [ "$(id -u)" != 0 ]; then
  echo "tests/debian_root.sh: needs root (debootstrap, mount, chroot); run it as root" >&2
  exit 1
fi

if [ ! -e "$root/etc/debian_version" ]; then
  command -v debootstrap >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap; }
  partial="$root.partial"
  rm -rf "$partial"
  mkdir -p "$(dirname "$root")"
  echo "debian_root: making the root $root with debootstrap (minbase $release, a few minutes)"
  debootstrap --variant=minbase "$release" "$partial" "$mirror"
  echo "APT::Get::Check-Valid-Until \"false\"; Acquire::Check-Valid-Until \"false\";" > "$partial/etc/apt/apt.conf.d/99onnxport-valid-until"
  mv "$partial" "$root"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

case "$mode" in
  --make) exit 0 ;;
  --install) [ $# -gt 0 ] || usage
             inner=(bash -c 'apt-get '"$apt_options"' update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"' install "$@") ;;
  --shell) if [ $# -gt 0 ]; then inner=(bash -c "$*"); else inner=(bash); fi ;;
esac

# The inner command sees the same environment the tests do outside, less what names this machine's
# Python or compilers; what tests/debian13.sh sets for its build is passed on.
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
    LANG=C.UTF-8 CI="${CI:-}" ${ONNXPORT_BUILD_DIR:+ONNXPORT_BUILD_DIR=$ONNXPORT_BUILD_DIR} \
    ONNXPORT_BUILD_TARGETS="${ONNXPORT_BUILD_TARGETS:-}" ONNXPORT_CMAKE_ARGS="${ONNXPORT_CMAKE_ARGS:-}" \
    ${ONEDNN_MAX_CPU_ISA:+ONEDNN_MAX_CPU_ISA=$ONEDNN_MAX_CPU_ISA} ${ATEN_CPU_CAPABILITY:+ATEN_CPU_CAPABILITY=$ATEN_CPU_CAPABILITY} \
    bash -c "cd \"\$0\" && exec \"\$@\"" "$tree" "$@"
' debian_root "$root" "$tree" "${inner[@]}"
