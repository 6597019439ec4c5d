#!/usr/bin/python3
"""Symbolic functions in Python (issue 28): torch.onnx symbolics run unchanged as onnxport op packs.

  CliPythonPackTest: .py files in --plugin-dir, exported by the command line from saved .pt files
                     (an aten override into com.microsoft, a TORCH_LIBRARY op with two outputs,
                     a .py pack beside a C++ pack, packs that raise or fail to import);
  PackageSymbolicsTest: symbolics registered in the calling process with
                     torch.onnx.register_custom_op_symbolic, through onnxport.export, against
                     torch.onnx.export on the same module (dispatch per opset, custom_opsets,
                     unregistering, SymbolicContext, calls of torch.onnx's built-in symbolics).

Every exported model that ONNX Runtime can run is compared with PyTorch there (onnxruntime-node
runs com.microsoft's contrib ops). Environment: that of test_package.py, plus ONNXPORT_TEST_OPS
(the test op library, tests/python/test_ops) and ONNXPORT_UNIT_GOOD_PACK (a C++ op pack).
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_package import CLI, cli, ort_matches, path, save_manifest  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import torch  # noqa: E402
from torch.onnx import register_custom_op_symbolic, unregister_custom_op_symbolic  # noqa: E402

import onnxport  # noqa: E402

# torch.onnx 1.13's export ends with ONNX's checker; 2.x's TorchScript path runs none.
TORCH_ONNX_CHECKS_ITS_FILE = int(torch.__version__.split(".")[0]) < 2

TEST_OPS = os.environ["ONNXPORT_TEST_OPS"]
UNIT_GOOD_PACK = os.environ["ONNXPORT_UNIT_GOOD_PACK"]

# A pack of the kind ONNX Runtime ships for its contrib ops: aten ops exported as com.microsoft ones.
CONTRIB_PACK = """\
from torch.onnx import register_custom_op_symbolic, symbolic_helper


@symbolic_helper.parse_args("v", "s")
def gelu(g, self, approximate):
    return g.op("com.microsoft::Gelu", self)


def triu(g, self, diagonal, out=None):
    return g.op("com.microsoft::Trilu", self, diagonal, upper_i=1)


register_custom_op_symbolic("::gelu", gelu, 9)
register_custom_op_symbolic("::triu", triu, 1)  # shadowed from opset 14 by torch.onnx's own triu
"""

# Symbolics of the kind ONNX Runtime ships for its contrib ops, registered at opset 1 as such files
# do: torch.onnx's dispatch then uses each only below the first opset of its own built-in.
CONTRIB_OPSET1_PACK = """\
import torch
from torch.onnx import register_custom_op_symbolic, symbolic_helper, symbolic_opset9


def grid_sampler(g, input, grid, mode, padding_mode, align_corners):
    mode = ["bilinear", "nearest", "bicubic"][symbolic_helper._maybe_get_const(mode, "i")]
    padding = ["zeros", "border", "reflection"][symbolic_helper._maybe_get_const(padding_mode, "i")]
    align = int(symbolic_helper._maybe_get_const(align_corners, "b"))
    return g.op("com.microsoft::GridSample", input, grid, mode_s=mode, padding_mode_s=padding, align_corners_i=align)


def linalg_inv(g, self):
    return g.op("com.microsoft::Inverse", self).setType(self.type())


def gelu(g, self, approximate="none"):
    if symbolic_helper._maybe_get_const(approximate, "s") == "none":
        return g.op("com.microsoft::Gelu", self).setType(self.type())
    return symbolic_opset9.gelu(g, self, approximate)


def triu(g, self, diagonal, out=None):
    return g.op("com.microsoft::Trilu", self, diagonal, upper_i=1).setType(self.type())


def tril(g, self, diagonal, out=None):
    return g.op("com.microsoft::Trilu", self, diagonal, upper_i=0).setType(self.type())


for function in (grid_sampler, linalg_inv, gelu, triu, tril):
    register_custom_op_symbolic("::" + function.__name__, function, 1)
"""

# The TORCH_LIBRARY op of tests/python/test_ops: two outputs, an int read with parse_args, a size
# read from the input's type.
TEST_OPS_PACK = """\
import torch
from torch.onnx import register_custom_op_symbolic, symbolic_helper


