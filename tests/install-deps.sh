#!/usr/bin/env bash
# Installs everything onnxport needs on a fresh Debian machine (run as root): Debian 12 (bookworm:
# libtorch 1.13, onnx 1.12, clang-14) or Debian 13 (trixie: libtorch 2.6, onnx 1.17, clang-19). The
# packages that differ by release are chosen from /etc/os-release; every other name is the same in both.
# Build: libtorch, libonnx, protobuf, Boost, nlohmann-json, CLI11, doctest, ninja, ccache;
# pybind11 and Python's headers for the Python package (python/).
# Run: Graphviz's dot for `onnxport inspect --html`. Tests: Chromium renders that page headless.
# Run: jemalloc, the CLI's allocator (docs/architecture.md "Memory").
# Run: an optimized BLAS (OpenBLAS). Debian's libtorch multiplies matrices through the system's
# libblas.so.3, which without it is the reference BLAS: an export's one forward pass (type
# recording) takes 0.6 s instead of 0.05 s on ResNet-50.
# Tests: Python torch/torchvision/onnx (fixtures only, never the product), Node's onnxruntime-node;
# clang (14 / 19) with its sanitizer and libFuzzer runtimes for the sanitizer/fuzz stage (tests/sanitize);
# ONNX's backend node tests (libonnx-testdata) for the evaluator; man-db to render the man page;
# GNU time for the benchmarks' peak RSS (tests/bench).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake g++ ninja-build ccache pkg-config
  libtorch-dev libonnx-dev libprotobuf-dev protobuf-compiler libopenblas0-pthread
  libjemalloc-dev libboost-dev libboost-filesystem-dev nlohmann-json3-dev libcli11-dev libfmt-dev doctest-dev
  python3-torch python3-torchvision python3-torchaudio python3-onnx python3-numpy
  pybind11-dev python3-dev
  graphviz chromium
  libonnx-testdata man-db groff-base curl xz-utils git time
)
codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
case "$codename" in
  bookworm) packages+=(clang-14 libclang-rt-14-dev debootstrap python3-torchtext) ;;   # debootstrap: tests/debian13.sh; torchtext: tests/torchtext (Debian 13 has none)
  trixie) packages+=(clang-19 libclang-rt-19-dev python3-pytest python3-setuptools) ;;   # PyTorch 2.6's exporter tests import them
  *) echo "tests/install-deps.sh: Debian '$codename' is not a release onnxport builds on (bookworm or trixie)" >&2
     exit 1 ;;
esac
# Node may come from another packaging of nodejs that bundles npm: only add Debian's if absent.
command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ "${1:-}" = "--with-test-deps" ] && [ ! -d node_modules/onnxruntime-node ]; then
  # --ignore-scripts: the package's install script downloads GPU binaries (no internet here);
  # the CPU library ships inside the package.
  npm ci --ignore-scripts --no-audit --no-fund
fi
