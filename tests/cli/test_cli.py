#!/usr/bin/python3
"""CLI integration tests for `onnxport`: packs from --plugin-dir, refused packs, unsupported-op
reports, no partial output files, options (names, dynamic axes, export_params, config), and
numerical agreement with PyTorch in ONNX Runtime.

Environment (set by ctest): ONNXPORT (the CLI), ONNXPORT_TEST_PACKS (a good third-party pack),
ONNXPORT_TEST_BAD_PACKS (a pack built for SDK API 99), ONNXPORT_ORT_COMPARE (ort_compare.js),
ONNXPORT_TEST_TMP (scratch directory).
"""
import json
import os
import shutil
import sys
import subprocess
import unittest
from typing import List, Optional, Tuple

import numpy as np
import onnx
import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "support"))
from cli_test import CLI, TMP, path, run  # noqa: E402

PACKS = os.environ["ONNXPORT_TEST_PACKS"]
BAD_PACKS = os.environ["ONNXPORT_TEST_BAD_PACKS"]
ORT_COMPARE = os.environ["ONNXPORT_ORT_COMPARE"]
MISBEHAVING = os.environ["ONNXPORT_TEST_MISBEHAVING"]


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                                            torch.nn.BatchNorm2d(8))
        self.classifier = torch.nn.Linear(8 * 6 * 6, 5)

    def forward(self, x):
        y = self.features(x)
        return self.classifier(y.reshape(y.size(0), -1))


class ConvBn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, bias=False)
        self.bn = torch.nn.BatchNorm2d(4)

    def forward(self, x):
        return self.bn(self.conv(x))


class Hard(torch.nn.Module):
    def forward(self, x):
        return torch.lgamma(torch.relu(x) + 1.5)


