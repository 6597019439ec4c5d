#!/bin/bash
# Fetches parts of PyTorch's source tree (its tests, fixtures) from Debian's pytorch source package
# into CACHE_DIR. Idempotent: a complete cache of the same release and parts is reused. The sources
# are never kept in the repository; only this script is.
#
#   fetch_pytorch_sources.sh CACHE_DIR [--release CODENAME] [--member GLOB]...
#
#   --release   the Debian release whose pytorch source to take (bookworm: 1.13.1, trixie: 2.6.0);
#               default this system's own, so the sources match the torch installed beside them
#   --member    a tar wildcard of what to extract, relative to the source tree's top directory
#               (repeatable); default test/onnx/* (the exporter tests and their helpers)
#
# Uses a private deb-src sources list and private apt state, so the system's apt configuration
# is neither read for sources nor changed.
set -euo pipefail

usage() {
  echo "usage: $0 CACHE_DIR [--release CODENAME] [--member GLOB]..." >&2
  exit 2
}
[ $# -ge 1 ] || usage
cache=$(realpath -m "$1")
shift
release=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
members=()
while [ $# -gt 0 ]; do
  case "$1" in
    --release) [ $# -ge 2 ] || usage; release=$2; shift 2 ;;
    --member) [ $# -ge 2 ] || usage; members+=("$2"); shift 2 ;;
    *) usage ;;
  esac
done
[ ${#members[@]} -gt 0 ] || members=("test/onnx/*")
[ -n "$release" ] || { echo "fetch_pytorch_sources: /etc/os-release names no release: give --release" >&2; exit 2; }

want="release $release: ${members[*]}"
stamp="$cache/.complete"
if [ -f "$stamp" ] && [ "$(sed -n 2p "$stamp")" = "$want" ]; then
  echo "fetch_pytorch_sources: using $cache ($(head -n 1 "$stamp"))"
  exit 0
fi

fail() {
  echo "fetch_pytorch_sources: $*" >&2
  exit 1
}
apt_dir="$cache/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/download"
cat > "$apt_dir/sources.list" <<SOURCES
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $release main
SOURCES
apt_options=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/nonexistent
             -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
             -o APT::Sandbox::User=root  # root: the _apt user may not write into CACHE_DIR
             -o Acquire::Check-Valid-Until=false)  # sid's Release file may be past its date on a mirror

# apt-get source would also fetch the Debian packaging, which is not needed (and which some
# mirrors lack): ask apt for the orig tarball's URI and checksum, fetch only it, check it.
# apt-get update exits 0 when a download fails; its first Err/W/E lines say why.
apt-get "${apt_options[@]}" update >"$apt_dir/update.log" 2>&1 || true
read -r uri file size checksum < <(apt-get "${apt_options[@]}" source --print-uris pytorch 2>"$apt_dir/source.log" |
                                   grep "\.orig\.tar\." | tr -d "'") ||
  fail "no pytorch source package for $release in Debian's deb-src index (network or mirror?): " \
       "$(cat "$apt_dir/update.log" "$apt_dir/source.log" | grep -m 1 -A 1 -E '^(Err|W|E):' | tr -s ' \n' ' ')"
orig="$apt_dir/download/$file"
curl -fsSL --retry 3 -o "$orig" "$uri" || fail "downloading $uri failed"
echo "${checksum#SHA256:}  $orig" | sha256sum -c --quiet - || fail "$file: SHA256 mismatch"
version=$(echo "$file" | sed 's/^pytorch_\(.*\)\.orig\.tar\..*$/\1/')

rm -rf "$cache/test" "$stamp"
# The tarball's one top directory (pytorch-<version>/ or pytorch-v<version>/) is stripped.
tar -xf "$orig" -C "$cache" --strip-components=1 --wildcards "${members[@]/#/*/}" ||
  fail "extracting ${members[*]} from $file failed"
rm -rf "$apt_dir"
printf 'pytorch %s\n%s\n' "$version" "$want" > "$stamp"
echo "fetch_pytorch_sources: extracted ${members[*]} of $(basename "$orig") into $cache"
