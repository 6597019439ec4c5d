#!/bin/bash
# Fetches PyTorch 1.13's ONNX exporter tests (test/onnx/ and the helpers they import) from
# Debian's pytorch source package into CACHE_DIR/test/onnx. Idempotent: a complete cache is
# reused. The sources are not kept in the repository; only this script is.
#
#   fetch_pytorch_tests.sh CACHE_DIR
#
# Uses a private deb-src sources list and private apt state, so the system's apt configuration
# is neither read for sources nor changed.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 CACHE_DIR" >&2
  exit 2
fi
cache=$(realpath -m "$1")
stamp="$cache/.complete"
if [ -f "$stamp" ]; then
  echo "fetch_pytorch_tests: using $cache/test/onnx ($(cat "$stamp"))"
  exit 0
fi

apt_dir="$cache/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/download"
cat > "$apt_dir/sources.list" <<SOURCES
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
SOURCES
apt_options=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/nonexistent
             -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
             -o APT::Sandbox::User=root)  # root: the _apt user may not write into CACHE_DIR

# apt-get source would also fetch the Debian packaging, which is not needed (and which some
# mirrors lack): ask apt for the orig tarball's URI and checksum, fetch only it, check it.
fail() {
  echo "fetch_pytorch_tests: $*" >&2
  exit 1
}
# apt-get update exits 0 when a download fails; its first Err/W/E lines say why.
apt-get "${apt_options[@]}" update >"$apt_dir/update.log" 2>&1 || true
read -r uri file size checksum < <(apt-get "${apt_options[@]}" source --print-uris pytorch 2>"$apt_dir/source.log" |
                                   grep "\.orig\.tar\." | tr -d "'") ||
  fail "no pytorch source package in Debian's deb-src index (network or mirror?): " \
       "$(cat "$apt_dir/update.log" "$apt_dir/source.log" | grep -m 1 -A 1 -E '^(Err|W|E):' | tr -s ' \n' ' ')"
orig="$apt_dir/download/$file"
curl -fsSL --retry 3 -o "$orig" "$uri" || fail "downloading $uri failed"
echo "${checksum#SHA256:}  $orig" | sha256sum -c --quiet - || fail "$file: SHA256 mismatch"
version=$(echo "$file" | sed 's/^pytorch_\(.*\)\.orig\.tar\..*$/\1/')

rm -rf "$cache/test"
# The tarball's one top directory (pytorch-<version>/) is stripped.
tar -xf "$orig" -C "$cache" --strip-components=1 --wildcards "*/test/onnx/*" ||
  fail "extracting test/onnx from $file failed"
rm -rf "$apt_dir"
echo "pytorch $version" > "$stamp"
echo "fetch_pytorch_tests: extracted $cache/test/onnx from $(basename "$orig")"