class Block(torch.nn.Module):
    """Applies one unary op inside a named submodule, so errors can name the module path."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class Wrapper(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Identity(), Block(fn))

    def forward(self, x):
        return self.encoder(x) + 1


class Unsupported(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Linear(4, 4)

    def forward(self, x):
        # erfinv, lgamma and digamma: ops no built-in pack maps (ONNX has no equivalent).
        y = torch.special.erfinv(torch.tanh(self.inner(x)) * 0.5)
        return torch.lgamma(y.abs() + 1)[:, :2] + torch.digamma(torch.special.erfinv(x[:, :2] * 0.1).abs() + 1)


class Projection(torch.nn.Module):
    """A Linear on a 3-d input (MatMul on the transposed weight), a view to the shape the value
    already has, and a transpose and a permute that are the same ONNX Transpose: what parameter
    names, no-op removal and merging meet (TorchScript's own CSE only merges equal torch ops)."""

    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(8)
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(self.ln(x)).view(2, 5, 8) + (x.transpose(1, 2) * x.permute(0, 2, 1)).transpose(1, 2)


class BiasAfter(torch.nn.Module):
    """A bias-free Conv plus a per-channel parameter, then x @ w + b on 2-d values: the two Adds
    --optimize 2 moves into a Conv bias and a Gemm's C."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, bias=False)
        self.shift = torch.nn.Parameter(torch.randn(4, 1, 1))
        self.w = torch.nn.Parameter(torch.randn(64, 5))
        self.b = torch.nn.Parameter(torch.randn(5))

    def forward(self, x):
        return (self.conv(x) + self.shift).flatten(1) @ self.w + self.b


def save_npy_manifest(name, inputs, outputs):
    files_in = []
    for k, t in enumerate(inputs):
        f = f"{name}.in{k}.npy"
        np.save(path(f), t.numpy())
        files_in.append({"name": f"input{k}", "file": f, "shape": list(t.shape), "dtype": str(t.numpy().dtype)})
    files_out = []
    for k, t in enumerate(outputs):
        f = f"{name}.out{k}.npy"
        np.save(path(f), t.detach().numpy())
        files_out.append({"file": f})
    with open(path(f"{name}.json"), "w") as fh:
        json.dump({"model": f"{name}.pt", "inputs": files_in, "outputs": files_out}, fh)


def ort_matches(onnx_file, name):
    r = subprocess.run(["node", ORT_COMPARE, onnx_file, path(f"{name}.json")], capture_output=True, text=True)
    return r.returncode == 0, r.stdout + r.stderr


class CliTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        shutil.rmtree(TMP, ignore_errors=True)
        os.makedirs(TMP)
        torch.manual_seed(0)
        x = torch.randn(2, 3, 6, 6)
        small = Small().eval()
        with torch.no_grad():
            small.features[2].running_mean.uniform_(-0.5, 0.5)
            small.features[2].running_var.uniform_(0.5, 1.5)
        traced = torch.jit.trace(small, x)
        traced.save(path("small.pt"))
        save_npy_manifest("small", [x], [small(x)])
        convbn = ConvBn().eval()
        with torch.no_grad():
            convbn.bn.running_mean.uniform_(-1, 1)
            convbn.bn.running_var.uniform_(0.5, 2)
            convbn.bn.weight.uniform_(0.5, 1.5)
            convbn.bn.bias.uniform_(-1, 1)
        torch.jit.trace(convbn, x).save(path("convbn.pt"))
        save_npy_manifest("convbn", [x], [convbn(x)])
        hx = torch.randn(3, 4)
        torch.jit.trace(Hard(), hx).save(path("hard.pt"))
        save_npy_manifest("hard", [hx], [Hard()(hx)])
        torch.jit.trace(Unsupported().eval(), torch.randn(4, 4) * 0.1).save(path("unsupported.pt"))
        px = torch.randn(2, 5, 8)
        projection = Projection().eval()
        torch.jit.trace(projection, px).save(path("projection.pt"))
        save_npy_manifest("projection", [px], [projection(px)])
        bx = torch.randn(2, 3, 6, 6)
        bias_after = BiasAfter().eval()
        torch.jit.trace(bias_after, bx).save(path("bias_after.pt"))
        save_npy_manifest("bias_after", [bx], [bias_after(bx)])
        for name, fn in (("tanh", torch.tanh), ("sigmoid", torch.sigmoid), ("neg", torch.neg), ("exp", torch.exp),
                         ("leaky_relu", torch.nn.functional.leaky_relu), ("abs", torch.abs)):
            torch.jit.trace(Wrapper(fn), torch.randn(2, 3)).save(path(f"uses_{name}.pt"))
        with open(path("not_a_model.pt"), "w") as fh:
            fh.write("this is not a TorchScript archive")

    def assertNoLeftovers(self, out):
        self.assertFalse(os.path.exists(out), f"{out} must not exist after a failed export")
        stray = [f for f in os.listdir(os.path.dirname(out)) if ".tmp-" in f]
        self.assertEqual(stray, [], "temporary files left behind")

    def assert_runs_like_torch(self, onnx_file, name, model, inputs):
        """`onnx_file` run in ONNX Runtime on each input gives what `model` gives on it."""
        for k, x in enumerate(inputs):
            outputs = model(x)
            save_npy_manifest(f"{name}{k}", [x], list(outputs) if isinstance(outputs, tuple) else [outputs])
            ok, log = ort_matches(onnx_file, f"{name}{k}")
            self.assertTrue(ok, f"{name} at {list(x.shape)}: {log}")

    # -- exporting and verifying ------------------------------------------------------------
    def test_export_matches_pytorch_in_onnxruntime(self):
        for opset in ("11", "13", "17"):
            out = path(f"small.{opset}.onnx")
            run("export", path("small.pt"), "-o", out, "--input", "x=" + path("small.in0.npy"), "--opset", opset)
            ok, log = ort_matches(out, "small")
            self.assertTrue(ok, log)
            m = onnx.load(out)
            self.assertEqual([i.version for i in m.opset_import if i.domain == ""], [int(opset)])

    def test_eval_export_fuses_conv_and_batchnorm(self):
        out = path("convbn.onnx")
        run("export", path("convbn.pt"), "-o", out, "--input", "x=" + path("convbn.in0.npy"))
        g = onnx.load(out).graph
        self.assertEqual([n.op_type for n in g.node], ["Conv"])
        self.assertEqual(sorted(i.name for i in g.initializer), ["conv.bias", "conv.weight"])
        ok, log = ort_matches(out, "convbn")
        self.assertTrue(ok, log)
        # Training export keeps the BatchNormalization.
        run("export", path("convbn.pt"), "-o", out, "--input", "x:2x3x6x6", "--training", "preserve")
        self.assertIn("BatchNormalization", [n.op_type for n in onnx.load(out).graph.node])

    def test_names_initializers_and_node_names_follow_module_paths(self):
        out = path("names.onnx")
        run("export", path("small.pt"), "-o", out, "--input", "image:2x3x6x6:float32",
            "--output-names", "logits", "--no-constant-folding")
        g = onnx.load(out).graph
        self.assertEqual([i.name for i in g.input], ["image"])
        self.assertEqual([o.name for o in g.output], ["logits"])
        inits = {i.name for i in g.initializer}
        self.assertIn("features.0.weight", inits)
        self.assertIn("features.2.running_mean", inits)
        self.assertIn("classifier.weight", inits)
        self.assertIn("/features/features.0/Conv", [n.name for n in g.node])

    def test_a_transposed_linear_weight_keeps_its_parameter_name(self):
        out = path("projection.onnx")
        report = path("projection.report.json")
        run("export", path("projection.pt"), "-o", out, "--input", "x=" + path("projection.in0.npy"),
            "--report", report)
        with open(report) as fh:
            folding = [line for line in json.load(fh)["passes"] if line.startswith("constant folding")]
        # The CLI's module is its own: the transpose is written over the weight's bytes.
        self.assertEqual(len(folding), 1)
        self.assertIn("1 of them Transposes written over their weights' bytes", folding[0])
        inits = {i.name: i for i in onnx.load(out).graph.initializer}
        self.assertIn("proj.weight", inits)
        self.assertEqual(list(inits["proj.weight"].dims), [8, 8])
        self.assertIn("parameter proj.weight through Transpose", inits["proj.weight"].doc_string)
        w = torch.jit.load(path("projection.pt")).proj.weight.detach().numpy()
        np.testing.assert_array_equal(numpy_helper.to_array(inits["proj.weight"]), w.T)
        self.assertFalse([n for n in inits if "Transpose" in n])
        ok, log = ort_matches(out, "projection")
        self.assertTrue(ok, log)

    def test_optimize_1_removes_noops_and_repeats_and_optimize_0_keeps_them(self):
        def export(level):
            out = path(f"projection.O{level}.onnx")
            r = run("export", path("projection.pt"), "-o", out, "--input", "x=" + path("projection.in0.npy"),
                    "--optimize", level, "--verbose")
            ok, log = ort_matches(out, "projection")
            self.assertTrue(ok, log)
            return [n.op_type for n in onnx.load(out).graph.node], r.stdout

        plain, _ = export("0")
        optimized, verbose = export("1")
        self.assertEqual((plain.count("Reshape"), plain.count("Transpose")), (1, 3), plain)
        self.assertEqual((optimized.count("Reshape"), optimized.count("Transpose")), (0, 2), optimized)
        self.assertEqual(len(plain) - len(optimized), 3)  # the Reshape's shape Constant goes with it
        self.assertIn("pass no-op removal: Reshape x1", verbose)
        self.assertIn("pass common-subexpression elimination: 1 node merged into earlier ones", verbose)
        r = run("export", path("projection.pt"), "-o", path("o3.onnx"), "--input", "x:2x5x8", "--optimize", "3",
                ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("optimize level 3 is out of range", r.stderr)

    def test_optimize_2_moves_constant_adds_into_conv_bias_and_gemm(self):
        def export(level):
            out = path(f"bias_after.O{level}.onnx")
            r = run("export", path("bias_after.pt"), "-o", out, "--input", "x=" + path("bias_after.in0.npy"),
                    "--optimize", level, "--verbose")
            ok, log = ort_matches(out, "bias_after")
            self.assertTrue(ok, log)
            return onnx.load(out).graph, r.stdout

        level1, _ = export("1")
        self.assertEqual([n.op_type for n in level1.node], ["Conv", "Add", "Flatten", "MatMul", "Add"])
        level2, verbose = export("2")
        self.assertEqual([n.op_type for n in level2.node], ["Conv", "Flatten", "Gemm"])
        self.assertIn("pass bias fusion: 2 Add/Sub of a constant joined the Conv, Gemm or MatMul before it", verbose)
        inits = {i.name: i for i in level2.initializer}
        self.assertEqual(list(level2.node[0].input), ["x", "conv.weight", "conv.bias"])
        self.assertIn("shift", inits["conv.bias"].doc_string)
        model = torch.jit.load(path("bias_after.pt"))
        np.testing.assert_array_equal(numpy_helper.to_array(inits["conv.bias"]), model.shift.detach().numpy().ravel())
        self.assertEqual(list(level2.node[2].input)[1:], ["w", "b"])  # parameters keep their names

    def test_report_json_and_markdown_describe_the_export(self):
        out = path("reported.onnx")
        report = path("report.json")
        run("export", path("small.pt"), "-o", out, "--input", "x:2x3x6x6", "--report", report)
        with open(report) as fh:
            rep = json.load(fh)
        self.assertEqual(rep["schema"], "onnxport-export-report/1")
        self.assertEqual((rep["status"], rep["error"], rep["output"], rep["mode"]), ("ok", None, out, "trace"))
        self.assertEqual([s["name"] for s in rep["stages"]],
                         ["load", "prepare", "resolve", "convert", "prove dynamic axes", "onnx passes", "write", "check"])
        self.assertTrue(all(s["status"] == "ok" and s["seconds"] >= 0 and s["peak_rss_bytes"] > 0
                            for s in rep["stages"]))
        self.assertAlmostEqual(rep["total_seconds"], sum(s["seconds"] for s in rep["stages"]), places=6)
        m = onnx.load(out)
        self.assertEqual(rep["graph"]["nodes"], len(m.graph.node))
        self.assertEqual(rep["graph"]["initializers"], len(m.graph.initializer))
        self.assertEqual(rep["graph"]["initializer_bytes"], sum(len(i.raw_data) for i in m.graph.initializer))
        self.assertEqual(sum(rep["graph"]["op_histogram"].values()), len(m.graph.node))
        self.assertEqual(sum(n for ops in rep["graph"]["ops_by_pack"].values() for n in ops.values()),
                         len(m.graph.node))
        self.assertEqual(rep["graph"]["ops_by_pack"]["nn"]["aten::_convolution"], 1)
        self.assertEqual(rep["checker"], "ok")
        self.assertEqual(rep["files"]["model_bytes"], os.path.getsize(out))
        self.assertEqual(rep["options"]["opset_version"], 17)

        md = path("report.md")
        run("export", path("small.pt"), "-o", out, "--input", "x:2x3x6x6", "--report", md)
        with open(md) as fh:
            text = fh.read()
        self.assertIn("- status: **ok**; checker: ok", text)
        self.assertIn("| nn | aten::_convolution | 1 |", text)
        self.assertIn("| check | ok |", text)

    def test_report_of_a_failed_export_names_the_stage_and_error(self):
        out = path("unsupported_reported.onnx")
        report = path("failed.json")
        r = run("export", path("unsupported.pt"), "-o", out, "--input", "x:4x4", "--report", report, ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertNoLeftovers(out)
        with open(report) as fh:
            rep = json.load(fh)
        self.assertEqual((rep["status"], rep["output"], rep["checker"]), ("failed", None, "skipped"))
        self.assertEqual(rep["error"]["kind"], "unsupported op")
        self.assertEqual(rep["error"]["stage"], "resolve")
        self.assertIn("aten::lgamma x1 in <top>", rep["error"]["message"])
        self.assertIn("--plugin-dir", rep["error"]["hint"])
        self.assertEqual([(s["name"], s["status"]) for s in rep["stages"]][-1], ("resolve", "failed"))
        self.assertEqual(rep["graph"]["nodes"], 0)

    def test_report_path_is_checked_before_the_export(self):
        with open(path("cfg.json"), "w") as fh:
            fh.write("{}")
        for report, expect in (("report.txt", "extension, .json or .md"), ("same.onnx", "also an output"),
                               ("cfg.json", "is the same file as '" + path("cfg.json") + "', an input")):
            r = run("export", path("small.pt"), "-o", path("same.onnx"), "--input", "x:2x3x6x6",
                    "--config", path("cfg.json"), "--report", path(report), ok=False)
            self.assertEqual(r.returncode, 1, report)
            self.assertIn(expect, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertFalse(os.path.exists(path("same.onnx")))
        self.assertFalse(os.path.exists(path("report.txt")))

    def test_dynamic_axes_become_dim_params_and_run_at_other_sizes(self):
        out = path("dyn.onnx")
        run("export", path("small.pt"), "-o", out, "--input", "x=" + path("small.in0.npy"),
            "--dynamic-axes", "x:0=batch", "--dynamic-axes", "output_0:0=batch")
        g = onnx.load(out).graph
        self.assertEqual(g.input[0].type.tensor_type.shape.dim[0].dim_param, "batch")
        self.assertEqual(g.output[0].type.tensor_type.shape.dim[0].dim_param, "batch")
        # Run at batch 5 against eager PyTorch.
        torch.manual_seed(1)
        x5 = torch.randn(5, 3, 6, 6)
        model = torch.jit.load(path("small.pt"))
        save_npy_manifest("small_b5", [x5], [model(x5)])
        ok, log = ort_matches(out, "small_b5")
        self.assertTrue(ok, log)

    def test_export_params_false_makes_parameters_inputs(self):
        out = path("noparams.onnx")
        run("export", path("small.pt"), "-o", out, "--input", "x:2x3x6x6", "--no-export-params", "--no-check")
        g = onnx.load(out).graph
        self.assertEqual(len(g.initializer), 0)
        self.assertIn("features.0.weight", [i.name for i in g.input])

    def test_keep_initializers_as_inputs(self):
        out = path("keep.onnx")
        run("export", path("small.pt"), "-o", out, "--input", "x:2x3x6x6", "--keep-initializers-as-inputs")
        g = onnx.load(out).graph
        names = {i.name for i in g.input}
        self.assertTrue({i.name for i in g.initializer} <= names)

    def test_verbose_prints_graph_with_types_and_provenance(self):
        r = run("export", path("small.pt"), "-o", path("verbose.onnx"), "--input", "x:2x3x6x6", "--verbose")
        self.assertIn("Conv", r.stdout)
        self.assertIn("aten::_convolution [nn] features.0", r.stdout)
        self.assertIn("float32[2,3,6,6]", r.stdout)

    def test_provenance_doc_strings(self):
        out = path("provenance.onnx")
        run("export", path("small.pt"), "-o", out, "--input", "x:2x3x6x6", "--provenance")
        conv = [n for n in onnx.load(out).graph.node if n.op_type == "Conv"][0]
        self.assertIn("pack=nn op=aten::_convolution module=features.0", conv.doc_string)
        run("export", path("small.pt"), "-o", out, "--input", "x:2x3x6x6")
        self.assertEqual([n.doc_string for n in onnx.load(out).graph.node if n.doc_string], [])

    def test_ops_pack_filter(self):
        rows = json.loads(run("ops", "--json", "--pack", "rnn").stdout)
        self.assertTrue(rows)
        self.assertEqual({r["pack"] for r in rows}, {"rnn"})
        self.assertIn("aten::lstm", {r["op"] for r in rows})

    def test_config_file_and_flag_override(self):
        cfg = path("export.json")
        with open(cfg, "w") as fh:
            json.dump({"opset_version": 11, "output_names": ["y"], "inputs": ["x:2x3x6x6:float32"]}, fh)
        out = path("config.onnx")
        run("export", path("small.pt"), "-o", out, "--config", cfg)
        m = onnx.load(out)
        self.assertEqual([i.version for i in m.opset_import if i.domain == ""], [11])
        self.assertEqual(m.graph.output[0].name, "y")
        run("export", path("small.pt"), "-o", out, "--config", cfg, "--opset", "13")
        self.assertEqual([i.version for i in onnx.load(out).opset_import if i.domain == ""], [13])

    def test_config_unknown_key_is_an_error(self):
        cfg = path("bad.json")
        with open(cfg, "w") as fh:
            json.dump({"opset": 11}, fh)
        r = run("export", path("small.pt"), "-o", path("x.onnx"), "--config", cfg, ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("unknown key 'opset'", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)

    # -- failures ---------------------------------------------------------------------------
    def test_unsupported_ops_are_reported_together_and_nothing_is_written(self):
        out = path("unsupported.onnx")
        r = run("export", path("unsupported.pt"), "-o", out, "--input", "x:4x4", ok=False)
        self.assertEqual(r.returncode, 1)
        # Every unmapped op at once, with counts and where it sits.
        self.assertIn("operators have no mapping at opset 17", r.stderr)
        self.assertIn("aten::erfinv x2 in <top>", r.stderr)
        self.assertIn("aten::lgamma x1 in <top>", r.stderr)
        self.assertIn("aten::digamma x1 in <top>", r.stderr)
        self.assertIn("unsupported.pt", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertNoLeftovers(out)

    def test_operator_export_types_keep_unmapped_ops(self):
        def export(mode):
            out = path(f"fallback.{mode}.onnx")
            r = run("export", path("unsupported.pt"), "-o", out, "--input", "x:4x4", "--operator-export-type", mode)
            return r, onnx.load(out)

        r, m = export("onnx_aten_fallback")
        self.assertIn("4 nodes kept as onnx_aten_fallback fallback: aten::digamma x1 aten::erfinv x2 aten::lgamma x1",
                      r.stdout)
        aten = [n for n in m.graph.node if n.domain == "org.pytorch.aten"]
        self.assertEqual(sorted(onnx.helper.get_attribute_value(a).decode() for n in aten for a in n.attribute
                                if a.name == "operator"), ["digamma", "erfinv", "erfinv", "lgamma"])
        self.assertIn("Gemm", [n.op_type for n in m.graph.node])  # mapped ops still mapped
        self.assertEqual({i.domain: i.version for i in m.opset_import}["org.pytorch.aten"], 1)

        r, m = export("onnx_fallthrough")
        kept = sorted((n.domain, n.op_type) for n in m.graph.node if n.domain)
        self.assertEqual(kept, [("aten", "digamma"), ("aten", "erfinv"), ("aten", "erfinv"), ("aten", "lgamma")])

        r, m = export("onnx_aten")
        ops = [n for n in m.graph.node if n.domain == "org.pytorch.aten"]
        names = [onnx.helper.get_attribute_value(a).decode() for n in ops for a in n.attribute if a.name == "operator"]
        self.assertIn("linear", names)  # even mapped aten ops become ATen nodes
        linear = ops[names.index("linear")]
        self.assertEqual(list(linear.input), ["x", "inner.weight", "inner.bias"])  # parameters stay inputs
        self.assertNotIn("Gemm", [n.op_type for n in m.graph.node])

        r = run("export", path("unsupported.pt"), "-o", path("x.onnx"), "--input", "x:4x4",
                "--operator-export-type", "onnx_everything", ok=False)
        self.assertIn("operator_export_type 'onnx_everything' is unknown", r.stderr)

    def test_not_a_model_fails_with_one_clear_line(self):
        out = path("bad.onnx")
        r = run("export", path("not_a_model.pt"), "-o", out, "--input", "x:1", ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot load TorchScript model", r.stderr)
        self.assertIn("not_a_model.pt", r.stderr)
        self.assertNoLeftovers(out)

    def test_a_file_whose_own_code_fails_at_load_is_not_sent_to_load_op_library(self):
        # Its __setstate__ raises when libtorch loads it, as a repacking for a quantized engine
        # this libtorch lacks does: no op library would help, so the hint must not offer one.
        class Refusing(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.ones(2)

            @torch.jit.export
            def __getstate__(self) -> Tuple[torch.Tensor, bool]:
                return (self.w, self.training)

            @torch.jit.export
            def __setstate__(self, state: Tuple[torch.Tensor, bool]) -> None:
                if bool(state[0].sum() > 0):
                    raise RuntimeError("weights packed for an engine this build lacks")
                self.w = state[0]
                self.training = state[1]

            def forward(self, x):
                return x * self.w

        torch.jit.save(torch.jit.script(Refusing()), path("refusing.pt"))
        out = path("refusing.onnx")
        r = run("export", path("refusing.pt"), "-o", out, "--input", "x:2", ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("cannot load TorchScript model", r.stderr)
        self.assertIn("weights packed for an engine this build lacks", r.stderr)
        self.assertIn("could not compile or run the file's code while loading it", r.stderr)
        self.assertNotIn("--load-op-library", r.stderr)
        self.assertNoLeftovers(out)

    def test_wrong_number_of_inputs_names_the_fix(self):
        r = run("export", path("small.pt"), "-o", path("x.onnx"), "--input", "a:1x3x6x6", "--input", "b:1", ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("forward takes 1 argument (x: Tensor), 2 --input were given", r.stderr)

    def test_wrong_rank_input_is_one_line_naming_op_module_and_shapes(self):
        args = ("export", path("small.pt"), "-o", path("x.onnx"), "--input", "x:2x6x6")
        r = run(*args, ok=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        for fragment in ("op aten::_convolution", "module features.0", "float32[2,6,6]", "given: x float32[2,6,6]"):
            self.assertIn(fragment, r.stderr)
        self.assertFalse(os.path.exists(path("x.onnx")))
        verbose = run(*args, "--verbose", ok=False)
        self.assertEqual(verbose.returncode, 1)
        self.assertIn("Traceback of TorchScript", verbose.stderr)

    def test_bad_input_spec(self):
        r = run("export", path("small.pt"), "-o", path("x.onnx"), "--input", "x:2xAx6:float32", ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("bad dimension 'A'", r.stderr)

    def test_external_data_file_holds_the_parameters_and_runs_in_onnxruntime(self):
        out = path("small_ext.onnx")
        r = run("export", path("small.pt"), "-o", out, "--input", "x=" + path("small.in0.npy"), "--external-data")
        data = out + ".data"
        self.assertIn("initializers in " + data, r.stdout)
        self.assertTrue(os.path.exists(data))
        m = onnx.load(out, load_external_data=False)
        weight = next(t for t in m.graph.initializer if t.name == "classifier.weight")
        self.assertEqual(weight.data_location, onnx.TensorProto.EXTERNAL)
        location = {e.key: e.value for e in weight.external_data}
        self.assertEqual(location["location"], "small_ext.onnx.data")
        self.assertEqual(int(location["length"]), 5 * 8 * 6 * 6 * 4)
        # Tensors under 1 KiB stay in the model, where shape inference can read them.
        bias = next(t for t in m.graph.initializer if t.name == "classifier.bias")
        self.assertNotEqual(bias.data_location, onnx.TensorProto.EXTERNAL)
        # The bytes at the offset are the parameter's.
        with open(data, "rb") as fh:
            fh.seek(int(location["offset"]))
            stored = np.frombuffer(fh.read(int(location["length"])), dtype=np.float32)
        self.assertEqual(stored.size, 5 * 288)
        ok, log = ort_matches(out, "small")
        self.assertTrue(ok, log)
        self.assertIn("ok:", run("check", out).stdout)
        # The readers take the data file beside the model, whatever directory they are run from.
        outputs = path("small_ext_outputs")
        os.makedirs(outputs, exist_ok=True)
        run("run", os.path.relpath(out, TMP), "--input", "x=small.in0.npy", "-o", "small_ext_outputs", cwd=TMP)
        expected = np.load(path("small.out0.npy"))
        np.testing.assert_allclose(np.load(os.path.join(outputs, "output_0.npy")), expected, rtol=1e-4, atol=1e-5)
        # A named data file; a directory in the name is refused before anything is written.
        run("export", path("small.pt"), "-o", out, "--input", "x:2x3x6x6", "--external-data", "weights.bin")
        self.assertTrue(os.path.exists(path("weights.bin")))
        r = run("export", path("small.pt"), "-o", path("sub.onnx"), "--input", "x:2x3x6x6", "--external-data",
                "d/w.bin", ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("a name in the model's directory", r.stderr)
        self.assertNoLeftovers(path("sub.onnx"))

    def test_bfloat16_model_exports_where_onnx_takes_bfloat16(self):
        class Linear(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(3, 4)

            def forward(self, x):
                return torch.relu(self.fc(x)) * 2

        torch.jit.trace(Linear().to(torch.bfloat16).eval(), torch.randn(2, 3, dtype=torch.bfloat16)).save(
            path("bf16_linear.pt"))
        for opset in ("13", "17"):
            out = path(f"bf16_linear.{opset}.onnx")
            run("export", path("bf16_linear.pt"), "-o", out, "--input", "x:2x3:bfloat16", "--opset", opset)
            graph = onnx.load(out).graph
            self.assertEqual(graph.input[0].type.tensor_type.elem_type, onnx.TensorProto.BFLOAT16)
            self.assertEqual(graph.output[0].type.tensor_type.elem_type, onnx.TensorProto.BFLOAT16)
            self.assertIn("ok:", run("check", out).stdout)
            self.assertIn("verify: ok", run("verify", path("bf16_linear.pt"), out, "--input", "x:2x3:bfloat16").stdout)

    def test_verify_scripted_lstm_with_overloads_and_default_state(self):
        # A scripted nn.LSTM has only forward__0/forward__1 and an optional hx: verify calls the
        # overload the export used and leaves hx at its default when the file has no input for it.
        torch.manual_seed(0)
        torch.jit.script(torch.nn.LSTM(4, 6, num_layers=2, proj_size=3).eval()).save(path("lstm_script.pt"))
        out = path("lstm_script.onnx")
        run("export", path("lstm_script.pt"), "-o", out, "--mode", "script", "--input", "x:5x2x4")
        self.assertIn("verify: ok", run("verify", path("lstm_script.pt"), out, "--input", "x:5x2x4").stdout)

    def test_verify_says_which_drawn_input_set_the_model_refuses(self):
        # A second input set the model refuses (its first column of indices must be 0; drawn ones are
        # not): a model error naming the set and what to do, not an internal error.
        class Picky(torch.nn.Module):
            def forward(self, x, i):
                torch._assert(bool((i[:, 0] == 0).all()), "the first column of i must be 0")
                return x.gather(1, i)

        x, i = torch.randn(3, 5), torch.tensor([[0, 4], [0, 2], [0, 3]])
        torch.jit.script(Picky()).save(path("gather.pt"))
        np.save(path("gather_i.npy"), i.numpy())
        out = path("gather.onnx")
        given = ["--input", "x:3x5", "--input", "i=" + path("gather_i.npy"), "--mode", "script"]
        run("export", path("gather.pt"), "-o", out, *given)
        self.assertIn("verify: ok", run("verify", path("gather.pt"), out, *given, "--samples", "1").stdout)
        r = run("verify", path("gather.pt"), out, *given, "--samples", "3", ok=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertRegex(r.stderr, r"model error: verify: running '.*gather.pt' on input set 2 \(.*drawn.*\) failed: "
                                   r".*the first column of i must be 0.* — give the model inputs it takes .* \(--samples 1\)")
        self.assertNotIn("internal error", r.stderr)

    def test_verify_draws_integers_within_the_given_ones(self):
        # Token ids given from a file: the further input sets draw ids between the smallest and the
        # largest given (here 2..9), not in [0, 8), which would hit the ids the model reserves.
        class Tokens(torch.nn.Module):
            def forward(self, t):
                torch._assert(bool((t >= 2).all()), "ids 0 and 1 are reserved")
                return t * 2

        torch.jit.script(Tokens()).save(path("tokens.pt"))
        np.save(path("tokens.npy"), np.array([[2, 9, 5, 3], [4, 4, 8, 2]], dtype=np.int64))
        out = path("tokens.onnx")
        given = ["--input", "t=" + path("tokens.npy"), "--mode", "script"]
        run("export", path("tokens.pt"), "-o", out, *given)
        r = run("verify", path("tokens.pt"), out, *given, "--samples", "5")
        self.assertIn("verify: ok: 5 input sets", r.stdout)

    def test_a_form_onnx_documents_from_a_later_opset_is_written_with_a_warning(self):
        # scatter_reduce amax/amin: ScatterElements' max/min, documented from opset 18, written at
        # 16-17 as torch.onnx 2.6 writes them; a warning names the opset of the documented form.
        class ScatterMax(torch.nn.Module):
            def forward(self, x, s):
                return x.scatter_reduce(1, torch.tensor([[0, 0, 4]]), s, "amax")

        torch.jit.trace(ScatterMax(), (torch.randn(1, 5), torch.randn(1, 3))).save(path("scatter_max.pt"))
        later = [(18, False)] if onnx.defs.onnx_opset_version() >= 18 else []  # Debian 13's ONNX 1.17
        for opset, warned in [(16, True), (17, True)] + later:
            out = path(f"scatter_max{opset}.onnx")
            r = run("export", path("scatter_max.pt"), "-o", out, "--input", "x:1x5", "--input", "s:1x3",
                    "--opset", str(opset), "--verify")
            self.assertIn("verify: ok", r.stdout)
            node = next(n for n in onnx.load(out).graph.node if n.op_type == "ScatterElements")
            self.assertEqual(onnx.helper.get_attribute_value(node.attribute[-1]), b"max")
            warning = (f"ScatterElements in the form ONNX documents from opset 18 written at opset {opset} as "
                       "torch.onnx 2.6 writes it (1 node, from aten::scatter_reduce by op pack 'tensor'")
            (self.assertIn if warned else self.assertNotIn)(warning if warned else "documents from opset", r.stderr)

    def test_timings_name_every_stage_with_time_and_peak_rss(self):
        r = run("export", path("small.pt"), "-o", path("timed.onnx"), "--input", "x:2x3x6x6", "--timings")
        line = next(l for l in r.stderr.splitlines() if l.startswith("timings:"))
        stages = ["load", "prepare", "resolve", "convert", "prove dynamic axes", "onnx passes", "write", "check"]
        for stage in stages:
            self.assertRegex(line, rf" {stage} \d+\.\d\d s \(peak \d+ MiB\),")
        self.assertEqual([line.index(" " + s + " ") for s in stages], sorted(line.index(" " + s + " ") for s in stages))
        # No progress line when stderr is not a terminal.
        self.assertNotIn("\r", r.stderr)

    def test_scripted_attention_layers_export_in_both_modes_and_never_crash(self):
        # Scripted MultiheadAttention / TransformerEncoderLayer used to kill the process while
        # their graph ran (LowerAllTuples split an uninitialized tuple into a multi-output node),
        # and script mode stopped at the fused fast path.
        torch.manual_seed(3)
        layers = {"mha": (torch.nn.MultiheadAttention(16, 2).eval(), [torch.randn(5, 2, 16) for _ in range(3)]),
                  "tel": (torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0).eval(), [torch.randn(5, 2, 16)])}
        for name, (layer, inputs) in layers.items():
            scripted = torch.jit.script(layer)
            scripted.save(path(f"scripted_{name}.pt"))
            with torch.no_grad():
                out = scripted(*inputs)
            outs = [o for o in (out if isinstance(out, tuple) else (out,)) if isinstance(o, torch.Tensor)]
            save_npy_manifest(f"scripted_{name}", inputs, outs)
            args = [a for k in range(len(inputs)) for a in ("--input", f"input{k}=" + path(f"scripted_{name}.in{k}.npy"))]
            out_file = path(f"scripted_{name}.onnx")
            # Only the required arguments are given: the others take forward()'s defaults.
            run("export", path(f"scripted_{name}.pt"), "-o", out_file, "--mode", "trace", *args)
            ok, log = ort_matches(out_file, f"scripted_{name}")
            self.assertTrue(ok, log)
            # Script mode: the fast-path checks are decided at export, no If of them is left.
            script_file = path(f"scripted_{name}.script.onnx")
            run("export", path(f"scripted_{name}.pt"), "-o", script_file, "--mode", "script", *args)
            ok, log = ort_matches(script_file, f"scripted_{name}")
            self.assertTrue(ok, log)
            self.assertNotIn("If", [n.op_type for n in onnx.load(script_file).graph.node])

    def test_list_of_run_time_length_is_a_sequence_output(self):
        # A scripted model returning a list built in a loop: the ONNX output is a sequence.
        # onnxruntime-node cannot return sequences, so the test appends ConcatFromSequence to
        # turn it into one tensor and compares that with torch.stack of the list.
        class Rows(torch.nn.Module):
            def forward(self, x):
                out: List[torch.Tensor] = []
                for i in range(x.size(0)):
                    out.append(x[i] * float(i + 1))
                return out

        x = torch.randn(3, 4)
        torch.jit.script(Rows()).save(path("rows.pt"))
        out = path("rows.onnx")
        run("export", path("rows.pt"), "-o", out, "--mode", "script", "--input", "x:3x4", "--dynamic-axes", "x:0=n")
        model = onnx.load(out)
        (seq,) = model.graph.output
        self.assertEqual(seq.type.sequence_type.elem_type.tensor_type.elem_type, onnx.TensorProto.FLOAT)
        model.graph.node.append(onnx.helper.make_node("ConcatFromSequence", [seq.name], ["stacked"], axis=0,
                                                      new_axis=1))
        model.graph.output.pop()
        model.graph.output.append(onnx.helper.make_tensor_value_info("stacked", onnx.TensorProto.FLOAT, None))
        onnx.save(model, path("rows_stacked.onnx"))
        for k, rows in enumerate((torch.randn(3, 4), torch.randn(5, 4))):
            save_npy_manifest(f"rows{k}", [rows], [torch.stack(Rows()(rows))])
            ok, log = ort_matches(path("rows_stacked.onnx"), f"rows{k}")
            self.assertTrue(ok, log)

    def test_torchvision_ops_load_without_load_op_library(self):
        # A scripted model calling torchvision::nms: torchvision's op library (python3-torchvision)
        # is found and loaded when the model needs it.
        import torchvision

        class Nms(torch.nn.Module):
            def forward(self, boxes, scores):
                return torchvision.ops.nms(boxes, scores, 0.5)

        torch.manual_seed(4)
        corners = torch.rand(8, 2) * 10
        boxes, scores = torch.cat([corners, corners + torch.rand(8, 2) * 5 + 1], 1), torch.rand(8)
        torch.jit.script(Nms()).save(path("nms.pt"))
        save_npy_manifest("nms", [boxes, scores], [Nms()(boxes, scores)])
        out = path("nms.onnx")
        run("export", path("nms.pt"), "-o", out, "--mode", "script", "--opset", "11",
            "--input", "boxes=" + path("nms.in0.npy"), "--input", "scores=" + path("nms.in1.npy"))
        ok, log = ort_matches(out, "nms")
        self.assertTrue(ok, log)

    def test_complex_input_and_output_are_real_pairs(self):
        # A complex .npy input and a complex output travel as real pairs [..., 2]: the warning and
        # the report say so, ONNX Runtime matches torch.view_as_real, verify compares the pair; an
        # op with no mapping for complex values is refused naming the op, and nothing is written.
        class Rotate(torch.nn.Module):
            def forward(self, z):
                return z * torch.polar(torch.ones_like(z.real), z.imag) + 0.5

        class Sine(torch.nn.Module):
            def forward(self, z):
                return torch.sin(z)

        torch.manual_seed(5)
        z = torch.randn(3, 4, dtype=torch.complex64)
        torch.jit.trace(Rotate(), z).save(path("rotate.pt"))
        torch.jit.trace(Sine(), z).save(path("sine_c.pt"))
        np.save(path("z.npy"), z.numpy())
        save_npy_manifest("rotate", [torch.view_as_real(z)], [torch.view_as_real(Rotate()(z))])
        out, report = path("rotate.onnx"), path("rotate.report.json")
        r = run("export", path("rotate.pt"), "-o", out, "--input", "z=" + path("z.npy"), "--report", report)
        self.assertIn("input 'z' is complex: the ONNX input is float32[3,4,2]", r.stderr)
        self.assertIn("output 'output_0' is complex: written as float32[3,4,2]", r.stderr)
        with open(report) as f:
            self.assertTrue(any("is complex" in w for w in json.load(f)["warnings"]))
        ok, log = ort_matches(out, "rotate")
        self.assertTrue(ok, log)
        v = run("verify", path("rotate.pt"), out, "--input", "z=" + path("z.npy"))
        self.assertIn("verify: ok", v.stdout + v.stderr)
        bad = path("sine_c.onnx")
        r = run("export", path("sine_c.pt"), "-o", bad, "--input", "z=" + path("z.npy"), ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("aten::sin on complex values has no mapping at opset 17", r.stderr)
        self.assertFalse(os.path.exists(bad))

    def test_value_none_on_one_path_runs_both_paths(self):
        # Emformer's padding mask: None for a batch of one, a mask otherwise, decided at run time
        # with a dynamic batch. The exported file takes the None path at batch 1 and the mask path
        # at batch 3 as torch does. A reader other than a None test or a guarded use is refused.
        class PaddingMask(torch.nn.Module):
            def forward(self, x):
                mask = None if x.size(0) == 1 else x > 0
                if mask is not None:
                    x = x.masked_fill(mask, -1.0)
                return x * 2.0, torch.tensor(mask is None)

        class OptionalWeight(torch.nn.Module):
            def forward(self, x):
                w = None if x.size(0) == 1 else x[0]
                return torch.nn.functional.layer_norm(x, [4], w)

        torch.jit.script(PaddingMask()).save(path("padmask.pt"))
        out = path("padmask.onnx")
        run("export", path("padmask.pt"), "-o", out, "--mode", "script", "--input", "x:2x4", "--dynamic-axes",
            "x:0=batch")
        torch.manual_seed(6)
        self.assert_runs_like_torch(out, "padmask", PaddingMask(), (torch.randn(1, 4), torch.randn(3, 4)))
        torch.jit.script(OptionalWeight()).save(path("optweight.pt"))
        bad = path("optweight.onnx")
        r = run("export", path("optweight.pt"), "-o", bad, "--mode", "script", "--input", "x:2x4", "--dynamic-axes",
                "x:0=batch", ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("aten::layer_norm reads 'w', a value that is None on some paths", r.stderr)
        self.assertFalse(os.path.exists(bad))

    def test_trace_of_scripted_model_keeps_tensors_made_from_lists(self):
        # A list built in a loop, made a tensor with torch.tensor/as_tensor: libtorch fills it by a
        # copy its tracer does not see, so a trace (the mode auto picks here: the loop depends on a
        # static size only) used to record an empty tensor (zeros in the file).
        class ListToTensor(torch.nn.Module):
            def forward(self, x):
                counts: List[int] = []
                for i in range(x.size(0)):
                    counts.append(i * 3 + 2)
                return x.sum(1) + torch.tensor(counts, dtype=torch.float32), torch.as_tensor(counts)

        torch.jit.script(ListToTensor()).save(path("list2tensor.pt"))
        x = torch.randn(4, 3)
        save_npy_manifest("list2tensor", [x], list(ListToTensor()(x)))
        for mode in ("auto", "trace", "script"):
            out = path(f"list2tensor_{mode}.onnx")
            r = run("export", path("list2tensor.pt"), "-o", out, "--mode", mode, "--input",
                    "x=" + path("list2tensor.in0.npy"), "--opset", "13", "--verbose")
            self.assertIn("script" if mode == "script" else "trace", r.stdout.splitlines()[0])
            ok, log = ort_matches(out, "list2tensor")
            self.assertTrue(ok, f"--mode {mode}: {log}")

    def test_model_without_arguments_needs_no_inputs(self):
        # forward() takes nothing: no --input is needed and the file has no graph inputs; a
        # forward that takes an argument still asks for one.
        class NoArguments(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("table", torch.arange(6.0).reshape(2, 3))

            def forward(self):
                return self.table * 2.0 + torch.ones(2, 1)

        torch.jit.script(NoArguments()).save(path("noargs.pt"))
        out = path("noargs.onnx")
        run("export", path("noargs.pt"), "-o", out)
        self.assertEqual(len(onnx.load(out).graph.input), 0)
        save_npy_manifest("noargs", [], [NoArguments()()])
        ok, log = ort_matches(out, "noargs")
        self.assertTrue(ok, log)
        needs = path("needs_input.onnx")
        r = run("export", path("small.pt"), "-o", needs, ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no --input for argument 'x' of forward (x: Tensor)", r.stderr)
        self.assertIn("give it as --input x:SHAPE[:DTYPE] or x=FILE.npy", r.stderr)
        self.assertFalse(os.path.exists(needs))

    def test_auto_mode_keeps_sizes_of_dynamic_axes_past_control_flow(self):
        # A loop on constants makes auto mode trace the scripted graph, and libtorch's tracer keeps
        # x.size(0) as the example's number: with x's axis 0 dynamic the slice end was baked in
        # (output [2, 6] at every size, the input dropped). Auto mode now keeps the graph scripted.
        class MaskBySize(torch.nn.Module):
            def forward(self, x):
                mask = torch.zeros(2, 64)
                for i in range(64):
                    mask = mask * 0.5
                    mask[i % 2, i] = float(i)
                return mask[:, : x.size(0)] + x.sum()

        torch.jit.script(MaskBySize()).save(path("masksize.pt"))
        out = path("masksize.onnx")
        r = run("export", path("masksize.pt"), "-o", out, "--mode", "auto", "--input", "x:6x2", "--dynamic-axes",
                "x:0=n", "--verbose")
        self.assertIn("auto chose script: aten::size", r.stdout)
        torch.manual_seed(4)
        self.assert_runs_like_torch(out, "masksize", MaskBySize(), (torch.randn(6, 2), torch.randn(9, 2)))
        # --mode trace bakes the size in: the proof re-runs the model as given and refuses.
        traced = path("masksize_traced.onnx")
        r = run("export", path("masksize.pt"), "-o", traced, "--mode", "trace", "--input", "x:6x2", "--dynamic-axes",
                "x:0=n", ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("the traced graph fixes dim 1 of output 'output_0' to 6", r.stderr)
        self.assertFalse(os.path.exists(traced))

    def test_a_trace_that_returns_a_tensor_where_a_resized_run_returns_none_is_refused(self):
        # The loop runs x.size(0) times and ends in None after a second pass: the trace at size 1
        # returns y * 2 at every size. The proof's re-run at size 2 returns None: refused, no file.
        class NoneAfterTwo(torch.nn.Module):
            def forward(self, x) -> Optional[torch.Tensor]:
                y: Optional[torch.Tensor] = x
                for i in range(x.size(0)):
                    z: Optional[torch.Tensor] = None
                    if y is not None and i == 0:
                        z = y * 2
                    y = z
                return y

        torch.jit.script(NoneAfterTwo()).save(path("none_after_two.pt"))
        traced = path("none_after_two_traced.onnx")
        r = run("export", path("none_after_two.pt"), "-o", traced, "--mode", "trace", "--input", "x:1",
                "--dynamic-axes", "x:0=n", "--opset", "17", ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("the traced graph gives a tensor as output 'output_0', but with the dynamic axes resized (x 1 -> 2) "
                      "the model returns None there", r.stderr)
        self.assertFalse(os.path.exists(traced))
        # Scripted, the output is an ONNX optional: None at size 2, y * 2 at size 1.
        scripted = path("none_after_two.onnx")
        run("export", path("none_after_two.pt"), "-o", scripted, "--mode", "script", "--input", "x:1",
            "--dynamic-axes", "x:0=n", "--opset", "17")
        self.assertTrue(onnx.load(scripted).graph.output[0].type.HasField("optional_type"))
        self.assertIn("None (an optional holding nothing)", run("run", scripted, "--input", "x:2").stdout)
        self.assertIn("float32[1]", run("run", scripted, "--input", "x:1").stdout)

    def test_default_dtype_is_the_one_given(self):
        # An integer true division and a factory given no dtype make torch's default dtype, which
        # a .pt does not record: with --default-dtype float64 the file computes what a process
        # with torch.set_default_dtype(torch.float64) computes, in float64; without it, float32.
        class IntDivision(torch.nn.Module):
            def forward(self, a, b):
                return a / b, torch.ones(2) * b.sum()

        torch.jit.script(IntDivision()).save(path("int_division.pt"))
        a, b = torch.tensor([7, -3, 10]), torch.tensor([2, 4, 3])
        save_npy_manifest("int_division_inputs", [a, b], [])
        given = ["--input", "a=" + path("int_division_inputs.in0.npy"), "--input",
                 "b=" + path("int_division_inputs.in1.npy")]
        before = torch.get_default_dtype()
        for dtype, flags in ((torch.float64, ["--default-dtype", "float64"]), (torch.float32, [])):
            name = f"int_division_{dtype}".replace("torch.", "")
            out = path(f"{name}.onnx")
            run("export", path("int_division.pt"), "-o", out, "--mode", "script", *given, *flags)
            element_type = onnx.TensorProto.DOUBLE if dtype == torch.float64 else onnx.TensorProto.FLOAT
            self.assertEqual([o.type.tensor_type.elem_type for o in onnx.load(out).graph.output], [element_type] * 2)
            torch.set_default_dtype(dtype)
            try:
                expected = IntDivision()(a, b)
            finally:
                torch.set_default_dtype(before)
            self.assertEqual(expected[0].dtype, dtype)
            save_npy_manifest(name, [a, b], list(expected))
            ok, log = ort_matches(out, name)
            self.assertTrue(ok, log)
            r = run("verify", path("int_division.pt"), out, *given, "--mode", "script", *flags)
            self.assertIn("verify: ok:", r.stdout)
            self.assertIn(str(dtype).replace("torch.", ""), r.stdout)  # libtorch's outputs had the dtype too
        self.assertEqual(torch.get_default_dtype(), before)
        r = run("export", path("int_division.pt"), "-o", path("bad_dtype.onnx"), *given, "--default-dtype", "half",
                ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("default_dtype must be float32 or float64, got 'half'", r.stderr)
        self.assertFalse(os.path.exists(path("bad_dtype.onnx")))

    def test_assignment_into_a_slice_of_dynamic_size(self):
        # x[:, n:] = v traces as copy_ of v expanded to the slice's sizes at trace time: with
        # dynamic axes the slice grows and shrinks, so v must be broadcast to it at run time
        # (the export wrote indices past the end at the second size: ScatterElements failed).
        class WriteTail(torch.nn.Module):
            def forward(self, x):
                x = x * 1.0
                x[:, x.size(0):] = torch.tensor([1.0, 2.0, 3.0])
                return x

        torch.jit.trace(WriteTail(), (torch.ones(2, 5, 3),)).save(path("writetail.pt"))
        out = path("writetail.onnx")
        run("export", path("writetail.pt"), "-o", out, "--input", "x:2x5x3", "--dynamic-axes", "x:0=a,1=b")
        torch.manual_seed(5)
        self.assert_runs_like_torch(out, "writetail", WriteTail(),
                                    (torch.randn(2, 5, 3), torch.randn(3, 4, 3), torch.randn(1, 6, 3)))

    def test_unwritable_output_leaves_nothing(self):
        out = path("no_such_dir", "m.onnx")
        r = run("export", path("small.pt"), "-o", out, "--input", "x:2x3x6x6", ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"'{os.path.dirname(out)}', which does not exist", r.stderr)
        self.assertFalse(os.path.exists(os.path.dirname(out)))

    # -- op packs -----------------------------------------------------------------------------
    def test_third_party_pack_from_plugin_dir_is_used(self):
        out = path("hard.onnx")
        run("export", path("hard.pt"), "-o", out, "--input", "x=" + path("hard.in0.npy"), "--plugin-dir", PACKS)
        m = onnx.load(out)
        ops = [n.op_type for n in m.graph.node]
        self.assertIn("Clip", ops)        # the pack's override of aten::relu won
        self.assertNotIn("Relu", ops)
        self.assertIn("LogGamma", ops)    # custom-domain mapping
        self.assertEqual({i.domain: i.version for i in m.opset_import}["com.example"], 3)
        out2 = path("hard5.onnx")
        run("export", path("hard.pt"), "-o", out2, "--input", "x:3x4", "--plugin-dir", PACKS,
            "--custom-opset", "com.example=5")
        self.assertEqual({i.domain: i.version for i in onnx.load(out2).opset_import}["com.example"], 5)
        # The pack's LogGamma schema types the output through its inference callback; the trace
        # alone would leave a dynamic axis' dims unknown.
        out3 = path("hard_dynamic.onnx")
        run("export", path("hard.pt"), "-o", out3, "--input", "x:3x4", "--plugin-dir", PACKS,
            "--dynamic-axes", "x:0=rows")
        y = onnx.load(out3).graph.output[0].type.tensor_type
        self.assertEqual((y.elem_type, [d.dim_param or d.dim_value for d in y.shape.dim]),
                         (onnx.TensorProto.FLOAT, ["rows", 4]))

    def test_pack_emits_control_flow_through_subgraph_attributes(self):
        # third_party overrides aten::abs with an If whose branches it builds as sub-graphs.
        for name, x in (("abs_mixed", torch.randn(2, 3)), ("abs_positive", torch.rand(2, 3) + 0.5)):
            torch.jit.trace(Wrapper(torch.abs), x).save(path(f"{name}.pt"))
            save_npy_manifest(name, [x], [Wrapper(torch.abs)(x)])
            out = path(f"{name}.onnx")
            run("export", path(f"{name}.pt"), "-o", out, "--input", "x=" + path(f"{name}.in0.npy"),
                "--plugin-dir", PACKS)
            branch = [n for n in onnx.load(out).graph.node if n.op_type == "If"]
            self.assertEqual(len(branch), 1)
            sub_ops = {a.name: [n.op_type for n in a.g.node] for a in branch[0].attribute}
            self.assertEqual(sub_ops, {"then_branch": ["Identity"], "else_branch": ["Abs"]})
            ok, log = ort_matches(out, name)
            self.assertTrue(ok, log)

    def test_override_is_visible_in_ops_listing(self):
        rows = json.loads(run("ops", "--json", "--plugin-dir", PACKS).stdout)
        relu = [r for r in rows if r["op"] == "aten::relu" and r["pack"] == "third_party"]
        self.assertEqual(len(relu), 1)
        self.assertTrue(relu[0]["override"])
        self.assertIn("elementwise", relu[0].get("overrides", []))

    def test_ops_json_lists_every_mapping_with_its_pack(self):
        rows = json.loads(run("ops", "--json").stdout)
        self.assertGreater(len(rows), 100)
        for r in rows:
            self.assertTrue({"op", "since_opset", "pack"} <= set(r))
        packs = {r["pack"] for r in rows}
        self.assertTrue({"nn", "elementwise", "tensor", "prim", "rnn"} <= packs)
        lstm = [r for r in rows if r["op"] == "aten::lstm"]
        self.assertEqual(lstm[0]["pack"], "rnn")

    def test_plugins_lists_builtin_packs_and_refuses_api_mismatch(self):
        rows = json.loads(run("plugins", "--json", "--plugin-dir", BAD_PACKS).stdout)
        loaded = {r["id"] for r in rows if r["status"] == "loaded"}
        self.assertTrue({"nn", "elementwise", "tensor", "prim", "rnn"} <= loaded)
        nn = next(r for r in rows if r["id"] == "nn")
        self.assertEqual((nn["evaluators"], nn["schemas"]), ([], []))  # ATen mappings only
        bad = [r for r in rows if r["file"].endswith("libcli_api_mismatch.so")]
        self.assertEqual(len(bad), 1)
        self.assertEqual(bad[0]["status"], "failed")
        self.assertIn("libcli_api_mismatch.so", bad[0]["error"])
        self.assertIn("SDK API version 99", bad[0]["error"])
        self.assertIn("expects 2", bad[0]["error"])
        # A broken pack in a directory given with --plugin-dir fails the export, naming the pack,
        # before any work; found through ONNXPORT_PLUGIN_PATH it is reported and skipped.
        r = run("export", path("small.pt"), "-o", path("withbad.onnx"), "--input", "x:2x3x6x6",
                "--plugin-dir", BAD_PACKS, ok=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("libcli_api_mismatch.so: SDK API version 99", r.stderr)
        self.assertFalse(os.path.exists(path("withbad.onnx")))
        env = dict(os.environ, ONNXPORT_PLUGIN_PATH=BAD_PACKS)
        r = subprocess.run([CLI, "export", path("small.pt"), "-o", path("withbad.onnx"), "--input", "x:2x3x6x6"],
                           capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("op pack skipped", r.stderr)

    def test_plugin_path_environment_variable(self):
        env = dict(os.environ, ONNXPORT_PLUGIN_PATH=PACKS)
        r = subprocess.run([CLI, "plugins", "--json"], capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("third_party", {x["id"] for x in json.loads(r.stdout)})

    # -- misbehaving symbolics: clear errors, no crash, no output ------------------------------
    def misbehave(self, op):
        out = path(f"misbehaving_{op}.onnx")
        r = run("export", path(f"uses_{op}.pt"), "-o", out, "--input", "x:2x3", "--plugin-dir", MISBEHAVING, ok=False)
        self.assertEqual(r.returncode, 1, r.stderr)  # an onnxport error, not a crash (2) or signal
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("misbehaving", r.stderr)          # the pack
        self.assertIn(f"aten::{op}", r.stderr)          # the torch op
        self.assertIn("module encoder.1", r.stderr)     # the module path
        self.assertRegex(r.stderr, r"at \S+\.py:\d+")  # the source line of the model's code
        self.assertIn(f"uses_{op}.pt", r.stderr)        # the model file
        self.assertNoLeftovers(out)
        return r.stderr

    def test_symbolic_that_throws(self):
        self.assertIn("tanh kernel table is empty", self.misbehave("tanh"))

    def test_symbolic_returning_wrong_number_of_outputs(self):
        self.assertIn("returned 2 values for 1 outputs", self.misbehave("sigmoid"))

    def test_symbolic_emitting_undeclared_domain(self):
        err = self.misbehave("neg")
        self.assertIn("custom domain 'com.undeclared' that no op pack declared", err)

    def test_write_through_a_view_without_its_scatter_names_the_source_line(self):
        # Writing back through a slice needs aten::slice_scatter (ScatterND, opset 11): below it the
        # error names the view's op, its source line (looked up only now, for the message) and the fix.
        class SliceWrite(torch.nn.Module):
            def forward(self, x):
                y = x.clone()
                y[:, 1:3] = 0.0
                return y

        torch.jit.script(SliceWrite()).save(path("slice_write.pt"))
        out = path("slice_write.onnx")
        r = run("export", path("slice_write.pt"), "-o", out, "--mode", "script", "--input", "x:2x4", "--opset", "10",
                ok=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("aten::slice_scatter has no mapping at opset 10 (needed to write back through aten::slice)",
                      r.stderr)
        self.assertRegex(r.stderr, r"at \S+test_cli\.py:\d+")
        self.assertIn("slice_write.pt", r.stderr)
        self.assertIn("raise --opset", r.stderr)
        self.assertNoLeftovers(out)
        run("export", path("slice_write.pt"), "-o", out, "--mode", "script", "--input", "x:2x4", "--opset", "11")
        x = torch.randn(2, 4)
        save_npy_manifest("slice_write", [x], [SliceWrite()(x)])
        ok, log = ort_matches(out, "slice_write")
        self.assertTrue(ok, log)

    def test_symbolic_violating_onnx_schema_in_strict_mode(self):
        err = self.misbehave("exp")
        self.assertIn("violates the ONNX schema at opset 17", err)
        self.assertIn("alpha", err)

    def test_symbolic_violating_its_packs_own_schema_in_strict_mode(self):
        err = self.misbehave("abs")
        self.assertIn('g.op("com.misbehaving::Amplify") violates the schema its op pack declared at '
                      'com.misbehaving version 1', err)
        self.assertIn("Unrecognized attribute: gain", err)
        # Without strict mode the node gets built, but the final ONNX checker knows the schema too.
        out = path("misbehaving_abs_lenient.onnx")
        args = ("export", path("uses_abs.pt"), "-o", out, "--input", "x:2x3", "--plugin-dir", MISBEHAVING, "--no-strict")
        r = run(*args, ok=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("ONNX checker rejects", r.stderr)
        self.assertIn("Unrecognized attribute: gain", r.stderr)
        self.assertNoLeftovers(out)
        run(*args, "--no-check")
        amplify = [n for n in onnx.load(out).graph.node if n.op_type == "Amplify"]
        self.assertEqual([(n.domain, [a.name for a in n.attribute]) for n in amplify], [("com.misbehaving", ["gain"])])

    def test_symbolic_with_mismatched_attribute_suffix(self):
        err = self.misbehave("leaky_relu")
        self.assertIn("attribute 'alpha_i': suffix _i wants an int or int list, got a float", err)

    # -- inspect / check ----------------------------------------------------------------------
    def test_inspect_and_check(self):
        out = path("small.13.onnx")
        if not os.path.exists(out):
            run("export", path("small.pt"), "-o", out, "--input", "x:2x3x6x6", "--opset", "13")
        r = run("inspect", out)
        self.assertIn("Conv", r.stdout)
        self.assertIn("features.0.weight", r.stdout)
        r = run("check", out)
        self.assertIn("ok:", r.stdout)
        broken = path("broken.onnx")
        with open(broken, "wb") as fh:
            fh.write(b"\x08\x07garbage")
        r = run("check", broken, ok=False)
        self.assertNotEqual(r.returncode, 0)


if __name__ == "__main__":
    unittest.main()
