#!/usr/bin/python3
"""--extra-outputs: module paths, TorchScript value names and ONNX value names become typed graph
outputs after the model's own; each one is checked in ONNX Runtime against the value PyTorch
computes there (forward hooks), and every refused spec against its one-line message.

Environment (set by ctest): ONNXPORT (the CLI), ONNXPORT_ORT_COMPARE (ort_compare.js),
ONNXPORT_TEST_TMP (scratch directory).
"""
import json
import os
import shutil
import sys
import subprocess
import unittest

import numpy as np
import onnx
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "support"))
from cli_test import TMP, path, run  # noqa: E402

ORT_COMPARE = os.environ["ONNXPORT_ORT_COMPARE"]


class Block(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = torch.nn.Conv2d(c, c, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(c)
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn(self.conv(x))) + x


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.blocks = torch.nn.Sequential(Block(8), Block(8))
        self.head = torch.nn.Linear(8, 5)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).mean((2, 3)))


class Scripted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 6)
        self.b = torch.nn.Linear(6, 3)

    def forward(self, x):
        hidden = torch.tanh(self.a(x))
        scaled = hidden * 2.0
        scaled = scaled - 1.0
        return self.b(scaled)


def write_manifest(name, model_file, inputs, outputs):
    files_in, files_out = [], []
    for k, t in enumerate(inputs):
        np.save(path(f"{name}.in{k}.npy"), t.numpy())
        files_in.append({"name": f"input{k}", "file": f"{name}.in{k}.npy"})
    for k, t in enumerate(outputs):
        np.save(path(f"{name}.out{k}.npy"), t.detach().numpy())
        files_out.append({"file": f"{name}.out{k}.npy"})
    with open(path(f"{name}.json"), "w") as fh:
        json.dump({"model": model_file, "inputs": files_in, "outputs": files_out}, fh)
    return path(f"{name}.json")


def assert_matches_in_ort(test, onnx_file, manifest):
    r = subprocess.run(["node", ORT_COMPARE, onnx_file, manifest], capture_output=True, text=True)
    test.assertEqual(r.returncode, 0, r.stdout + r.stderr)


class ExtraOutputsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        shutil.rmtree(TMP, ignore_errors=True)
        os.makedirs(TMP)
        torch.manual_seed(0)
        net = Net().eval()
        with torch.no_grad():
            for block in net.blocks:
                block.bn.running_mean.uniform_(-0.5, 0.5)
                block.bn.running_var.uniform_(0.5, 1.5)
        cls.x = torch.randn(2, 3, 6, 6)
        cls.seen = {}
        for name in ("blocks.0", "blocks.0.conv", "blocks.1.bn", "blocks"):
            net.get_submodule(name).register_forward_hook(
                lambda module, args, out, name=name: cls.seen.__setitem__(name, out.detach().clone()))
        with torch.no_grad():
            cls.y = net(cls.x)
        torch.jit.trace(net, cls.x).save(path("net.pt"))
        np.save(path("x.npy"), cls.x.numpy())

        scripted = Scripted().eval()
        cls.sx = torch.randn(2, 4)
        with torch.no_grad():
            cls.hidden = torch.tanh(scripted.a(cls.sx))
            cls.sy = scripted(cls.sx)
        torch.jit.script(scripted).save(path("scripted.pt"))
        np.save(path("sx.npy"), cls.sx.numpy())

    def export_net(self, out, *args, ok=True):
        return run("export", path("net.pt"), "-o", out, "--input", "x=" + path("x.npy"), *args, ok=ok)

    def assertRefused(self, r, out, *fragments):
        self.assertNotEqual(r.returncode, 0)
        lines = r.stderr.strip().splitlines()
        self.assertLessEqual(len(lines), 3, r.stderr)
        for fragment in fragments:
            self.assertIn(fragment, r.stderr)
        self.assertFalse(os.path.exists(out), "nothing may be written for a refused spec")

    def test_module_paths_become_typed_outputs_after_the_models_own(self):
        out = path("modules.onnx")
        self.export_net(out, "--extra-outputs", "blocks.0", "--extra-outputs", "blocks.0.conv",
                        "--extra-outputs", "blocks.1.bn")
        g = onnx.load(out).graph
        self.assertEqual([o.name for o in g.output], ["output_0", "blocks.0", "blocks.0.conv", "blocks.1.bn"])
        for o in g.output[1:]:
            self.assertEqual(o.type.tensor_type.elem_type, onnx.TensorProto.FLOAT)
            self.assertEqual([d.dim_value for d in o.type.tensor_type.shape.dim], [2, 8, 6, 6])
        # The conv whose output is asked for keeps its own output: no BatchNorm folded into it
        # changes what it returns. The other block's conv still absorbs its BatchNorm.
        ops = [n.op_type for n in g.node]
        self.assertEqual(ops.count("BatchNormalization"), 1, ops)
        manifest = write_manifest("modules", "net.pt", [self.x],
                                  [self.y, self.seen["blocks.0"], self.seen["blocks.0.conv"], self.seen["blocks.1.bn"]])
        assert_matches_in_ort(self, out, manifest)

    def test_an_onnx_value_name_keeps_its_name(self):
        plain = path("plain.onnx")
        self.export_net(plain)
        block_add = [n for n in onnx.load(plain).graph.node if n.op_type == "Add"][0].output[0]
        out = path("onnx_name.onnx")
        # As --verbose prints it, with the %.
        self.export_net(out, "--extra-outputs", "%" + block_add)
        self.assertEqual([o.name for o in onnx.load(out).graph.output], ["output_0", block_add])
        manifest = write_manifest("onnx_name", "net.pt", [self.x], [self.y, self.seen["blocks.0"]])
        assert_matches_in_ort(self, out, manifest)

    def test_a_scripted_models_variable_by_its_torchscript_name(self):
        out = path("scripted.onnx")
        run("export", path("scripted.pt"), "-o", out, "--input", "x=" + path("sx.npy"), "--mode", "script",
            "--extra-outputs", "hidden")
        self.assertEqual([o.name for o in onnx.load(out).graph.output], ["output_0", "hidden"])
        manifest = write_manifest("scripted", "scripted.pt", [self.sx], [self.sy, self.hidden])
        assert_matches_in_ort(self, out, manifest)
        # TorchScript names a reassigned variable anew: `scaled` is the first value, `scaled0` the second.
        out = path("scaled.onnx")
        run("export", path("scripted.pt"), "-o", out, "--input", "x=" + path("sx.npy"), "--mode", "script",
            "--extra-outputs", "scaled", "--extra-outputs", "scaled0")
        self.assertEqual([o.name for o in onnx.load(out).graph.output], ["output_0", "scaled", "scaled0"])
        manifest = write_manifest("scaled", "scripted.pt", [self.sx], [self.sy, self.hidden * 2, self.hidden * 2 - 1])
        assert_matches_in_ort(self, out, manifest)
        # Each inlined Linear/Conv forward has its own `input`: the bare name is ambiguous.
        r = self.export_net(path("ambiguous.onnx"), "--extra-outputs", "input", ok=False)
        self.assertRefused(r, path("ambiguous.onnx"), "--extra-outputs 'input'", "holds several TorchScript values",
                           "'input.1'")

    def test_dynamic_axes_reach_the_extra_output(self):
        out = path("dynamic.onnx")
        self.export_net(out, "--dynamic-axes", "x:0=batch", "--extra-outputs", "blocks.0")
        extra = onnx.load(out).graph.output[1]
        self.assertEqual(extra.type.tensor_type.shape.dim[0].dim_param, "batch")
        manifest = write_manifest("dynamic", "net.pt", [self.x], [self.y, self.seen["blocks.0"]])
        assert_matches_in_ort(self, out, manifest)

    def test_report_lists_each_extra_output(self):
        out, report = path("reported.onnx"), path("reported.json")
        self.export_net(out, "--extra-outputs", "blocks.0", "--report", report)
        with open(report) as fh:
            extra = json.load(fh)["extra_outputs"]
        self.assertEqual(extra, [{"spec": "blocks.0", "kind": "module", "output": "blocks.0",
                                  "type": "float32[2,8,6,6]"}])

    def test_refused_specs_say_why_in_one_line(self):
        cases = [
            (["blocks.3"], ["--extra-outputs 'blocks.3'", "did you mean", "'blocks.0'", "'blocks.1'"]),
            (["nothing_like_it_anywhere"], ["--extra-outputs 'nothing_like_it_anywhere'", "no module path"]),
            (["x"], ["'x' is a graph input"]),
            (["stem.weight"], ["'stem.weight' is a parameter"]),
            (["head"], ["--extra-outputs 'head'", "already graph output 'output_0'"]),
            # `blocks` returns what its last block returns.
            (["blocks.1", "blocks"], ["--extra-outputs 'blocks'", "the same value as --extra-outputs 'blocks.1'"]),
        ]
        for specs, fragments in cases:
            with self.subTest(specs=specs):
                out = path("refused.onnx")
                args = [a for spec in specs for a in ("--extra-outputs", spec)]
                self.assertRefused(self.export_net(out, *args, ok=False), out, *fragments)

    def test_a_refused_spec_leaves_an_existing_output_untouched(self):
        out = path("kept.onnx")
        with open(out, "wb") as fh:
            fh.write(b"previous")
        r = self.export_net(out, "--extra-outputs", "blocks.9", ok=False)
        self.assertNotEqual(r.returncode, 0)
        with open(out, "rb") as fh:
            self.assertEqual(fh.read(), b"previous")


if __name__ == "__main__":
    unittest.main()
