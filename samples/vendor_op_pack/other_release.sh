#!/usr/bin/env bash
# The vendor's op pack as built by the other Debian release's tree (build/ and build-debian13/ sit
# side by side: tests/debian13.sh) loads unchanged here and converts and computes FancyOp: the SDK's
# ABI does not depend on the libtorch or ONNX release (docs/architecture.md, "Releases").
#   other_release.sh THIS_BUILD OTHER_BUILD VENDOR_OPS_LIB
# Run after sample.vendor_op_pack in both builds; skipped (exit 77) when the other build has not run it.
set -euo pipefail
this=$1 other=$2 ops_lib=$3
work="$this/samples/vendor_op_pack/work"
other_pack="$other/samples/vendor_op_pack/work/packs/libonnxport_vendor.so"
if [ ! -f "$other_pack" ]; then
  echo "SKIP: no vendor pack built by the other release ($other_pack): run sample.vendor_op_pack there first"
  exit 77
fi
packs="$work/other-release-packs"
rm -rf "$packs" && mkdir -p "$packs" && cp "$other_pack" "$packs/"
onnxport="$work/prefix/bin/onnxport"
"$onnxport" plugins --plugin-dir "$packs" > "$work/other-release-plugins.out"
grep -A1 "^vendor " "$work/other-release-plugins.out" | grep -q "evaluators (onnxport run/verify): com.vendor::FancyOp" ||
  { echo "the other release's vendor pack is not loaded:" >&2; cat "$work/other-release-plugins.out" >&2; exit 1; }
out="$work/other-release.onnx"
rm -f "$out"
"$onnxport" export "$work/vendor_model.pt" -o "$out" --load-op-library "$ops_lib" --plugin-dir "$packs" \
    --input "x=$work/vendor_model.in0.npy"
"$onnxport" verify "$work/vendor_model.pt" "$out" --load-op-library "$ops_lib" --plugin-dir "$packs" \
    --input "x=$work/vendor_model.in0.npy" --per-node | tee "$work/other-release-verify.out"
grep -q "^verify: ok" "$work/other-release-verify.out" && grep -q "ok       FancyOp" "$work/other-release-verify.out" ||
  { echo "verify did not match FancyOp through the other release's pack" >&2; exit 1; }
echo "the vendor pack built by $(basename "$other") loads in $(basename "$this"), exports and verifies FancyOp"
