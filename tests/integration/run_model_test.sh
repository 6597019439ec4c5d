#!/usr/bin/env bash
# One acceptance test: export a fixture model with the onnxport CLI at one opset, check the
# result with onnxport and with ONNX's own Python checker, let ONNX Runtime compare its outputs
# with the eager PyTorch outputs recorded by tests/fixtures/make_models.py, then `onnxport verify`.
#
# usage: run_model_test.sh ONNXPORT NODE PYTHON FIXTURE_DIR NAME OPSET WORK_DIR [ORT_COMPARE_ARGS...]
# The .onnx is deleted after a pass (the VGG one is ~530 MB) unless ONNXPORT_KEEP_ONNX=1. With
# ONNXPORT_SKIP_WITHOUT_FIXTURES=REASON a missing fixture is a skip (exit 77) saying REASON.
set -euo pipefail

if [[ $# -lt 7 ]]; then
  echo "usage: $0 ONNXPORT NODE PYTHON FIXTURE_DIR NAME OPSET WORK_DIR [ORT_COMPARE_ARGS...]" >&2
  exit 2
fi
onnxport=$1 node=$2 python=$3 fixtures=$4 name=$5 opset=$6 work=$7
shift 7
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
manifest=$fixtures/$name.json
if [[ ! -f $manifest && -n ${ONNXPORT_SKIP_WITHOUT_FIXTURES:-} ]]; then
  echo "SKIP: no $manifest: $ONNXPORT_SKIP_WITHOUT_FIXTURES"
  exit 77
fi
onnx_file=$work/$name.opset$opset.onnx

step() {  # step LABEL COMMAND...: run one step, timing it and naming it if it fails
  local label=$1 start=$SECONDS
  shift
  echo "== $label: $*"
  if ! "$@"; then
    echo "FAILED at step '$label' for $name at opset $opset (output kept in $work)" >&2
    exit 1
  fi
  echo "== $label: ok ($((SECONDS - start)) s)"
}

if [[ ! -f $manifest ]]; then
  echo "missing fixture $manifest: the fixtures.models test (tests/fixtures/make_models.py) must run first" >&2
  exit 1
fi

# --input NAME=FILE.npy for every manifest input, in order: names and exact values of the graph inputs.
mapfile -t input_args < <("$python" - "$manifest" <<'EOF'
import json, os, sys
manifest = sys.argv[1]
for entry in json.load(open(manifest))["inputs"]:
    print("--input")
    print(f'{entry["name"]}={os.path.join(os.path.dirname(manifest), entry["file"])}')
EOF
)
model=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["model"])' "$manifest")
# Tolerances a manifest declares ("rtol"/"atol", e.g. tests/zoo/make_zoo.py's) go first: the
# ORT_COMPARE_ARGS given on the command line still win.
mapfile -t tolerance_args < <("$python" - "$manifest" <<'EOF'
import json, sys
manifest = json.load(open(sys.argv[1]))
for key in ("rtol", "atol"):
    if key in manifest:
        print(f"--{key}")
        print(manifest[key])
EOF
)

mkdir -p "$work"
rm -f "$onnx_file" "$onnx_file.data"
step export "$onnxport" export "$fixtures/$model" -o "$onnx_file" --opset "$opset" "${input_args[@]}"
step "onnxport check" "$onnxport" check "$onnx_file"
step "onnx.checker" "$python" -c 'import onnx, sys; onnx.checker.check_model(sys.argv[1], full_check=True)' "$onnx_file"
step "onnxruntime compare" "$node" "$here/ort_compare.js" "$onnx_file" "$manifest" "${tolerance_args[@]}" "$@"
# onnxport's own evaluator against libtorch, on the manifest's inputs and two more input sets
# drawn like them: it must reach ONNX Runtime's verdict (a pass, as the step above required).
step "onnxport verify" "$onnxport" verify "$fixtures/$model" "$onnx_file" "${input_args[@]}" "${tolerance_args[@]}"

if [[ ${ONNXPORT_KEEP_ONNX:-0} != 1 ]]; then
  rm -f "$onnx_file" "$onnx_file.data"  # and its external data, if it has one
fi
