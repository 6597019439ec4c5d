#!/usr/bin/env bash
# End to end, as a vendor would: install onnxport's SDK to a prefix, build the op pack out of
# tree against it, export a model using vendor::fancy, check the custom domain in the file and
# what the pack's FancyOp schema adds (inferred output shapes, the version it starts at).
# With PROGRAMS_DIR (tests/programs/make_programs.py's), the same op in a torch.export program
# (PROGRAMS_DIR/vendor/vendor_model.pt2) is mapped by the same pack, unchanged.
#   run_sample.sh BUILD_DIR VENDOR_OPS_LIB WORK_DIR [PROGRAMS_DIR]
set -euo pipefail
build=$1 ops_lib=$2 work=$3 programs=${4:-}
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
export_vendor() {  # export_vendor OUT.onnx [extra flags...]
  local out=$1; shift
  "$onnxport" export "$work/vendor_model.pt" -o "$out" --load-op-library "$ops_lib" \
      --plugin-dir "$work/packs" --input "x=$work/vendor_model.in0.npy" "$@"
}
export_vendor "$work/vendor.onnx" --verbose
export_vendor "$work/vendor3.onnx" --custom-opset com.vendor=3
# A dynamic batch: the trace then gives FancyOp's output a rank only; its schema's
# output_like_input rule is what gives it the input's [batch, 8].
export_vendor "$work/vendor_dynamic.onnx" --dynamic-axes x:0=batch
# The schema starts at com.vendor version 2: importing version 1 has no FancyOp.
if export_vendor "$work/vendor1.onnx" --custom-opset com.vendor=1 2> "$work/vendor1.err"; then
  echo "exporting with com.vendor=1 succeeded, but FancyOp's schema starts at version 2" >&2; exit 1
fi
grep -q "no operator 'com.vendor::FancyOp' at com.vendor version 1.*--custom-opset com.vendor=2" "$work/vendor1.err" ||
  { echo "unexpected error for com.vendor=1:" >&2; cat "$work/vendor1.err" >&2; exit 1; }
test ! -e "$work/vendor1.onnx"
echo "com.vendor=1: $(cat "$work/vendor1.err")"
# The pack's evaluator computes FancyOp: onnxport runs the file and verifies it against libtorch
# running vendor::fancy, node by node. Without the pack, both name the op they cannot compute.
"$onnxport" run "$work/vendor.onnx" --plugin-dir "$work/packs" --input "x=$work/vendor_model.in0.npy"
"$onnxport" verify "$work/vendor_model.pt" "$work/vendor.onnx" --load-op-library "$ops_lib" \
    --plugin-dir "$work/packs" --input "x=$work/vendor_model.in0.npy" --per-node | tee "$work/verify.out"
grep -q "^verify: ok" "$work/verify.out" && grep -q "ok       FancyOp" "$work/verify.out" ||
  { echo "verify did not compare FancyOp's value" >&2; exit 1; }
"$onnxport" plugins --plugin-dir "$work/packs" > "$work/plugins.out"
grep -A1 "^vendor " "$work/plugins.out" | grep -q "evaluators (onnxport run/verify): com.vendor::FancyOp" ||
  { echo "onnxport plugins does not list the pack's FancyOp evaluator:" >&2; cat "$work/plugins.out" >&2; exit 1; }
if "$onnxport" run "$work/vendor.onnx" --input "x=$work/vendor_model.in0.npy" 2> "$work/run_nopack.err"; then
  echo "run without the vendor pack succeeded, but nothing computes FancyOp" >&2; exit 1
fi
grep -q "no kernel for FancyOp (com.vendor)" "$work/run_nopack.err" ||
  { echo "unexpected error without the pack:" >&2; cat "$work/run_nopack.err" >&2; exit 1; }
/usr/bin/python3 - "$work" "$here/pack/vendor_pack.cpp" "$here/../../docs/writing-an-op-pack.md" <<'PY'
import os, re, sys, onnx
work, pack_source, tutorial = sys.argv[1:]
for name, want in (("vendor.onnx", 2), ("vendor3.onnx", 3), ("vendor_dynamic.onnx", 2)):
    path = f"{work}/{name}"
    m = onnx.load(path)
    onnx.checker.check_model(m)
    domains = {i.domain: i.version for i in m.opset_import}
    fancy = [n for n in m.graph.node if n.op_type == "FancyOp"]
    assert domains.get("com.vendor") == want, f"{path}: com.vendor opset {domains.get('com.vendor')}, want {want}"
    assert len(fancy) == 1 and fancy[0].domain == "com.vendor", f"{path}: no com.vendor::FancyOp node"
    alpha = [a.f for a in fancy[0].attribute if a.name == "alpha"]
    assert alpha == [0.5], f"{path}: alpha {alpha}"
    print(f"{path}: com.vendor::FancyOp with com.vendor opset {want}: ok")