@symbolic_helper.parse_args("v", "i")
def gelu_halves(g, x, dim):
    size = symbolic_helper._get_tensor_sizes(x)[dim]
    y = g.op("com.microsoft::Gelu", x)
    split = g.op("Constant", value_t=torch.tensor([size // 2, size - size // 2]))
    return g.op("Split", y, split, axis_i=dim, outputs=2)


register_custom_op_symbolic("onnxport_test::gelu_halves", gelu_halves, 13)
"""

RAISING_PACK = """\
from torch.onnx import register_custom_op_symbolic


def gelu(g, self, approximate):
    raise ValueError("this pack cannot export gelu")


register_custom_op_symbolic("::gelu", gelu, 9)
"""

BROKEN_PACK = """\
import torch

import a_module_nobody_has
"""


# torch.onnx's SymbolicContext (a symbolic's first parameter, ctx) is gone from PyTorch 2: symbolics
# taking it cannot be written there.
NEEDS_SYMBOLIC_CONTEXT = unittest.skipUnless(hasattr(torch.onnx, "SymbolicContext"),
                                             "PyTorch 2 has no torch.onnx.SymbolicContext")


# A quantization toolkit's symbolics (MQBench's deploy flow): fake quantization exported as ops of the
# default domain that ONNX does not define, which the toolkit's own passes rewrite for each backend.
FAKE_QUANT_PACK = """\
import torch
from torch.onnx import register_custom_op_symbolic, symbolic_helper


@symbolic_helper.parse_args("v", "f", "i", "i", "i")
def fake_quantize(g, x, scale, zero_point, quant_min, quant_max):
    return g.op("::FixedPerTensorAffine", x, g.op("Constant", value_t=torch.tensor(scale)),
                g.op("Constant", value_t=torch.tensor(zero_point)), quant_min_i=quant_min, quant_max_i=quant_max)


# at 13, where torch.onnx's own symbolic for it is registered: the custom one takes its place
register_custom_op_symbolic("::fake_quantize_per_tensor_affine", fake_quantize, 13)
"""


class FakeQuantModel(torch.nn.Module):
    def forward(self, x):
        y = torch.fake_quantize_per_tensor_affine(x, 0.05, 0, -128, 127)
        return torch.fake_quantize_per_tensor_affine(torch.relu(y) * 2, 0.1, 3, 0, 255)


def undefined_op_nodes(onnx_file):
    """(domain, op, attributes) of the FixedPerTensorAffine nodes, in order."""
    return [(n.domain, n.op_type, sorted((a.name, a.i) for a in n.attribute))
            for n in onnx.load(onnx_file).graph.node if n.op_type == "FixedPerTensorAffine"]


class GeluModel(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.gelu(x) * 2


class ContribModel(torch.nn.Module):
    """grid_sample, inverse, triu, tril and gelu: the ops of the contrib pack."""

    def forward(self, image, grid, square):
        sampled = torch.nn.functional.grid_sample(image, grid, mode="bilinear", padding_mode="border",
                                                  align_corners=False)
        inverse = torch.inverse(square)
        return sampled, inverse, torch.triu(square, 1) + torch.tril(square, -1), torch.nn.functional.gelu(square)


class HalvesModel(torch.nn.Module):
    def forward(self, x):
        a, b = torch.ops.onnxport_test.gelu_halves(x, 1)
        return a + 1, b * 2


def write_pack(directory, name, text):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "w") as fh:
        fh.write(textwrap.dedent(text))
    return os.path.join(directory, name)


def nodes(onnx_file):
    return [(n.domain, n.op_type) for n in onnx.load(onnx_file).graph.node]


def imports(onnx_file):
    return {o.domain: o.version for o in onnx.load(onnx_file).opset_import}


class CliPythonPackTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        shutil.rmtree(path(), ignore_errors=True)
        os.makedirs(path())
        torch.ops.load_library(TEST_OPS)
        torch.manual_seed(0)
        cls.x = torch.randn(2, 5)
        for name, model in (("gelu", GeluModel()), ("halves", HalvesModel())):
            traced = torch.jit.trace(model, (cls.x,))
            traced.save(path(f"{name}.pt"))
            outputs = traced(cls.x)
            save_manifest(name, [cls.x], outputs if isinstance(outputs, tuple) else [outputs])
        np.save(path("x.npy"), cls.x.numpy())
        cls.packs = path("packs")
        write_pack(cls.packs, "contrib.py", CONTRIB_PACK)
        write_pack(cls.packs, "test_ops.py", TEST_OPS_PACK)

    def export(self, model, out, *args, packs=None):
        return cli("export", path(f"{model}.pt"), "-o", out, "--input", "x=" + path("x.npy"),
                   "--plugin-dir", packs or self.packs, "--load-op-library", TEST_OPS, *args)

    def test_an_aten_override_exports_the_contrib_op_and_matches_pytorch(self):
        for opset in (11, 13, 17):
            out = path(f"gelu_{opset}.onnx")
            r = self.export("gelu", out, "--opset", str(opset), "--custom-opset", "com.microsoft=1")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(("com.microsoft", "Gelu"), nodes(out))
            self.assertNotIn(("", "Erf"), nodes(out))
            self.assertEqual(imports(out).get("com.microsoft"), 1)
            ok, log = ort_matches(out, path("gelu.json"))
            self.assertTrue(ok, log)

    def test_a_torch_library_op_with_two_outputs_exports_through_its_python_symbolic(self):
        out = path("halves.onnx")
        r = self.export("halves", out, "--opset", "13")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([op for op in nodes(out) if op[1] in ("Gelu", "Split")],
                         [("com.microsoft", "Gelu"), ("", "Split")])
        self.assertEqual(imports(out).get("com.microsoft"), 1)  # torch.onnx's default for a domain
        ok, log = ort_matches(out, path("halves.json"))
        self.assertTrue(ok, log)
        # below the opset it was registered at, torch.onnx has no symbolic for it, and nor has onnxport
        r = self.export("halves", path("halves_11.onnx"), "--opset", "11")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("onnxport_test::gelu_halves", r.stderr)
        self.assertFalse(os.path.exists(path("halves_11.onnx")))

    def test_a_contrib_pack_registered_at_opset_1_dispatches_as_torch_onnx_and_matches_pytorch(self):
        torch.manual_seed(2)
        inputs = (torch.randn(1, 2, 5, 6), torch.rand(1, 4, 3, 2) * 2 - 1, torch.randn(4, 4) + 4 * torch.eye(4))
        model = torch.jit.trace(ContribModel(), inputs)
        model.save(path("contrib.pt"))
        save_manifest("contrib", inputs, [t.contiguous() for t in model(*inputs)])  # inverse is column-major
        for k, t in enumerate(inputs):
            np.save(path(f"contrib.in{k}.npy"), t.numpy())
        pack_dir = path("contrib_opset1")
        pack = write_pack(pack_dir, "ort_contrib.py", CONTRIB_OPSET1_PACK)
        # torch.onnx with the same registrations in this process: which ops become contrib ops
        names = ["::grid_sampler", "::linalg_inv", "::gelu", "::triu", "::tril"]
        exec(compile(CONTRIB_OPSET1_PACK, pack, "exec"), {})
        expected = {}
        try:
            for opset in (11, 13, 17):
                theirs = path(f"contrib_{opset}.torch.onnx")
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    torch.onnx.export(model, inputs, theirs, opset_version=opset, custom_opsets={"com.microsoft": 1})
                expected[opset] = sorted(op for domain, op in nodes(theirs) if domain == "com.microsoft")
        finally:
            for name in names:
                unregister_custom_op_symbolic(name, 1)
        # opset 17: torch.onnx's own gelu (9), triu/tril (14) and grid_sampler (16) shadow the pack
        self.assertEqual(expected[17], ["Inverse"])
        self.assertEqual(expected[13], ["GridSample", "Inverse", "Trilu", "Trilu"])
        for opset in (11, 13, 17):
            out = path(f"contrib_{opset}.onnx")
            r = cli("export", path("contrib.pt"), "-o", out, "--plugin-dir", pack_dir, "--opset", str(opset),
                    "--custom-opset", "com.microsoft=1",
                    *[a for k in range(3) for a in ("--input", f"{'image grid square'.split()[k]}=" + path(f"contrib.in{k}.npy"))])
            self.assertEqual(r.returncode, 0, r.stderr)
            mine = sorted(op for domain, op in nodes(out) if domain == "com.microsoft")
            self.assertEqual(mine, expected[opset], opset)
            ok, log = ort_matches(out, path("contrib.json"))
            self.assertTrue(ok, f"opset {opset}: {log}")

    def test_ops_and_plugins_list_python_packs_and_which_mapping_wins(self):
        r = cli("plugins", "--plugin-dir", self.packs)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"python:contrib python\s+loaded\s+2 ops\s+.*contrib\.py")
        r = cli("ops", "--plugin-dir", self.packs, "--opset", "17", "--json")
        rows = [m for m in __import__("json").loads(r.stdout) if m["op"] in ("aten::gelu", "aten::triu")]
        used = {(m["op"], m["pack"]) for m in rows if m.get("used", True)}
        # torch.onnx's dispatch: gelu registered at 9 replaces the built-in from 9 on; triu at 1 is
        # shadowed by the built-in registered at 14
        self.assertIn(("aten::gelu", "python:contrib"), used)
        self.assertNotIn(("aten::gelu", "elementwise"), used)
        self.assertNotIn(("aten::triu", "python:contrib"), used)
        r = cli("ops", "--plugin-dir", self.packs, "--opset", "11", "--json")
        used = {(m["op"], m["pack"]) for m in __import__("json").loads(r.stdout) if m.get("used", True)}
        self.assertIn(("aten::triu", "python:contrib"), used)  # no built-in below 14: the custom one

    def test_a_python_pack_beside_a_cpp_pack_in_one_directory(self):
        mixed = path("mixed")
        write_pack(mixed, "contrib.py", CONTRIB_PACK)
        shutil.copy(UNIT_GOOD_PACK, mixed)
        r = cli("plugins", "--plugin-dir", mixed)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"unit_good .*loaded")
        self.assertRegex(r.stdout, r"python:contrib python\s+loaded")
        out = path("gelu_mixed.onnx")
        r = self.export("gelu", out, packs=mixed)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(("com.microsoft", "Gelu"), nodes(out))

    def test_an_op_onnx_does_not_define_is_written_with_a_warning_and_listed(self):
        packs = path("fake_quant_packs")
        write_pack(packs, "fake_quant.py", FAKE_QUANT_PACK)
        torch.jit.trace(FakeQuantModel(), (self.x,)).save(path("fake_quant.pt"))
        out, report = path("fake_quant.onnx"), path("fake_quant.json")
        r = cli("export", path("fake_quant.pt"), "-o", out, "--input", "x=" + path("x.npy"), "--plugin-dir", packs,
                "--opset", "13", "--report", report)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(undefined_op_nodes(out), [("", "FixedPerTensorAffine", [("quant_max", 127), ("quant_min", -128)]),
                                                   ("", "FixedPerTensorAffine", [("quant_max", 255), ("quant_min", 0)])])
        self.assertIn("checker ok", r.stdout)
        warning = [line for line in r.stderr.splitlines() if "ONNX defines no operator" in line]
        self.assertEqual(len(warning), 1, r.stderr)
        for words in ("ONNX defines no operator 'FixedPerTensorAffine'", "2 nodes",
                      "aten::fake_quantize_per_tensor_affine", "fake_quant.py"):
            self.assertIn(words, warning[0])
        with open(report) as fh:
            self.assertEqual(json.load(fh)["unchecked_nodes"], {"FixedPerTensorAffine": 2})
        checked = cli("check", out)
        self.assertEqual(checked.returncode, 0, checked.stderr)
        self.assertIn("not checked, ops ONNX does not define: FixedPerTensorAffine x2", checked.stdout)
        # an op ONNX defines from a later opset stays an error naming that opset
        late = path("late_packs")
        write_pack(late, "late.py", FAKE_QUANT_PACK.replace("::FixedPerTensorAffine", "::LayerNormalization"))
        r = cli("export", path("fake_quant.pt"), "-o", path("late.onnx"), "--input", "x=" + path("x.npy"),
                "--plugin-dir", late, "--opset", "13")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("ONNX has no operator 'LayerNormalization' at opset 13", r.stderr)
        self.assertIn("--opset 17", r.stderr)
        self.assertFalse(os.path.exists(path("late.onnx")))

    def test_two_python_packs_mapping_one_op_is_an_error_naming_both(self):
        twice = path("twice")
        write_pack(twice, "a_contrib.py", CONTRIB_PACK)
        write_pack(twice, "b_contrib.py", CONTRIB_PACK)
        r = cli("plugins", "--plugin-dir", twice)
        self.assertRegex(r.stdout + r.stderr, r"a_contrib\.py.*b_contrib\.py.*both register a symbolic for aten::gelu")

    def test_a_symbolic_that_raises_names_the_file_line_and_op_and_writes_nothing(self):
        raising = path("raising")
        pack = write_pack(raising, "raises.py", RAISING_PACK)
        out = path("raises.onnx")
        r = self.export("gelu", out, packs=raising)
        self.assertNotEqual(r.returncode, 0)
        line = [i for i, text in enumerate(RAISING_PACK.splitlines(), 1) if "raise ValueError" in text][0]
        self.assertIn(f"{pack}:{line}: ValueError: this pack cannot export gelu", r.stderr)
        self.assertIn("aten::gelu", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertFalse(os.path.exists(out))

    def test_a_pack_that_fails_to_import_is_reported_with_file_and_error(self):
        broken = path("broken")
        pack = write_pack(broken, "broken.py", BROKEN_PACK)
        r = cli("plugins", "--plugin-dir", broken)
        self.assertIn(f"{pack}: importing the Python op pack failed: {pack}:3: ModuleNotFoundError: "
                      "No module named 'a_module_nobody_has'", r.stdout + r.stderr)
        out = path("broken.onnx")
        r = self.export("gelu", out, packs=broken)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("broken.py", r.stderr)
        self.assertFalse(os.path.exists(out))


    def test_without_torch_a_python_pack_is_not_loadable_and_the_rest_works(self):
        fake = path("no_torch")
        write_pack(os.path.join(fake, "torch"), "__init__.py", 'raise ImportError("no torch in this Python")')
        env = dict(os.environ, PYTHONPATH=fake, ONNXPORT_PLUGIN_PATH=self.packs)
        r = subprocess.run([CLI, "plugins"], capture_output=True, text=True, env=env)
        self.assertRegex(r.stdout, r"python:contrib python\s+failed")
        self.assertIn("Python op packs need torch (Debian's python3-torch) importable by libpython", r.stdout)
        self.assertIn("ImportError: no torch in this Python", r.stdout)
        self.assertRegex(r.stdout, r"elementwise .*loaded")
        out = path("gelu_no_torch.onnx")
        r = subprocess.run([CLI, "export", path("gelu.pt"), "-o", out, "--input", "x=" + path("x.npy")],
                           capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("warning: op pack skipped", r.stderr)
        self.assertNotIn(("com.microsoft", "Gelu"), nodes(out))  # the built-in mapping
        ok, log = ort_matches(out, path("gelu.json"))
        self.assertTrue(ok, log)


class PackageSymbolicsTest(unittest.TestCase):
    """In the calling process, as torch.onnx.export sees the registrations."""

    @classmethod
    def setUpClass(cls):
        os.makedirs(path(), exist_ok=True)
        torch.ops.load_library(TEST_OPS)
        torch.manual_seed(1)
        cls.x = torch.randn(3, 6)

    def both(self, model, name, opset, **kwargs):
        """(onnxport's file, torch.onnx's file) of one module."""
        mine, theirs = path(f"{name}.onnxport.onnx"), path(f"{name}.torch.onnx")
        onnxport.export(model, (self.x,), mine, opset_version=opset, **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, (self.x,), theirs, opset_version=opset, **kwargs)
        return mine, theirs

    def custom_ops(self, onnx_file):
        return sorted(op for op in nodes(onnx_file) if op[0] not in ("", "ai.onnx"))

    def test_an_op_onnx_does_not_define_is_written_as_torch_onnx_writes_it(self):
        namespace = {}
        exec(FAKE_QUANT_PACK, namespace)  # registers the symbolic in this process
        mine, theirs = path("fake_quant.onnxport.onnx"), path("fake_quant.torch.onnx")
        try:
            onnxport.export(FakeQuantModel(), (self.x,), mine, opset_version=13)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if TORCH_ONNX_CHECKS_ITS_FILE:  # it writes the file, then raises on the op ONNX does not define
                    with self.assertRaises(onnx.checker.ValidationError):
                        torch.onnx.export(FakeQuantModel(), (self.x,), theirs, opset_version=13)
                else:
                    torch.onnx.export(FakeQuantModel(), (self.x,), theirs, opset_version=13)
        finally:
            unregister_custom_op_symbolic("::fake_quantize_per_tensor_affine", 13)
        self.assertEqual(len(undefined_op_nodes(mine)), 2)
        self.assertEqual(undefined_op_nodes(mine), undefined_op_nodes(theirs))
        self.assertEqual(sorted(nodes(mine)), sorted(nodes(theirs)))

    def test_dispatch_per_opset_matches_torch_onnx(self):
        def gelu(g, self, approximate="none"):
            return g.op("com.microsoft::Gelu", self)

        for registered in (1, 9, 13):
            register_custom_op_symbolic("::gelu", gelu, registered)
            try:
                for opset in (9, 12, 13, 17):
                    mine, theirs = self.both(GeluModel(), f"gelu_{registered}_{opset}", opset,
                                             custom_opsets={"com.microsoft": 1})
                    self.assertEqual(self.custom_ops(mine), self.custom_ops(theirs), (registered, opset))
                    self.assertEqual(bool(self.custom_ops(mine)), registered <= opset and registered >= 9,
                                     (registered, opset))
            finally:
                unregister_custom_op_symbolic("::gelu", registered)
        mine = path("gelu_unregistered.onnx")
        onnxport.export(GeluModel(), (self.x,), mine, opset_version=17)
        self.assertEqual(self.custom_ops(mine), [])

    def test_the_symbolics_torchvision_registers_on_import_leave_its_ops_to_the_torchvision_pack(self):
        import torchvision  # noqa: F401  registers torchvision::roi_align, nms, roi_pool with torch.onnx
        from torch.onnx._internal import registration
        self.assertIsNotNone(registration.registry.get_function_group("torchvision::roi_align"))
        used = {m["op"]: m["pack"] for m in onnxport.ops(opset=17) if m.get("used", True)}
        self.assertEqual(used["torchvision::roi_align"], "torchvision")
        self.assertEqual(used["torchvision::nms"], "torchvision")

    def test_a_contrib_symbolic_matches_pytorch_in_onnx_runtime(self):
        def gelu(g, self, approximate="none"):
            return g.op("com.microsoft::Gelu", self)

        register_custom_op_symbolic("::gelu", gelu, 9)
        try:
            mine = path("gelu_process.onnx")
            onnxport.export(GeluModel(), (self.x,), mine, opset_version=17)
        finally:
            unregister_custom_op_symbolic("::gelu", 9)
        self.assertIn(("com.microsoft", "Gelu"), nodes(mine))
        self.assertNotIn("python:process", {m["pack"] for m in onnxport.ops(opset=17)})  # unregistered
        save_manifest("gelu_process", [self.x], [GeluModel()(self.x)])
        ok, log = ort_matches(mine, path("gelu_process.json"))
        self.assertTrue(ok, log)

    def test_a_custom_domain_takes_its_version_from_custom_opsets(self):
        @torch.onnx.symbolic_helper.parse_args("v", "i")
        def gelu_halves(g, x, dim):
            return g.op("org.example::GeluHalves", x, dim_i=dim, outputs=2)

        register_custom_op_symbolic("onnxport_test::gelu_halves", gelu_halves, 9)
        try:
            mine, theirs = self.both(HalvesModel(), "halves_domain", 17, custom_opsets={"org.example": 3})
        finally:
            unregister_custom_op_symbolic("onnxport_test::gelu_halves", 9)
        self.assertEqual(self.custom_ops(mine), [("org.example", "GeluHalves")])
        self.assertEqual(self.custom_ops(mine), self.custom_ops(theirs))
        self.assertEqual(imports(mine).get("org.example"), 3)
        node = [n for n in onnx.load(mine).graph.node if n.op_type == "GeluHalves"][0]
        self.assertEqual(len(node.output), 2)
        self.assertEqual([(a.name, a.i) for a in node.attribute], [("dim", 1)])

    @NEEDS_SYMBOLIC_CONTEXT
    def test_symbolic_context_and_calls_of_builtin_symbolics(self):
        from torch.onnx import symbolic_opset9
        from torch.onnx._exporter_states import SymbolicContext
        seen = []

        def relu_via_builtin(g, self):
            return symbolic_opset9.relu(g, symbolic_opset9.neg(g, self))

        def hardswish_with_context(ctx: SymbolicContext, g, self):
            seen.append(ctx.cur_node.kind())
            return g.op("HardSwish", self)

        class Model(torch.nn.Module):
            def forward(self, x):
                return torch.nn.functional.hardswish(torch.relu(x))

        register_custom_op_symbolic("::relu", relu_via_builtin, 14)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.onnx's FutureWarning for the context argument
            register_custom_op_symbolic("::hardswish", hardswish_with_context, 14)
        try:
            mine, theirs = self.both(Model(), "context_builtin", 17)
        finally:
            unregister_custom_op_symbolic("::relu", 14)
            unregister_custom_op_symbolic("::hardswish", 14)
        self.assertIn("aten::hardswish", seen)
        self.assertEqual([op for _, op in nodes(mine)], ["Neg", "Relu", "HardSwish"])
        save_manifest("context_builtin", [self.x], [torch.nn.functional.hardswish(torch.relu(-self.x))])
        ok, log = ort_matches(mine, path("context_builtin.json"))
        self.assertTrue(ok, log)


    def test_symbolics_that_build_if_and_loop_blocks(self):
        from torch.onnx import utils
        from torch.onnx._internal import jit_utils

        def relu_by_sign(g, x):
            # If(all(x >= 0)) then x else Relu(x): a block per branch, the second reading x
            positive = g.op("Cast", g.op("ReduceMin", g.op("Cast", g.op("GreaterOrEqual", x, g.op(
                "Constant", value_t=torch.tensor(0.0))), to_i=1), keepdims_i=0), to_i=9)
            out, (then_context, else_context), _ = jit_utils.add_op_with_blocks(g, "If", positive, n_blocks=2)
            utils._add_output_to_block(then_context.block, then_context.op("Identity", x))
            utils._add_output_to_block(else_context.block, else_context.op("Relu", x))
            return out

        def cumsum_by_loop(g, x, dim, dtype=None):
            # rows summed one by one in a Loop over dim 0, carrying the running sum
            rows = g.op("Gather", g.op("Shape", x), g.op("Constant", value_t=torch.tensor(0)), axis_i=0)
            start = g.op("ReduceSum", g.op("Mul", x, g.op("Constant", value_t=torch.tensor(0.0))),
                         g.op("Constant", value_t=torch.tensor([0])), keepdims_i=0)
            true = g.op("Constant", value_t=torch.tensor(True))
            loop, (body,), _ = jit_utils.add_op_with_blocks(g, "Loop", rows, true, start, outputs=2, n_blocks=1)
            step = utils._add_input_to_block(body.block)
            utils._add_input_to_block(body.block)
            carried = utils._add_input_to_block(body.block)
            total = body.op("Add", carried, body.op("Gather", x, step, axis_i=0))
            utils._add_output_to_block(body.block, body.op("Identity", true))
            utils._add_output_to_block(body.block, total)
            utils._add_output_to_block(body.block, total)
            return loop[1]

        class Model(torch.nn.Module):
            def forward(self, x):
                return torch.relu(x), torch.cumsum(x, 0)

        register_custom_op_symbolic("::relu", relu_by_sign, 13)
        register_custom_op_symbolic("::cumsum", cumsum_by_loop, 13)
        try:
            mine = path("blocks.onnx")
            onnxport.export(Model(), (self.x,), mine, opset_version=13)
        finally:
            unregister_custom_op_symbolic("::relu", 13)
            unregister_custom_op_symbolic("::cumsum", 13)
        self.assertEqual(sorted(op for _, op in nodes(mine) if op in ("If", "Loop")), ["If", "Loop"])
        save_manifest("blocks", [self.x], [torch.relu(self.x), torch.cumsum(self.x, 0)])
        ok, log = ort_matches(mine, path("blocks.json"))
        self.assertTrue(ok, log)

    def test_what_the_bridge_cannot_carry_is_refused_in_one_line(self):
        def gelu_as_aten(g, self, approximate="none"):
            return g.aten_op("gelu", self)

        register_custom_op_symbolic("::gelu", gelu_as_aten, 9)
        try:
            out = path("gelu_aten.onnx")
            with self.assertRaises(onnxport.ExportError) as raised:
                onnxport.export(GeluModel(), (self.x,), out, opset_version=17)
        finally:
            unregister_custom_op_symbolic("::gelu", 9)
        message = str(raised.exception)
        self.assertIn("the symbolic for aten::gelu made a aten::ATen node, which onnxport's Python bridge does not "
                      "carry", message)
        self.assertEqual(len(message.splitlines()), 1)
        self.assertFalse(os.path.exists(out))

    def test_autograd_functions_convert_as_in_torch_onnx(self):
        class ClipBelow(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, floor):
                return x.clamp(min=floor)

            @staticmethod
            def symbolic(g, x, floor):  # `floor` is a Python number kept on the traced node
                return g.op("Clip", x, min_f=floor)

        class ExpLog(torch.autograd.Function):  # no symbolic: exported as the operations it ran
            @staticmethod
            def forward(ctx, x):
                return (x.exp() + 1).log()

        class Model(torch.nn.Module):
            def forward(self, x):
                return ClipBelow.apply(x, 0.25) * ClipBelow.apply(x, -0.5) + ExpLog.apply(x)

        model = Model()
        mine, theirs = self.both(model, "autograd_functions", 9)
        self.assertEqual([op for _, op in nodes(mine) if op == "Clip"], ["Clip", "Clip"])
        floors = sorted(a.f for n in onnx.load(mine).graph.node if n.op_type == "Clip" for a in n.attribute)
        self.assertEqual(floors, [-0.5, 0.25])
        self.assertEqual(sorted(op for _, op in nodes(mine)), sorted(op for _, op in nodes(theirs)))
        save_manifest("autograd_functions", [self.x], [model(self.x)])
        ok, log = ort_matches(mine, path("autograd_functions.json"))
        self.assertTrue(ok, log)

    def test_functions_without_symbolic_returning_tuples_and_calling_functions_are_inlined(self):
        class Inner(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.exp()

        class Pair(torch.autograd.Function):  # two outputs, and another Function inside
            @staticmethod
            def forward(ctx, x):
                return Inner.apply(x) + 1, x.sin()

        class Model(torch.nn.Module):
            def forward(self, x):
                a, b = Pair.apply(x)
                return a * b

        model = Model()
        mine, theirs = self.both(model, "nested_functions", 13)
        self.assertEqual(sorted(op for _, op in nodes(mine)), sorted(op for _, op in nodes(theirs)))
        save_manifest("nested_functions", [self.x], [model(self.x)])
        ok, log = ort_matches(mine, path("nested_functions.json"))
        self.assertTrue(ok, log)
        mine_again = path("nested_functions_again.onnx")  # the same module once more
        onnxport.export(model, (self.x,), mine_again, opset_version=13)
        self.assertEqual(nodes(mine_again), nodes(mine))

    def test_a_function_with_symbolic_returning_a_tuple(self):
        class SplitScale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, scale):
                return x * scale, x + scale

            @staticmethod
            def symbolic(g, x, scale):
                factor = g.op("Constant", value_t=torch.tensor(scale, dtype=torch.float32))
                return g.op("Mul", x, factor), g.op("Add", x, factor)

        class Model(torch.nn.Module):
            def forward(self, x):
                scaled, shifted = SplitScale.apply(x, 3.0)
                return scaled - shifted, shifted

        model = Model()
        mine, theirs = self.both(model, "tuple_function", 13)
        computing = [lambda f: sorted(op for _, op in nodes(f) if op != "Constant")][0]
        self.assertEqual(computing(mine), ["Add", "Mul", "Sub"])
        self.assertEqual(computing(mine), computing(theirs))
        save_manifest("tuple_function", [self.x], list(model(self.x)))
        ok, log = ort_matches(mine, path("tuple_function.json"))
        self.assertTrue(ok, log)

    def test_the_cpp_api_given_a_function_call_says_where_it_converts(self):
        class Twice(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

        class Model(torch.nn.Module):
            def forward(self, x):
                return Twice.apply(x)

        traced = torch.jit.trace(Model(), (self.x,))  # handed to the exporter without the package's preparation
        from onnxport import _onnxport
        out = path("python_op_cpp_api.onnx")
        with self.assertRaisesRegex(onnxport.ExportError, r"prim::PythonOp x1 in <top> \(a torch.autograd.Function "
                                                          r"call: a \.pt file cannot hold one; export the module with "
                                                          r"onnxport.export in Python"):
            _onnxport.exporter([]).export(traced._c, [self.x], out, "{}", "")
        self.assertFalse(os.path.exists(out))

    @NEEDS_SYMBOLIC_CONTEXT
    def test_a_symbolic_registered_for_python_op_gets_the_function_name_and_context(self):
        class Shrink(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, amount):
                return x.clamp(min=amount)

        def python_op(ctx: torch.onnx.SymbolicContext, g, *args, **kwargs):
            self.assertEqual(kwargs["name"], "Shrink")
            return g.op("Clip", args[0], min_f=args[1], outputs=ctx.cur_node.outputsSize())

        class Model(torch.nn.Module):
            def forward(self, x):
                return Shrink.apply(x, 0.1)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            register_custom_op_symbolic("prim::PythonOp", python_op, 1)
        try:
            mine = path("python_op.onnx")
            onnxport.export(Model(), (self.x,), mine, opset_version=9)
        finally:
            unregister_custom_op_symbolic("prim::PythonOp", 1)
        self.assertEqual([op for _, op in nodes(mine)], ["Clip"])

    def test_a_python_op_registration_applies_from_its_opset_and_functions_inline_below(self):
        def only_from_13(g, *args, **kwargs):
            return g.op("Identity", args[0])

        class Plain(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

        class Model(torch.nn.Module):
            def forward(self, x):
                return Plain.apply(x)

        register_custom_op_symbolic("prim::PythonOp", only_from_13, 13)
        try:
            # registered for 13 only: at opset 13 the registration is used (no inlining)...
            mine = path("python_op_13.onnx")
            onnxport.export(Model(), (self.x,), mine, opset_version=13)
            self.assertEqual([op for _, op in nodes(mine)], ["Identity"])
            # ...below it torch.onnx inlines the Function, and so does onnxport
            mine = path("python_op_11.onnx")
            onnxport.export(Model(), (self.x,), mine, opset_version=11)
            self.assertIn("Mul", [op for _, op in nodes(mine)])
            self.assertNotIn("Identity", [op for _, op in nodes(mine)])
        finally:
            unregister_custom_op_symbolic("prim::PythonOp", 13)


if __name__ == "__main__":
    unittest.main()
