#!/usr/bin/python3
"""The evaluator outside ONNX's own domain: org.pytorch.aten::ATen fallback nodes run the named
aten op (compared with PyTorch by `run` and `verify`); a custom-domain op no op pack evaluates
is refused in one line naming the op and domain, before anything is computed or written.
(Op packs' evaluators are exercised end to end by the vendor sample.)

Environment (set by ctest): ONNXPORT, ONNXPORT_TEST_TMP, ONNXPORT_TEST_PACKS (the third-party
test pack: com.example::LogGamma, without an evaluator).
"""
import os
import shutil
import sys
import unittest

import numpy as np
import onnx
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "support"))
from cli_test import TMP, path, run  # noqa: E402

PACKS = os.environ["ONNXPORT_TEST_PACKS"]


class Mixed(torch.nn.Module):
    """Conv with and without bias, a tensor list (cat), int and float arguments."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.plain = torch.nn.Conv2d(3, 4, 1, bias=False)

    def forward(self, x):
        y = torch.cat([torch.relu(self.conv(x)), self.plain(x)], dim=1)
        return torch.nn.functional.leaky_relu(y, 0.2).sum(dim=(2, 3)), y.transpose(1, 3)


class DomainsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        shutil.rmtree(TMP, ignore_errors=True)
        os.makedirs(TMP)
        torch.manual_seed(0)
        net = Mixed().eval()
        x = torch.randn(2, 3, 6, 6)
        with torch.no_grad():
            cls.expected = [t.numpy() for t in net(x)]
        np.save(path("x.npy"), x.numpy())
        torch.jit.trace(net, x).save(path("mixed.pt"))

    def test_aten_fallback_nodes_compute_the_named_aten_op(self):
        run("export", path("mixed.pt"), "-o", path("aten.onnx"), "--input", "x=" + path("x.npy"),
            "--operator-export-type", "onnx_aten")
        model = onnx.load(path("aten.onnx"))
        operators = {a.s.decode() for n in model.graph.node if n.op_type == "ATen" for a in n.attribute
                     if a.name == "operator"}
        self.assertTrue({"_convolution", "relu", "cat", "leaky_relu", "sum", "transpose"} <= operators, operators)
        self.assertTrue(all(n.domain == "org.pytorch.aten" for n in model.graph.node if n.op_type == "ATen"))
        out = path("out")
        os.makedirs(out, exist_ok=True)
        run("run", path("aten.onnx"), "--input", "x=" + path("x.npy"), "-o", out)
        for k, expected in enumerate(self.expected):
            np.testing.assert_allclose(np.load(os.path.join(out, f"output_{k}.npy")), expected, rtol=1e-5, atol=1e-6)
        with open(path("aten.json"), "w") as f:  # the export's options, for the per-node comparison
            f.write('{"operator_export_type": "onnx_aten"}')
        r = run("verify", path("mixed.pt"), path("aten.onnx"), "--input", "x=" + path("x.npy"),
                "--config", path("aten.json"), "--per-node")
        self.assertIn("verify: ok: 3 input sets, 2 outputs each", r.stdout)
        self.assertIn("ok       ATen", r.stdout)

    def test_a_custom_op_without_an_evaluator_is_named_in_one_line(self):
        class LogGamma(torch.nn.Module):
            def forward(self, x):
                return torch.lgamma(x) + 1

        torch.jit.trace(LogGamma(), torch.rand(3) + 1).save(path("lgamma.pt"))
        run("export", path("lgamma.pt"), "-o", path("lgamma.onnx"), "--input", "x:3", "--plugin-dir", PACKS)
        for command in (["run", path("lgamma.onnx"), "-o", path("out_lgamma")],
                        ["verify", path("lgamma.pt"), path("lgamma.onnx"), "--plugin-dir", PACKS]):
            with self.subTest(command=command[0]):
                os.makedirs(path("out_lgamma"), exist_ok=True)
                r = run(*command, ok=False)
                self.assertNotEqual(r.returncode, 0)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertIn("no kernel for LogGamma (com.example) at opset 3", r.stderr)
                self.assertIn("--plugin-dir", r.stderr)
                self.assertEqual(os.listdir(path("out_lgamma")), [])


if __name__ == "__main__":
    unittest.main()