def dims(value_info):
    t = value_info.type.tensor_type
    return t.elem_type, [d.dim_param or d.dim_value for d in t.shape.dim] if t.HasField("shape") else None

m = onnx.load(f"{work}/vendor_dynamic.onnx")
fancy_out = next(n for n in m.graph.node if n.op_type == "FancyOp").output[0]
info = {v.name: v for v in m.graph.value_info}
assert fancy_out in info, f"FancyOp's output {fancy_out} has no value_info"
want = (onnx.TensorProto.FLOAT, ["batch", 8])
assert dims(info[fancy_out]) == want, f"FancyOp output: {dims(info[fancy_out])}, want {want}"
assert dims(m.graph.output[0]) == want, f"graph output: {dims(m.graph.output[0])}, want {want}"
print(f"vendor_dynamic.onnx: FancyOp output {fancy_out} float[batch, 8] (value_info), graph output float[batch, 8]: ok")

# The tutorial's code cannot rot: each code block introduced by "`path`:" appears verbatim in that
# file, and the pack's block is the whole of vendor_pack.cpp (after its leading comment).
root = os.path.dirname(os.path.dirname(os.path.abspath(tutorial)))
blocks = re.findall(r"^`([\w/.]+)`:\n\n```\w+\n(.*?)^```", open(tutorial).read(), re.S | re.M)
assert blocks, "docs/writing-an-op-pack.md has no code blocks to check"
for file, block in blocks:
    assert block in open(os.path.join(root, file)).read(), f"docs/writing-an-op-pack.md: the block from {file} is not in {file}"
pack_code = open(pack_source).read()
assert ("samples/vendor_op_pack/pack/vendor_pack.cpp", pack_code[pack_code.index("#include"):]) in blocks, \
    "docs/writing-an-op-pack.md does not show the whole of vendor_pack.cpp"
print(f"docs/writing-an-op-pack.md: {len(blocks)} code blocks match the files CI builds: ok")
PY

# The program: the vendor's op as torch.export wrote it (torch.ops.vendor.fancy.default), the same
# --load-op-library and pack; verify runs the program in libtorch (the vendor's kernel) against the
# file (the pack's evaluator), node by node, at another batch size than the program's example.
program="$programs/vendor/vendor_model.pt2"
if [[ -z $programs || ! -e $program ]]; then
  echo "no torch.export program of the vendor model${programs:+ in $programs/vendor} (tests/programs writes it where a Debian root with PyTorch 2 exists): its part skipped"
  exit 0
fi
"$onnxport" export "$program" -o "$work/vendor_program.onnx" --load-op-library "$ops_lib" --plugin-dir "$work/packs" \
    | tee "$work/program_export.out"
grep -q "program mode" "$work/program_export.out" || { echo "the .pt2 was not exported as a program" >&2; exit 1; }
mkdir -p "$work/program_outputs"
"$onnxport" run "$work/vendor_program.onnx" --plugin-dir "$work/packs" --input "x=$programs/vendor/vendor_model.in0.npy" \
    --output-dir "$work/program_outputs" > /dev/null
"$onnxport" verify "$program" "$work/vendor_program.onnx" --load-op-library "$ops_lib" --plugin-dir "$work/packs" \
    --input "x=$programs/vendor/vendor_model.in0.npy" --per-node | tee "$work/program_verify.out"
grep -q "^verify: ok" "$work/program_verify.out" && grep -q "ok       FancyOp" "$work/program_verify.out" ||
  { echo "verify of the program did not compare FancyOp's value" >&2; exit 1; }
/usr/bin/python3 - "$work" "$programs/vendor" <<'PY'
import glob, sys, numpy as np, onnx
work, folder = sys.argv[1:]
m = onnx.load(f"{work}/vendor_program.onnx")
fancy = [n for n in m.graph.node if n.op_type == "FancyOp"]
assert len(fancy) == 1 and fancy[0].domain == "com.vendor", "the program's file has no com.vendor::FancyOp node"
batch = m.graph.input[0].type.tensor_type.shape.dim[0].dim_param
assert batch, "the program's symbolic batch is not a dim_param"
got = np.load(glob.glob(f"{work}/program_outputs/*.npy")[0])
want = np.load(f"{folder}/vendor_model.out0.npy")
err = float(np.abs(got - want).max())
assert got.shape == want.shape and err < 1e-5, f"the program's file computes {got.shape}, max abs error {err}"
print(f"vendor_program.onnx: com.vendor::FancyOp, input x[{batch}, 8], batch 3 against PyTorch's float64: "
      f"max abs error {err:.2e}: ok")
PY
