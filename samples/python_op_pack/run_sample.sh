#!/usr/bin/env bash
# The Python way of docs/writing-an-op-pack.md, end to end from an installed onnxport: the
# vendor sample's model (vendor::fancy) exported with fancy.py in a plugin directory, checked
# by `onnxport verify` (libtorch running vendor::fancy against the written ONNX ops).
#   run_sample.sh BUILD_DIR VENDOR_OPS_LIB WORK_DIR
set -euo pipefail
build=$1 ops_lib=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work/packs"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
cp "$here/fancy.py" "$work/packs/"
/usr/bin/python3 "$here/../vendor_op_pack/make_model.py" "$ops_lib" "$work"
onnxport="$work/prefix/bin/onnxport"
"$onnxport" plugins --plugin-dir "$work/packs" | tee "$work/plugins.out"
grep -q "^python:fancy python  loaded  1 ops  $work/packs/fancy.py" "$work/plugins.out" ||
  { echo "onnxport plugins does not list fancy.py as a loaded Python pack" >&2; exit 1; }
"$onnxport" export "$work/vendor_model.pt" -o "$work/fancy.onnx" --load-op-library "$ops_lib" \
    --plugin-dir "$work/packs" --input "x=$work/vendor_model.in0.npy"
"$onnxport" verify "$work/vendor_model.pt" "$work/fancy.onnx" --load-op-library "$ops_lib" \
    --plugin-dir "$work/packs" --input "x=$work/vendor_model.in0.npy" | tee "$work/verify.out"
grep -q "^verify: ok" "$work/verify.out" || { echo "verify failed" >&2; exit 1; }
/usr/bin/python3 - "$work/fancy.onnx" "$here/fancy.py" "$here/../../docs/writing-an-op-pack.md" <<'PY'
import sys, onnx
model_file, pack_file, tutorial = sys.argv[1:]
ops = [n.op_type for n in onnx.load(model_file).graph.node]
assert "Sigmoid" in ops and all(n.domain in ("", "ai.onnx") for n in onnx.load(model_file).graph.node), ops
pack = open(pack_file).read()
assert "```python\n" + pack + "```" in open(tutorial).read(), "docs/writing-an-op-pack.md must show fancy.py as it is"
print("python op pack sample ok:", ops)
PY
