#!/usr/bin/env bash
# End to end, as a vendor would: install onnxport's SDK to a prefix, build the op pack out of
# tree against it, export a model using vendor::fancy, check the custom domain in the file.
#   run_sample.sh BUILD_DIR VENDOR_OPS_LIB WORK_DIR
set -euo pipefail
build=$1 ops_lib=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
cmake -S "$here/pack" -B "$work/pack-build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/pack-configure.log"
cmake --build "$work/pack-build" > "$work/pack-build.log"
mkdir -p "$work/packs" && cp "$work/pack-build/libonnxport_vendor.so" "$work/packs/"
if ldd "$work/packs/libonnxport_vendor.so" | grep -q "libtorch\|libc10"; then
  echo "the out-of-tree op pack links libtorch: it must build from the SDK alone" >&2; exit 1
fi
/usr/bin/python3 "$here/make_model.py" "$ops_lib" "$work"
onnxport="$work/prefix/bin/onnxport"
"$onnxport" export "$work/vendor_model.pt" -o "$work/vendor.onnx" --load-op-library "$ops_lib" \
    --plugin-dir "$work/packs" --input "x=$work/vendor_model.in0.npy" --verbose
"$onnxport" export "$work/vendor_model.pt" -o "$work/vendor3.onnx" --load-op-library "$ops_lib" \
    --plugin-dir "$work/packs" --input "x=$work/vendor_model.in0.npy" --custom-opset com.vendor=3
/usr/bin/python3 - "$work/vendor.onnx" "$work/vendor3.onnx" <<'PY'
import sys, onnx
for path, want in ((sys.argv[1], 2), (sys.argv[2], 3)):
    m = onnx.load(path)
    onnx.checker.check_model(m)
    domains = {i.domain: i.version for i in m.opset_import}
    fancy = [n for n in m.graph.node if n.op_type == "FancyOp"]
    assert domains.get("com.vendor") == want, f"{path}: com.vendor opset {domains.get('com.vendor')}, want {want}"
    assert len(fancy) == 1 and fancy[0].domain == "com.vendor", f"{path}: no com.vendor::FancyOp node"
    alpha = [a.f for a in fancy[0].attribute if a.name == "alpha"]
    assert alpha == [0.5], f"{path}: alpha {alpha}"
    print(f"{path}: com.vendor::FancyOp with com.vendor opset {want}: ok")
PY
