#!/usr/bin/python3
"""Checks that ort_compare.js passes what matches and FAILS what does not.

A tiny ONNX model (built here with onnx.helper) is run through ort_compare.js against correct
expectations, then against perturbed ones: a value just outside the tolerance, an off-by-one
integer, a flipped bool, a wrong shape, a wrong dtype, a missing input, NaN. Also checks the
.npy writer (--save-actual) round-trips through numpy and that inputs are fed by position.

usage: ort_compare_selftest.py [--node NODE] [--work-dir DIR]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_COMPARE = os.path.join(HERE, "ort_compare.js")
NODE = "node"
WORK = None

# Graph inputs deliberately not named input<k>: ort_compare must feed them by position.
INPUTS = [("a", TensorProto.FLOAT, [2, 3]), ("b", TensorProto.INT64, [4]),
          ("c", TensorProto.DOUBLE, [2]), ("d", TensorProto.INT32, []), ("e", TensorProto.BOOL, [3])]


def build_model(path):
    """y0 = a*2 (float32), y1 = b+1 (int64), y2 = a>0 (bool), y3 = c (float64), y4 = d (int32),
    y5 = not e (bool)."""
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    one = helper.make_tensor("one", TensorProto.INT64, [], [1])
    zero = helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])
    nodes = [
        helper.make_node("Mul", ["a", "two"], ["y0"]),
        helper.make_node("Add", ["b", "one"], ["y1"]),
        helper.make_node("Greater", ["a", "zero"], ["y2"]),
        helper.make_node("Identity", ["c"], ["y3"]),
        helper.make_node("Identity", ["d"], ["y4"]),
        helper.make_node("Not", ["e"], ["y5"]),
    ]
    outputs = [("y0", TensorProto.FLOAT, [2, 3]), ("y1", TensorProto.INT64, [4]),
               ("y2", TensorProto.BOOL, [2, 3]), ("y3", TensorProto.DOUBLE, [2]),
               ("y4", TensorProto.INT32, []), ("y5", TensorProto.BOOL, [3])]
    graph = helper.make_graph(
        nodes, "ort_compare_selftest",
        [helper.make_tensor_value_info(*i) for i in INPUTS],
        [helper.make_tensor_value_info(*o) for o in outputs],
        initializer=[two, one, zero])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, path)


def example_inputs():
    return [np.array([[1.0, -2.0, 3.5], [0.25, -0.125, 7.0]], np.float32),
            np.array([-3, 0, 5, 2**40], np.int64),
            np.array([1.0 / 3.0, -1e300], np.float64),
            np.array(42, np.int32),
            np.array([True, False, True])]


def reference_outputs(a, b, c, d, e):
    return [a * np.float32(2), b + 1, a > 0, c.copy(), d.copy(), ~e]


class OrtCompareTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ort_compare_", dir=WORK)
        cls.onnx = os.path.join(cls.dir, "tiny.onnx")
        build_model(cls.onnx)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def write_case(self, tag, inputs=None, outputs=None):
        """Writes inputs/expected outputs as .npy plus a manifest; returns the manifest path."""
        inputs = example_inputs() if inputs is None else inputs
        outputs = reference_outputs(*inputs) if outputs is None else outputs
        manifest = {"model": "tiny.pt", "inputs": [], "outputs": []}
        for kind, arrays in (("in", inputs), ("out", outputs)):
            for k, array in enumerate(arrays):
                file = f"{tag}.{kind}{k}.npy"
                np.save(os.path.join(self.dir, file), array)
                entry = {"file": file, "shape": list(array.shape), "dtype": str(array.dtype)}
                if kind == "in":
                    entry["name"] = f"input{k}"
                manifest["inputs" if kind == "in" else "outputs"].append(entry)
        path = os.path.join(self.dir, f"{tag}.json")
        with open(path, "w") as f:
            json.dump(manifest, f)
        return path

    def run_compare(self, *args):
        result = subprocess.run([NODE, ORT_COMPARE, *args], capture_output=True, text=True)
        return result.returncode, result.stdout + result.stderr

    def assert_passes(self, *args):
        code, out = self.run_compare(*args)
        self.assertEqual(code, 0, out)
        return out

    def assert_fails(self, *args, says):
        code, out = self.run_compare(*args)
        self.assertEqual(code, 1, out)
        self.assertIn(says, out)
        return out

    def perturbed(self, k, change):
        outputs = reference_outputs(*example_inputs())
        outputs[k] = change(outputs[k].copy())
        return outputs

    def test_matching_outputs_pass(self):
        out = self.assert_passes(self.onnx, self.write_case("good"))
        self.assertEqual(out.count(" PASS"), 6, out)
        self.assertIn("1 passed, 0 failed", out)

    def test_float_just_outside_tolerance_fails(self):
        def nudge(y):  # [1,2] = 14.0: allowed 1e-5 + 1e-3*14 = 0.01401
            y[1, 2] += np.float32(0.0141)
            return y
        manifest = self.write_case("float_out", outputs=self.perturbed(0, nudge))
        self.assert_fails(self.onnx, manifest, says="1 of 6 elements violate")

    def test_float_just_inside_tolerance_passes(self):
        def nudge(y):
            y[1, 2] += np.float32(0.0139)
            return y
        self.assert_passes(self.onnx, self.write_case("float_in", outputs=self.perturbed(0, nudge)))

    def test_tolerances_are_overridable(self):
        def nudge(y):
            y[0, 0] += np.float32(0.01)  # 2.0 + 0.01: needs rtol >= 5e-3
            return y
        manifest = self.write_case("rtol", outputs=self.perturbed(0, nudge))
        self.assert_fails(self.onnx, manifest, says="FAIL")
        self.assert_passes(self.onnx, manifest, "--rtol", "6e-3")
        self.assert_passes(self.onnx, manifest, "--atol", "0.011")

    def test_atol_alone_decides_near_zero(self):
        def nudge(y):  # expected 0 -> tolerance is atol only
            y[0] = 0.0
            return y
        inputs = example_inputs()
        inputs[2][0] = 2e-5
        outputs = reference_outputs(*inputs)
        outputs[3][0] = 0.0
        manifest = self.write_case("near_zero", inputs=inputs, outputs=outputs)
        self.assert_fails(self.onnx, manifest, says="1 of 2 elements violate")
        self.assert_passes(self.onnx, manifest, "--atol", "3e-5")

    def test_float64_is_compared_in_double_precision(self):
        def nudge(y):
            y[1] *= 1.01
            return y
        self.assert_fails(self.onnx, self.write_case("f64", outputs=self.perturbed(3, nudge)),
                          says='out3 "y3" float64[2]')

    def test_int64_must_be_exact(self):
        def off_by_one(y):
            y[3] += 1  # 2**40 + 2: within rtol 1e-3, but integers compare exactly
            return y
        out = self.assert_fails(self.onnx, self.write_case("int64", outputs=self.perturbed(1, off_by_one)),
                                says="exact equality")
        self.assertIn("got 1099511627777 want 1099511627778", out)

    def test_int64_beyond_double_precision_must_be_exact(self):
        inputs = example_inputs()
        inputs[1][0] = 2**60
        outputs = reference_outputs(*inputs)
        outputs[1][0] += 1  # 2**60 + 2 vs 2**60 + 1: the same double, different int64
        self.assert_fails(self.onnx, self.write_case("int64_big", inputs=inputs, outputs=outputs),
                          says="1 of 4 elements violate exact equality")

    def test_infinity_matches_only_same_infinity(self):
        inputs = example_inputs()
        inputs[2][1] = np.inf
        outputs = reference_outputs(*inputs)
        self.assert_passes(self.onnx, self.write_case("inf", inputs=inputs, outputs=outputs))
        outputs[3][1] = 1e300
        self.assert_fails(self.onnx, self.write_case("inf_vs_number", inputs=inputs, outputs=outputs),
                          says="got Infinity want 1e+300")
        outputs[3][1] = -np.inf
        self.assert_fails(self.onnx, self.write_case("inf_vs_minus_inf", inputs=inputs, outputs=outputs),
                          says="got Infinity want -Infinity")

    def test_float16_is_compared_by_value(self):
        onnx_file = os.path.join(self.dir, "half.onnx")
        graph = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT16)], "half",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [4])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.save(model, onnx_file)
        x = np.array([1.5, -0.0001, 65504.0, 3.14159], np.float32)
        self.assert_passes(onnx_file, self.write_case("half", inputs=[x], outputs=[x.astype(np.float16)]))
        wrong = x.astype(np.float16)
        wrong[3] = np.float16(3.25)
        out = self.assert_fails(onnx_file, self.write_case("half_wrong", inputs=[x], outputs=[wrong]),
                                says='out0 "y" float16[4]')
        self.assertIn("got 3.140625 want 3.25", out)  # values, not their bits

    def test_int32_scalar_must_be_exact(self):
        self.assert_fails(self.onnx, self.write_case("int32", outputs=self.perturbed(4, lambda y: np.asarray(y + 1, np.int32))),
                          says='out4 "y4" int32[]')

    def test_bool_must_be_exact(self):
        def flip(y):
            y[0, 1] = not y[0, 1]
            return y
        self.assert_fails(self.onnx, self.write_case("bool", outputs=self.perturbed(2, flip)),
                          says="exact equality")

    def test_shape_mismatch_fails(self):
        self.assert_fails(self.onnx, self.write_case("shape", outputs=self.perturbed(0, lambda y: y.reshape(3, 2))),
                          says="FAIL shape")

    def test_dtype_mismatch_fails(self):
        self.assert_fails(self.onnx, self.write_case("dtype", outputs=self.perturbed(0, lambda y: y.astype(np.float64))),
                          says="FAIL dtype")

    def test_missing_input_fails(self):
        manifest = self.write_case("missing_input", inputs=example_inputs()[:4],
                                   outputs=reference_outputs(*example_inputs()))
        self.assert_fails(self.onnx, manifest, says="the ONNX graph has 5 inputs")

    def test_wrong_input_dtype_fails(self):
        inputs = example_inputs()
        inputs[1] = inputs[1].astype(np.int32)
        manifest = self.write_case("input_dtype", inputs=inputs, outputs=reference_outputs(*example_inputs()))
        self.assert_fails(self.onnx, manifest, says='ONNX input 1 "b" is int64')

    def test_nan_matches_only_nan(self):
        inputs = example_inputs()
        inputs[0][0, 0] = np.nan
        outputs = reference_outputs(*inputs)
        self.assert_passes(self.onnx, self.write_case("nan", inputs=inputs, outputs=outputs))
        outputs[0][0, 0] = 1.0
        self.assert_fails(self.onnx, self.write_case("nan_vs_number", inputs=inputs, outputs=outputs),
                          says="got NaN want 1")

    def test_missing_output_count_fails(self):
        outputs = reference_outputs(*example_inputs())[:5]
        self.assert_fails(self.onnx, self.write_case("fewer_outputs", outputs=outputs),
                          says="the ONNX graph has 6 outputs")

    def test_batch_reports_every_case(self):
        bad = self.write_case("batch_bad", outputs=self.perturbed(0, lambda y: y * np.float32(1.5)))
        cases = [{"onnx": "tiny.onnx", "manifest": os.path.basename(self.write_case("batch_good"))},
                 {"onnx": "tiny.onnx", "manifest": os.path.basename(bad), "name": "bad one"},
                 {"onnx": "tiny.onnx", "manifest": os.path.basename(bad), "name": "forgiven", "rtol": 2.0}]
        path = os.path.join(self.dir, "cases.json")
        with open(path, "w") as f:
            json.dump(cases, f)
        out = self.assert_fails("--cases", path, says="2 passed, 1 failed")
        self.assertIn("FAIL bad one", out)

    def test_save_actual_round_trips_through_numpy(self):
        actual_dir = os.path.join(self.dir, "actual")
        self.assert_passes(self.onnx, self.write_case("save"), "--save-actual", actual_dir)
        for k, want in enumerate(reference_outputs(*example_inputs())):
            got = np.load(os.path.join(actual_dir, f"tiny.actual{k}.npy"))
            self.assertEqual(got.dtype, want.dtype)
            self.assertEqual(got.shape, want.shape)
            np.testing.assert_array_equal(got, want)

    def test_bad_usage_exits_2(self):
        code, out = self.run_compare(self.onnx)
        self.assertEqual(code, 2, out)
        self.assertIn("usage", out)


def main():
    global NODE, WORK
    parser = argparse.ArgumentParser()
    parser.add_argument("--node", default="node")
    parser.add_argument("--work-dir", default=None)
    options, rest = parser.parse_known_args()
    NODE = options.node
    if options.work_dir:
        os.makedirs(options.work_dir, exist_ok=True)
        WORK = options.work_dir
    unittest.main(argv=[sys.argv[0], "-v", *rest])


if __name__ == "__main__":
    main()
