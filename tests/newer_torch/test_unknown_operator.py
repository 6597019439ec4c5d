#!/usr/bin/python3
"""A TorchScript file that calls an operator neither libtorch nor onnxport knows fails in one line:
the operator, the file and what to do (--load-op-library, an op pack that maps it), never the
TorchScript compiler's multi-line report. Three such files are made here: one calling a vendor's op
(registered in this Python process only, as a vendor's library would), one an aten operator no
PyTorch release has, one an operator only PyTorch 2.14 declares (the saved code edited, as a file of
a newer release would read), whose line names that release.

Environment (set by ctest): ONNXPORT (the CLI), ONNXPORT_TEST_TMP (scratch directory).
"""
import os
import sys
import unittest
import zipfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "support"))
from cli_test import path, run  # noqa: E402

VENDOR_LIBRARY = torch.library.Library("onnxport_test_vendor", "DEF")
VENDOR_LIBRARY.define("fancy(Tensor x) -> Tensor")
VENDOR_LIBRARY.impl("fancy", lambda x: x * 2, "CPU")


class CallsVendorOp(torch.nn.Module):
    def forward(self, x):
        return torch.ops.onnxport_test_vendor.fancy(x)


class CallsRelu(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


def rewrite_code(pt_file, old, new):
    """The saved file with `old` replaced by `new` in its TorchScript code."""
    edited = pt_file + ".edited"
    with zipfile.ZipFile(pt_file) as source, zipfile.ZipFile(edited, "w", zipfile.ZIP_STORED) as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename.endswith(".py"):
                data = data.replace(old.encode(), new.encode())
            target.writestr(item, data)
    os.replace(edited, pt_file)


class UnknownOperator(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(path(), exist_ok=True)

    def export_fails(self, model):
        r = run("export", model, "-o", path("out.onnx"), "--input", "x:2x3:float32", ok=False)
        self.assertNotEqual(r.returncode, 0)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, f"expected one line, got:\n{r.stderr}")
        self.assertNotIn("Could not find any similar ops", r.stderr)
        self.assertFalse(os.path.exists(path("out.onnx")))
        return lines[0]

    def test_vendor_op(self):
        model = path("vendor_op.pt")
        torch.jit.script(CallsVendorOp()).save(model)
        line = self.export_fails(model)
        for part in ("onnxport_test_vendor::fancy", model, "neither libtorch", "--load-op-library",
                     "onnxport_test_vendor ops", "op pack that maps onnxport_test_vendor::fancy"):
            self.assertIn(part, line)

    def test_aten_op_of_no_release(self):
        model = path("unknown_aten_op.pt")
        torch.jit.script(CallsRelu()).save(model)
        rewrite_code(model, "torch.relu(", "torch.relu_of_release_99(")
        line = self.export_fails(model)
        for part in ("aten::relu_of_release_99", model, "neither libtorch", "save the model with PyTorch ",
                     "--load-op-library", "op pack that maps aten::relu_of_release_99"):
            self.assertIn(part, line)
        self.assertNotIn("an operator of PyTorch", line)  # no release declares it: none is named

    def test_aten_op_of_a_newer_release(self):
        # linalg_matrix_sqrth: declared by PyTorch 2.14, by neither 1.13 nor 2.6 (both builds lack it)
        model = path("newer_aten_op.pt")
        torch.jit.script(CallsRelu()).save(model)
        rewrite_code(model, "torch.relu(", "torch.linalg_matrix_sqrth(")
        line = self.export_fails(model)
        for part in ("it calls aten::linalg_matrix_sqrth (an operator of PyTorch 2.14; 2.6 has none of that name)",
                     model, "neither libtorch", "--load-op-library"):
            self.assertIn(part, line)


if __name__ == "__main__":
    unittest.main()
