#!/usr/bin/python3
"""`onnxport verify --per-node` and the first diverging node: every ONNX value that stands for a
TorchScript value is compared with libtorch's; a tampered file and a deliberately wrong op pack
(tests/eval/packs/wrong_linear_pack.cpp: a transposed kernel) are caught, naming the node, the
torch op, the pack and the module path; the JSON report carries the per-node table.

Environment (set by ctest): ONNXPORT (the CLI), ONNXPORT_TEST_TMP (scratch directory),
ONNXPORT_WRONG_PACK_DIR (the directory holding the wrong pack).
"""
import json
import os
import shutil
import sys
import unittest

import numpy as np
import onnx
import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "support"))
from cli_test import TMP, path, run  # noqa: E402

WRONG_PACK_DIR = os.environ["ONNXPORT_WRONG_PACK_DIR"]


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        h = torch.nn.functional.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        return torch.softmax(self.fc(h.flatten(1)), dim=1)


class Mlp(torch.nn.Module):
    """Only blocks.2's weight is square: the wrong pack changes that layer alone."""

    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16),
                                          torch.nn.ReLU(), torch.nn.Linear(16, 4))

    def forward(self, x):
        return self.blocks(x)


def report(name):
    with open(path(name)) as f:
        return json.load(f)


class PerNodeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        shutil.rmtree(TMP, ignore_errors=True)
        os.makedirs(TMP)
        torch.manual_seed(0)
        net = ConvNet().eval()
        with torch.no_grad():
            net.bn.running_mean.uniform_(-0.5, 0.5)
            net.bn.running_var.uniform_(0.5, 1.5)
        x = torch.randn(2, 3, 8, 8)
        np.save(path("x.npy"), x.numpy())
        torch.jit.trace(net, x).save(path("net.pt"))
        cls.x = ["--input", "x=" + path("x.npy")]
        for opset in ("11", "17"):
            run("export", path("net.pt"), "-o", path(f"net{opset}.onnx"), "--opset", opset, *cls.x)
        torch.jit.trace(Mlp().eval(), torch.randn(3, 8)).save(path("mlp.pt"))

    def test_every_node_agrees_on_an_exported_model(self):
        for opset in ("11", "17"):
            with self.subTest(opset=opset):
                name = f"agree{opset}.json"
                r = run("verify", path("net.pt"), path(f"net{opset}.onnx"), *self.x, "--per-node",
                        "--samples", "1", "--report", path(name))
                self.assertIn("verify: ok", r.stdout)
                self.assertIn("intermediate values compared agree", r.stdout)
                table = report(name)
                self.assertTrue(table["ok"])
                self.assertIsNone(table["first_diverging"])
                nodes = table["nodes"]
                self.assertGreaterEqual(len(nodes), 5, nodes)
                self.assertTrue(all(n["ok"] for n in nodes), nodes)
                ops = {n["op_type"] for n in nodes}
                self.assertTrue({"Conv", "Relu", "MaxPool", "Gemm", "Softmax"} <= ops, ops)
                conv = next(n for n in nodes if n["op_type"] == "Conv")
                self.assertEqual(conv["module_path"], "conv")
                self.assertEqual(conv["pack"], "nn")
                self.assertTrue(conv["torch_op"].startswith("aten::"), conv)
                self.assertLessEqual(conv["max_abs_error"], 1e-4)

    def test_a_tampered_weight_is_found_at_its_layer(self):
        model = onnx.load(path("net17.onnx"))
        weight = next(i for i in model.graph.initializer if "fc" in i.name)
        values = numpy_helper.to_array(weight).copy()
        values.flat[3] += 0.5
        weight.CopyFrom(numpy_helper.from_array(values, weight.name))
        onnx.save(model, path("tampered.onnx"))
        r = run("verify", path("net.pt"), path("tampered.onnx"), *self.x, "--report", path("tampered.json"),
                ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("first diverging node: Gemm node", r.stderr)
        self.assertIn("in module 'fc'", r.stderr)
        table = report("tampered.json")
        first = table["nodes"][table["first_diverging"]]
        self.assertEqual((first["op_type"], first["module_path"]), ("Gemm", "fc"))
        self.assertGreater(first["max_abs_error"], 1e-3)
        self.assertTrue(all(n["ok"] for n in table["nodes"][:table["first_diverging"]]))
        self.assertGreaterEqual(table["first_diverging"], 3, "the conv, bn/relu and pool nodes agree before it")

    def test_a_wrong_mapping_is_caught_naming_its_node_pack_and_module(self):
        r = run("export", path("mlp.pt"), "-o", path("mlp_right.onnx"), "--input", "x:3x8", "--verify")
        self.assertIn("verify: ok", r.stdout)
        r = run("export", path("mlp.pt"), "-o", path("mlp_wrong.onnx"), "--input", "x:3x8", "--verify",
                "--plugin-dir", WRONG_PACK_DIR, ok=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        for fragment in ("MISMATCH: output", "first diverging node: ", "from aten::linear",
                         "by op pack 'wrong_linear'", "in module 'blocks.2'"):
            self.assertIn(fragment, r.stderr)
        # verify alone finds it too when told where the packs are; the JSON table has the row
        r = run("verify", path("mlp.pt"), path("mlp_wrong.onnx"), "--plugin-dir", WRONG_PACK_DIR, "--per-node",
                "--report", path("wrong.json"), ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("DIVERGES", r.stdout)
        table = report("wrong.json")
        first = table["nodes"][table["first_diverging"]]
        self.assertEqual((first["torch_op"], first["pack"], first["module_path"]),
                         ("aten::linear", "wrong_linear", "blocks.2"))
        self.assertTrue(all(n["ok"] for n in table["nodes"][:table["first_diverging"]]))
        self.assertTrue(any(n["module_path"] == "blocks.0" for n in table["nodes"][:table["first_diverging"]]))

    def test_without_the_pack_the_layer_is_still_named_but_no_pack(self):
        # The built-in packs convert blocks.2 to other ONNX ops than the file has, so its values are
        # not compared: the first diverging value is blocks.3's, read from blocks.2's uncompared nodes.
        r = run("verify", path("mlp.pt"), path("mlp_wrong.onnx"), ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("in module 'blocks.3'", r.stderr)
        self.assertRegex(r.stderr, r"it reads values not compared, from MatMul '[^']*' in module 'blocks.2', "
                                   r"Add '[^']*' in module 'blocks.2'")

    def test_a_report_that_is_not_json_is_refused_before_any_work(self):
        r = run("verify", path("net.pt"), path("net17.onnx"), "--report", path("r.md"), ok=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("r.md", r.stderr)
        self.assertFalse(os.path.exists(path("r.md")))


if __name__ == "__main__":
    unittest.main()
