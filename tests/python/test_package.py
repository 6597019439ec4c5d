#!/usr/bin/python3
"""The Python package (python/onnxport): torch.onnx.export's signature on onnxport's exporter.

Environment: ONNXPORT_PYTHONPATH (the build tree's python/ directory), ONNXPORT (the CLI, for
comparisons), ONNXPORT_ORT_COMPARE (tests/integration/ort_compare.js), ONNXPORT_TEST_TMP (scratch),
and for the model test ONNXPORT_FIXTURES (fixture directories holding <name>.json manifests,
separated by ':').

  PackageApiTest: arguments as torch.onnx takes them, file objects, ScriptFunctions, errors,
                  ops()/plugins(), reports;
  PackageModelsTest: every fixture model exported in this one process matches the CLI's file
                  byte for byte and PyTorch in ONNX Runtime.
"""
import copy
import glob
import io
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import unittest
import warnings
from typing import Optional, Tuple

sys.path.insert(0, os.environ["ONNXPORT_PYTHONPATH"])

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnx.numpy_helper  # noqa: E402
import torch  # noqa: E402

import onnxport  # noqa: E402

CLI = os.environ["ONNXPORT"]
ORT_COMPARE = os.environ["ONNXPORT_ORT_COMPARE"]
TMP = os.environ["ONNXPORT_TEST_TMP"]


def path(*names):
    return os.path.join(TMP, *names)


def cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True)


def save_manifest(name, inputs, outputs):
    """Inputs and PyTorch's outputs as .npy files and a manifest ort_compare.js reads."""
    entries = []
    for k, t in enumerate(inputs):
        np.save(path(f"{name}.in{k}.npy"), t.numpy())
        entries.append({"name": f"input{k}", "file": f"{name}.in{k}.npy", "shape": list(t.shape),
                        "dtype": str(t.numpy().dtype)})
    outs = []
    for k, t in enumerate(outputs):
        np.save(path(f"{name}.out{k}.npy"), t.detach().numpy())
        outs.append({"file": f"{name}.out{k}.npy"})
    manifest = path(f"{name}.json")
    with open(manifest, "w") as fh:
        json.dump({"model": f"{name}.pt", "inputs": entries, "outputs": outs}, fh)
    return manifest


def ort_matches(onnx_file, manifest):
    r = subprocess.run(["node", ORT_COMPARE, onnx_file, manifest], capture_output=True, text=True)
    return r.returncode == 0, r.stdout + r.stderr


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x, scale: float = 1.0, bias: Optional[torch.Tensor] = None):
        y = self.drop(torch.relu(self.bn(self.conv(x)))) * scale
        return y if bias is None else y + bias


# An op that counts the runs of a model's graph: onnxport_counting::count(x) is x, in PyTorch and in
# ONNX (Identity).
COUNTING = torch.library.Library("onnxport_counting", "DEF")
COUNTING.define("count(Tensor x) -> Tensor")
COUNT_CALLS = [0]


THREADS_SEEN = []  # torch.get_num_threads() at each run of onnxport_counting::count


def _count(x):
    COUNT_CALLS[0] += 1
    THREADS_SEEN.append(torch.get_num_threads())
    return x.clone()


COUNTING.impl("count", _count, "CPU")


class Counted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        return torch.ops.onnxport_counting.count(self.block(x)) + 1


@torch.jit.script
def branchy(x: torch.Tensor) -> torch.Tensor:
    if bool(x.sum() > 0):
        return x * 2
    return -x


# Values None on some paths, returned: ONNX optionals from opset 16 (PyTorch's test_optional_output).
class IfNoneOutput(torch.nn.Module):
    def forward(self, x) -> Optional[torch.Tensor]:
        y: Optional[torch.Tensor] = x
        if x.size(0) > 1:
            y = None
        return y


class LoopNoneInput(torch.nn.Module):
    def forward(self, x) -> Optional[torch.Tensor]:
        y: Optional[torch.Tensor] = None
        for _ in range(x.size(0)):
            y = x * 2
        return y


class LoopNoneOutput(torch.nn.Module):
    def forward(self, x) -> Optional[torch.Tensor]:
        y: Optional[torch.Tensor] = x
        for _ in range(x.size(0)):
            y = None
        return y


class LoopReadsOptional(torch.nn.Module):
    def forward(self, x) -> Optional[torch.Tensor]:
        y: Optional[torch.Tensor] = x
        for i in range(x.size(0)):
            z: Optional[torch.Tensor] = None
            if y is not None and i == 0:  # reads the carried optional
                z = y * 2
            y = z
        return y


class PackageApiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        shutil.rmtree(TMP, ignore_errors=True)
        os.makedirs(TMP)
        torch.manual_seed(0)

    def test_state_io_makes_a_scripted_modules_state_inputs_and_outputs(self):
        class Counter(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("total", torch.ones(3))

            def forward(self, x):
                self.total = self.total + x
                return self.total * 2.0

        module = torch.jit.script(Counter())
        onnx_file = path("state_io.onnx")
        onnxport.export(module, (torch.zeros(3),), onnx_file, state_io=True, input_names=["x"])
        graph = onnx.load(onnx_file).graph
        self.assertEqual([i.name for i in graph.input], ["x", "total"])
        self.assertEqual([o.name for o in graph.output], ["output_0", "total_out"])
        # Two calls in ONNX Runtime, the second fed the state the first returned, as the module does.
        state = module.total.clone()
        for step in range(2):
            x = torch.randn(3)
            with torch.no_grad():
                y = module(x)
            ok, log = ort_matches(onnx_file, save_manifest(f"state_io{step}", [x, state], [y, module.total]))
            self.assertTrue(ok, log)
            state = module.total.clone()

    def test_an_nn_module_with_keyword_args_dynamic_axes_and_names_matches_pytorch(self):
        block = Block()
        block.train()  # export in eval mode (the default) and give the module back in train mode
        x, bias = torch.randn(2, 3, 8, 8), torch.randn(1, 4, 1, 1)
        out = path("block.onnx")
        report = onnxport.export(block, (x, {"bias": bias}), out, input_names=["image", "scale", "bias"],
                                 output_names=["features"], dynamic_axes={"image": {0: "batch"}})
        self.assertTrue(block.training, "the module's mode must be restored")
        self.assertEqual(report["status"], "ok")
        g = onnx.load(out).graph
        # As in torch.onnx, the number `scale` (forward's default, filled in) is an input: a 0-d double.
        self.assertEqual([i.name for i in g.input], ["image", "scale", "bias"])
        self.assertEqual(g.input[1].type.tensor_type.elem_type, onnx.TensorProto.DOUBLE)
        self.assertEqual(g.input[0].type.tensor_type.shape.dim[0].dim_param, "batch")
        self.assertEqual([o.name for o in g.output], ["features"])
        self.assertNotIn("Dropout", [n.op_type for n in g.node])
        self.assertNotIn("BatchNormalization", [n.op_type for n in g.node])  # fused in eval mode
        block.eval()
        x3 = torch.randn(3, 3, 8, 8)  # another batch size: the axis is dynamic
        scale = torch.tensor(1.0, dtype=torch.float64)
        ok, log = ort_matches(out, save_manifest("block", [x3, scale, bias], [block(x3, 1.0, bias)]))
        self.assertTrue(ok, log)

    def test_left_out_arguments_and_scripted_optionals_are_inputs_as_in_torch_onnx(self):
        # torch.onnx fills the arguments left out with forward's defaults (a number, a tensor: an
        # input holding it) and keeps a scripted forward's Optional inputs even where the test on
        # another decides nothing reads them: the same inputs here, in the same order.
        class Defaults(torch.nn.Module):
            def forward(self, x, y: Optional[torch.Tensor] = torch.ones(2, 3),
                        z: Optional[torch.Tensor] = torch.zeros(2, 3), scale: float = 2.0):
                if y is not None:
                    return (x + y) * scale
                if z is not None:
                    return x + z
                return x

        x, y = torch.randn(2, 3), torch.randn(2, 3)
        for name, model in (("defaults_traced", Defaults()), ("defaults_scripted", torch.jit.script(Defaults()))):
            for args in ((x,), (x, {"y": y}), (x, y)):
                out = path(f"{name}.onnx")
                onnxport.export(model, args, out, opset_version=17)
                reference = io.BytesIO()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    torch.onnx.export(model, args, reference, opset_version=17)
                ours = onnx.load(out).graph.input
                theirs = onnx.load_from_string(reference.getvalue()).graph.input
                elem_type = lambda i: (i.type.tensor_type.elem_type or
                                       i.type.optional_type.elem_type.tensor_type.elem_type)
                self.assertEqual([elem_type(i) for i in ours], [elem_type(i) for i in theirs], f"{name} {args!r}")
                # An Optional input nothing reads is optional-typed, as torch.onnx types it (PyTorch
                # 2.6's tests then leave it out of ONNX Runtime's feed); one that is read is a tensor.
                if name == "defaults_scripted":
                    self.assertEqual([i.type.WhichOneof("value") for i in ours],
                                     ["tensor_type", "tensor_type", "optional_type", "tensor_type"], f"{args!r}")
                given = y if len(args) > 1 else torch.ones(2, 3)
                arguments = [x, given, torch.zeros(2, 3), torch.tensor(2.0, dtype=torch.float64)]
                fed = [arguments[int(i.name[len("input_"):])] for i in ours]  # a trace drops z
                ok, log = ort_matches(out, save_manifest(name, fed, [(x + given) * 2.0]))
                self.assertTrue(ok, log)

    def test_dynamic_axes_an_lstms_state_does_not_follow_are_unproven_not_a_crash(self):
        # The check of dynamic axes grows x's batch while the state keeps the example's: libtorch
        # 2.6's oneDNN LSTM corrupted the heap there (PyTorch 2.6's test_symbolic_shape_inference_time).
        torch.manual_seed(0)
        lstm = torch.nn.LSTM(3, 4, 1)
        x, h0, c0 = torch.randn(11, 5, 3), torch.randn(1, 5, 4), torch.randn(1, 5, 4)
        out = path("lstm_state.onnx")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            onnxport.export(lstm, (x, (h0, c0)), out, input_names=["x", "h0", "c0"], dynamic_axes={"x": [0, 1]})
        self.assertTrue(any("the dynamic axes are not proven" in str(w.message) and "x 11x5x3 -> 12x6x3" in str(w.message)
                            for w in caught), [str(w.message) for w in caught])
        # Without oneDNN: libtorch 2.6's oneDNN LSTM computes this 0.25 off the float64 run on some
        # AMD EPYC machines (its native kernel 9e-8), which would blame a correct file.
        with torch.no_grad(), torch.backends.mkldnn.flags(enabled=False):
            y, (h, c) = lstm(x, (h0, c0))
        ok, log = ort_matches(out, save_manifest("lstm_state", [x, h0, c0], [y, h, c]))
        self.assertTrue(ok, log)

    @unittest.skipUnless(hasattr(torch, "export"), "torch.export arrived in PyTorch 2 (the Debian 13 build)")
    def test_an_exported_program_is_exported_as_it_is_with_its_symbolic_dims(self):
        torch.manual_seed(3)
        block = Block().eval()
        x, bias = torch.randn(2, 3, 8, 8), torch.randn(1, 4, 1, 1)
        batch = torch.export.Dim("batch", min=1, max=64)
        program = torch.export.export(block, (x,), {"bias": bias}, dynamic_shapes={"x": {0: batch}, "bias": None})
        out = path("program.onnx")
        report = onnxport.export(program, (), out)
        self.assertEqual(report["status"], "ok")
        self.assertEqual(report["mode"], "program")
        g = onnx.load(out).graph
        self.assertEqual([i.name for i in g.input], ["x", "bias"])  # the program's own names
        self.assertTrue(g.input[0].type.tensor_type.shape.dim[0].dim_param)  # its symbolic batch
        x3 = torch.randn(3, 3, 8, 8)
        with torch.no_grad():
            expected = block(x3, 1.0, bias)
        ok, log = ort_matches(out, save_manifest("program", [x3, bias], [expected]))
        self.assertTrue(ok, log)
        with self.assertRaises(onnxport.ExportError):
            onnxport.export(program, ([1, 2],), path("bad.onnx"))

    def test_pytorch_2_keywords_do_what_torch_onnx_2_does_without_dynamo(self):
        block = Block().eval()
        x, bias = torch.randn(2, 3, 8, 8), torch.randn(1, 4, 1, 1)
        # kwargs= is the trailing dict of args; artifacts_dir changes nothing, external_data=False
        # (torch's default is True, for its dynamo path) keeps the initializers in the file.
        onnxport.export(block, (x,), path("kwargs.onnx"), kwargs={"bias": bias}, input_names=["image", "scale", "bias"],
                        external_data=False, artifacts_dir=path("unused"), dynamo=False, report=False)
        onnxport.export(block, (x, {"bias": bias}), path("dict.onnx"), input_names=["image", "scale", "bias"])
        with open(path("kwargs.onnx"), "rb") as a, open(path("dict.onnx"), "rb") as b:
            self.assertEqual(a.read(), b.read())
        self.assertFalse(os.path.exists(path("unused")))
        self.assertFalse(os.path.exists(path("kwargs.onnx.data")))
        # external_data=True writes them beside the model, as the dynamo path does.
        onnxport.export(block, (x, {"bias": bias}), path("external.onnx"), external_data=True)
        self.assertTrue(os.path.exists(path("external.onnx.data")))
        ok, log = ort_matches(path("external.onnx"), save_manifest(
            "external", [x, torch.tensor(1.0, dtype=torch.float64), bias], [block(x, 1.0, bias)]))
        self.assertTrue(ok, log)
        ok, log = ort_matches(path("kwargs.onnx"), save_manifest(
            "kwargs", [x, torch.tensor(1.0, dtype=torch.float64), bias], [block(x, 1.0, bias)]))
        self.assertTrue(ok, log)
        # What only the dynamo path does is refused in one line, and nothing is written.
        for keyword, value, fragment in [("dynamo", True, "exports through torch.export"),
                                         ("dynamic_shapes", {"x": {0: "batch"}}, "give dynamic_axes"),
                                         ("verify", True, "onnxport verify"),
                                         ("report", True, "give report a path"),
                                         ("custom_translation_table", {torch.ops.aten.relu.default: print},
                                          "register_custom_op_symbolic"),
                                         ("fallback", True, "falls back")]:
            with self.subTest(keyword=keyword):
                with self.assertRaises(onnxport.ExportError) as caught:
                    onnxport.export(block, (x, 1.0, bias), path("dynamo.onnx"), **{keyword: value})
                message = str(caught.exception)
                self.assertIn(f"{keyword}=", message)
                self.assertIn(fragment, message)
                self.assertIn("onnxport exports the TorchScript way (dynamo=False)", message)
                self.assertNotIn("\n", message)
                self.assertFalse(os.path.exists(path("dynamo.onnx")))
        with self.assertRaisesRegex(onnxport.ExportError, r"autograd_inlining=False is not supported"):
            onnxport.export(block, (x, 1.0, bias), path("dynamo.onnx"), autograd_inlining=False)

    def test_the_exported_module_keeps_its_tensors_requires_grad_and_training(self):
        # The module traced for the export is frozen in place and shares its tensors with this one:
        # the export must leave them as they were, and the module must still train.
        class Tied(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()
                self.emb = torch.nn.Embedding(10, 4)
                self.head = torch.nn.Linear(4, 10, bias=False)
                self.head.weight = self.emb.weight

            def forward(self, x, ids):
                return self.block(x).mean() + self.head(self.emb(ids)).sum()

        model = Tied().train()
        model.block.conv.weight.requires_grad_(False)  # a frozen layer stays frozen
        before = {k: v.clone() for k, v in model.state_dict().items()}
        grads = {k: p.requires_grad for k, p in model.named_parameters()}
        x, ids = torch.randn(2, 3, 8, 8), torch.tensor([[1, 2, 3]])
        onnxport.export(model, (x, ids), path("tied.onnx"))
        for k, v in model.state_dict().items():
            self.assertTrue(torch.equal(v, before[k]), k)
        self.assertEqual({k: p.requires_grad for k, p in model.named_parameters()}, grads)
        self.assertIs(model.head.weight, model.emb.weight)
        self.assertTrue(model.training)
        model.eval()
        with torch.no_grad():
            ok, log = ort_matches(path("tied.onnx"), save_manifest("tied", [x, ids], [model(x, ids)]))
        self.assertTrue(ok, log)
        model.train()
        model(x, ids).backward()
        self.assertIsNotNone(model.emb.weight.grad)
        self.assertIsNone(model.block.conv.weight.grad)

    def test_linear_weights_are_transposed_in_copies_the_callers_module_never_sees(self):
        # A file the export loads is its own, and its transposes are written over the weights; a
        # module handed over shares its tensors with the caller's, whose weights must stay as
        # they were, in eval mode too, where the transposes fold.
        torch.manual_seed(3)
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 8)).eval()
        before = {k: v.clone() for k, v in model.state_dict().items()}
        x = torch.randn(2, 5, 16)
        onnxport.export(model, (x,), path("linears.onnx"))
        for k, v in model.state_dict().items():
            self.assertTrue(torch.equal(v, before[k]), k)
        with torch.no_grad():
            ok, log = ort_matches(path("linears.onnx"), save_manifest("linears", [x], [model(x)]))
        self.assertTrue(ok, log)

    def test_a_model_traced_for_the_export_runs_once_and_a_given_trace_of_other_sizes_again(self):
        # The trace made for the export records every value's type: no second run is needed. A
        # trace the caller made on other sizes has other types: its graph runs on the given inputs.
        torch.onnx.register_custom_op_symbolic("onnxport_counting::count", lambda g, x: g.op("Identity", x), 9)
        try:
            model = Counted().eval()
            x = torch.randn(2, 3, 8, 8)
            COUNT_CALLS[0] = 0
            onnxport.export(model, (x,), path("counted.onnx"))
            self.assertEqual(COUNT_CALLS[0], 1, "the export should run the model once: its trace")
            with torch.no_grad():
                ok, log = ort_matches(path("counted.onnx"), save_manifest("counted", [x], [model(x)]))
            self.assertTrue(ok, log)

            traced = torch.jit.trace(model, (torch.randn(1, 3, 4, 4),), check_trace=False)
            COUNT_CALLS[0] = 0
            onnxport.export(traced, (x,), path("counted_given.onnx"))
            self.assertEqual(COUNT_CALLS[0], 1, "the given trace should run once, on the given inputs")
            dims = [d.dim_value for d in onnx.load(path("counted_given.onnx")).graph.output[0].type.tensor_type.shape.dim]
            self.assertEqual(dims, [2, 4, 8, 8])
            with torch.no_grad():
                ok, log = ort_matches(path("counted_given.onnx"), save_manifest("counted_given", [x], [model(x)]))
            self.assertTrue(ok, log)
        finally:
            torch.onnx.unregister_custom_op_symbolic("onnxport_counting::count", 9)

    def test_the_model_runs_on_the_threads_option_and_the_process_gets_its_own_back(self):
        # The trace (a run of the op) and the conversion (its symbolic, called from the core's
        # pipeline) see option threads: 1 by default, 0 the process's own; the process keeps its count.
        converted_on = []

        def symbolic(g, x):
            converted_on.append(torch.get_num_threads())
            return g.op("Identity", x)

        torch.onnx.register_custom_op_symbolic("onnxport_counting::count", symbolic, 9)
        before = torch.get_num_threads()
        torch.set_num_threads(2)
        try:
            model, x = Counted().eval(), torch.randn(2, 3, 8, 8)
            for given, expected in [({}, 1), ({"threads": 2}, 2), ({"threads": 0}, 2), ({"threads": 1}, 1)]:
                THREADS_SEEN.clear()
                converted_on.clear()
                onnxport.export(model, (x,), path("threads.onnx"), **given)
                self.assertEqual((THREADS_SEEN, converted_on), ([expected], [expected]), given)
                self.assertEqual(torch.get_num_threads(), 2, given)
            with self.assertRaisesRegex(onnxport.ExportError, "threads -1 is negative"):
                onnxport.export(model, (x,), path("threads_negative.onnx"), threads=-1)
            self.assertEqual(torch.get_num_threads(), 2)
        finally:
            torch.set_num_threads(before)
            torch.onnx.unregister_custom_op_symbolic("onnxport_counting::count", 9)

    def test_provenance_names_the_python_line_each_node_was_traced_from(self):
        # The trace records the innermost Python frame of each op (the forward's own line, or
        # torch's module code for a layer's op), which provenance and error messages name.
        lines, first = inspect.getsourcelines(Block.forward)
        relu_line = first + next(i for i, text in enumerate(lines) if "torch.relu" in text)
        onnxport.export(Block().eval(), (torch.randn(2, 3, 8, 8),), path("provenance.onnx"), provenance=True)
        docs = {n.op_type: n.doc_string for n in onnx.load(path("provenance.onnx")).graph.node}
        file, line = re.search(r" at (\S+):(\d+)$", docs["Relu"]).groups()
        self.assertEqual((os.path.realpath(file), int(line)), (os.path.realpath(__file__), relu_line), docs["Relu"])
        self.assertRegex(docs["Conv"], r"module=conv at \S+/torch/nn/modules/conv\.py:\d+$")

    def test_sizes_fold_to_constants_where_no_axis_is_dynamic(self):
        # A tensor made at a size computed from the input's (a mask): ONNX inference cannot tell
        # its dims, the trace can, and with no dynamic axis every size is fixed, so the size
        # arithmetic folds away. With a dynamic axis it stays and runs at another size.
        class Masked(torch.nn.Module):
            def forward(self, x):
                mask = x.new_zeros(x.shape[0] * 2, x.shape[1])
                mask[: x.shape[0]] = 1.0
                return x.repeat(2, 1) * mask + mask.size(0)

        model, x, other = Masked(), torch.randn(3, 4), torch.randn(5, 4)
        onnxport.export(model, (x,), path("masked_fixed.onnx"))
        self.assertNotIn("Shape", [n.op_type for n in onnx.load(path("masked_fixed.onnx")).graph.node])
        ok, log = ort_matches(path("masked_fixed.onnx"), save_manifest("masked_fixed", [x], [model(x)]))
        self.assertTrue(ok, log)
        onnxport.export(model, (x,), path("masked_dynamic.onnx"), input_names=["x"], dynamic_axes={"x": {0: "n"}})
        self.assertIn("Shape", [n.op_type for n in onnx.load(path("masked_dynamic.onnx")).graph.node])
        ok, log = ort_matches(path("masked_dynamic.onnx"), save_manifest("masked_dynamic", [other], [model(other)]))
        self.assertTrue(ok, log)

    def test_training_mode_batchnorms_read_their_own_statistics_as_one_run_leaves_them(self):
        # Fresh BatchNorms hold equal tensors (zeros, ones): each must still read its own, as
        # separate state, and the file holds them as one run in training mode leaves them (as
        # torch.onnx writes them). ONNX Runtime's training-mode BatchNormalization reads them.
        class TwoNorms(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.bn1 = torch.nn.BatchNorm2d(3, affine=False)
                self.conv = torch.nn.Conv2d(3, 3, 3)
                self.bn2 = torch.nn.BatchNorm2d(3)

            def forward(self, x):
                return self.bn2(self.conv(self.bn1(x)))

        model = TwoNorms()
        x = torch.randn(4, 3, 8, 8) * 2 + 1
        once = copy.deepcopy(model).train()
        expected = once(x)
        onnxport.export(torch.jit.script(model), (x,), path("two_norms.onnx"), training=torch.onnx.TrainingMode.TRAINING)
        m = onnx.load(path("two_norms.onnx"))
        norms = [n for n in m.graph.node if n.op_type == "BatchNormalization"]
        self.assertEqual(len(norms), 2)
        for norm, owner in zip(norms, ["bn1", "bn2"]):
            statistics = list(norm.input)[3:5]
            self.assertEqual(statistics, [f"{owner}.running_mean", f"{owner}.running_var"])
        self.assertEqual(list(norms[1].input)[1:3], ["bn2.weight", "bn2.bias"])
        written = {i.name: onnx.numpy_helper.to_array(i) for i in m.graph.initializer}
        for name in ["bn1.running_mean", "bn1.running_var", "bn2.running_mean", "bn2.running_var"]:
            module, buffer = name.split(".")
            np.testing.assert_allclose(written[name], getattr(getattr(once, module), buffer).numpy(), rtol=1e-5,
                                       atol=1e-6, err_msg=name)
        ok, log = ort_matches(path("two_norms.onnx"), save_manifest("two_norms", [x], [expected]))
        self.assertTrue(ok, log)

    def test_exports_leave_no_module_classes_in_torchs_global_compilation_unit(self):
        # torch.jit.trace adds a TorchScript class for every module it traces to torch's global
        # compilation unit, for the life of the process; the export's own trace keeps its own.
        class OnlyExported(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x):
                return self.block(x)

        x = torch.randn(1, 3, 8, 8)
        for _ in range(2):
            onnxport.export(OnlyExported().eval(), (x,), path("only_exported.onnx"))
        self.assertIsNone(torch.jit._state._python_cu.get_class(torch._jit_internal._qualified_name(OnlyExported)))
        torch.jit.trace(OnlyExported().eval(), (x,), check_trace=False)  # the check can fail
        self.assertIsNotNone(torch.jit._state._python_cu.get_class(torch._jit_internal._qualified_name(OnlyExported)))

    def test_extra_outputs_add_a_module_output_and_bad_ones_raise(self):
        block = Block().eval()
        x = torch.randn(2, 3, 8, 8)
        out = path("block_extra.onnx")
        report = onnxport.export(block, x, out, extra_outputs=["conv"])
        self.assertEqual([o.name for o in onnx.load(out).graph.output], ["output_0", "conv"])
        self.assertEqual(report["extra_outputs"], [{"spec": "conv", "kind": "module", "output": "conv",
                                                    "type": "float32[2,4,8,8]"}])
        with torch.no_grad():
            scale = torch.tensor(1.0, dtype=torch.float64)  # forward's default, an input as in torch.onnx
            ok, log = ort_matches(out, save_manifest("block_extra", [x, scale], [block(x), block.conv(x)]))
        self.assertTrue(ok, log)
        with self.assertRaisesRegex(onnxport.ExportError, r"--extra-outputs 'cnv'.*did you mean 'conv'"):
            onnxport.export(block, x, path("block_bad_extra.onnx"), extra_outputs=["cnv"])
        self.assertFalse(os.path.exists(path("block_bad_extra.onnx")))

    def test_a_file_object_gets_the_bytes_a_path_gets(self):
        model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh()).eval()
        x = torch.randn(2, 4)
        onnxport.export(model, x, path("seq.onnx"))
        buffer = io.BytesIO()
        onnxport.export(model, (x,), buffer)
        with open(path("seq.onnx"), "rb") as fh:
            self.assertEqual(buffer.getvalue(), fh.read())

    def test_the_process_default_dtype_is_the_exports_and_stays_set(self):
        # torch.set_default_dtype(torch.float64): int / int and torch.ones() give float64 in the
        # file as in PyTorch; the process keeps its default; a default onnxport cannot take raises.
        def int_division(a: torch.Tensor, b: torch.Tensor):
            return a / b, torch.ones(2) * b.sum()

        scripted = torch.jit.script(int_division)
        a, b = torch.tensor([7, -3, 10]), torch.tensor([2, 4, 3])
        before = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            onnxport.export(scripted, (a, b), path("int_division.onnx"), opset_version=17)
            self.assertEqual(torch.get_default_dtype(), torch.float64)
            expected = scripted(a, b)
            torch.set_default_dtype(torch.float16)
            with self.assertRaisesRegex(onnxport.ExportError, "torch.get_default_dtype.. is torch.float16"):
                onnxport.export(scripted, (a, b), path("int_division_half.onnx"))
            self.assertFalse(os.path.exists(path("int_division_half.onnx")))
        finally:
            torch.set_default_dtype(before)
        self.assertEqual([o.type.tensor_type.elem_type for o in onnx.load(path("int_division.onnx")).graph.output],
                         [onnx.TensorProto.DOUBLE] * 2)
        ok, log = ort_matches(path("int_division.onnx"), save_manifest("int_division", [a, b], list(expected)))
        self.assertTrue(ok, log)

    def test_a_script_function_keeps_its_control_flow(self):
        out = path("branchy.onnx")
        report = onnxport.export(branchy, (torch.randn(3),), out)
        self.assertEqual(report["mode"], "script")
        self.assertIn("If", [n.op_type for n in onnx.load(out).graph.node])
        for name, x in (("pos", torch.rand(3) + 0.1), ("neg", -torch.rand(3) - 0.1)):
            ok, log = ort_matches(out, save_manifest(f"branchy_{name}", [x], [branchy(x)]))
            self.assertTrue(ok, f"{name}: {log}")

    def test_a_scripted_module_exports_its_script_and_a_traced_one_its_trace(self):
        block = torch.nn.Sequential(Block().conv, torch.nn.ReLU()).eval()
        x = torch.randn(1, 3, 8, 8)
        scripted = torch.jit.script(block)
        self.assertEqual(onnxport.export(scripted, (x,), path("scripted.onnx"))["mode"], "trace",
                         "auto mode: no branch depends on tensor values")
        traced = torch.jit.trace(block, x)
        self.assertEqual(onnxport.export(traced, x, path("traced.onnx"), mode="trace")["mode"], "trace")
        ok, log = ort_matches(path("scripted.onnx"), save_manifest("scripted", [x], [block(x)]))
        self.assertTrue(ok, log)

    def test_errors_raise_export_error_with_the_clis_line(self):
        model = torch.nn.Linear(4, 4).eval()
        x = torch.randn(1, 4)
        traced = torch.jit.trace(model, x)
        traced.save(path("linear.pt"))
        with self.assertRaises(onnxport.ExportError) as caught:
            onnxport.export(traced, x, path("bad.onnx"), opset_version=99)
        r = cli("export", path("linear.pt"), "-o", path("bad.onnx"), "--input", "x:1x4", "--opset", "99")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.strip(), "onnxport: " + str(caught.exception))
        self.assertFalse(os.path.exists(path("bad.onnx")))
        self.assertIsInstance(caught.exception, RuntimeError)

        with self.assertRaisesRegex(onnxport.ExportError, r"argument 'dynamic_axes' has the wrong type"):
            onnxport.export(traced, x, path("bad.onnx"), dynamic_axes="x")
        with self.assertRaisesRegex(onnxport.ExportError, r"unknown argument 'opset'"):
            onnxport.export(traced, x, path("bad.onnx"), opset=13)
        with self.assertRaisesRegex(onnxport.ExportError, r"export_modules_as_functions is not supported"):
            onnxport.export(model, x, path("bad.onnx"), export_modules_as_functions=True)
        with self.assertRaisesRegex(onnxport.ExportError, r"keyword argument\(s\) nope of `args`"):
            onnxport.export(Block(), (torch.randn(1, 3, 8, 8), {"nope": 1}), path("bad.onnx"))
        with self.assertRaisesRegex(onnxport.ExportError, r"tracing Linear on the given args failed"):
            onnxport.export(model, torch.randn(1, 5), path("bad.onnx"))

        class Unsupported(torch.nn.Module):
            def forward(self, x):
                return torch.special.erfinv(x)

        with self.assertRaisesRegex(onnxport.ExportError, r"(?s)^unsupported op: .*aten::erfinv"):
            onnxport.export(Unsupported(), x * 0.1, path("bad.onnx"))
        self.assertFalse(os.path.exists(path("bad.onnx")))

    def test_a_scripted_model_refuses_none_arguments_as_torch_onnx_does(self):
        class TwoOptional(torch.nn.Module):
            def forward(self, x, y: Tuple[Optional[torch.Tensor], Optional[torch.Tensor]]):
                first, second = y
                if first is not None:
                    return x + first
                return x

        model = torch.jit.script(TwoOptional())
        x = torch.randn(2, 3)
        with self.assertRaisesRegex(ValueError, r"^config error: .*args contained 1 None's after flattening") as caught:
            onnxport.export(model, (x, (None, x)), path("none_arg.onnx"))
        self.assertIsInstance(caught.exception, onnxport.ExportError)
        self.assertFalse(os.path.exists(path("none_arg.onnx")))
        onnxport.export(model, (x, (x, x)), path("none_arg.onnx"))  # tensors: exported

    def test_a_value_none_on_some_paths_is_returned_as_an_onnx_optional_from_opset_16(self):
        expected_type = onnx.helper.make_optional_type_proto(
            onnx.helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, ("n",)))
        # Each model, the size it is exported at, a size where it returns a tensor and one where None.
        cases = ((IfNoneOutput, 3, 1, 2), (LoopNoneInput, 0, 2, 0), (LoopNoneOutput, 1, 0, 2), (LoopReadsOptional, 1, 1, 2))
        for cls, export_size, present_size, absent_size in cases:
            with self.subTest(cls.__name__):
                model = torch.jit.script(cls())
                out = path(f"{cls.__name__}.onnx")
                onnxport.export(model, torch.ones(export_size), out, opset_version=17, input_names=["x"],
                                dynamic_axes={"x": {0: "n"}})
                graph = onnx.load(out).graph
                if cls is LoopReadsOptional:  # the body's If merges sizes: the dimension is not known
                    self.assertEqual(graph.output[0].type.optional_type.elem_type.tensor_type.shape.dim[0].dim_param, "")
                    self.assertEqual(graph.output[0].type.optional_type.elem_type.tensor_type.elem_type,
                                     onnx.TensorProto.FLOAT)
                else:
                    self.assertEqual(graph.output[0].type, expected_type)
                for node in graph.node:
                    if node.op_type == "If":  # each branch gives the optional
                        for branch in node.attribute:
                            self.assertEqual(branch.g.output[0].type, expected_type, branch.name)
                x = torch.rand(present_size)
                ok, log = ort_matches(out, save_manifest(f"{cls.__name__}_present", [x], [model(x)]))
                self.assertTrue(ok, log)
                # onnxport's evaluator also runs the other path (onnxruntime-node 1.22 crashes on an
                # optional output holding nothing).
                absent = torch.ones(absent_size)
                self.assertIsNone(model(absent))
                np.save(path("absent.npy"), absent.numpy())
                r = cli("run", out, "--input", f"x={path('absent.npy')}")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertRegex(r.stdout, r"output \S+: None \(an optional holding nothing\)")
        with self.assertRaisesRegex(onnxport.ExportError, "ONNX optional output from opset 16"):
            onnxport.export(torch.jit.script(IfNoneOutput()), torch.ones(3), path("opset15.onnx"), opset_version=15,
                            dynamic_axes={"x": {0: "n"}}, input_names=["x"])
        self.assertFalse(os.path.exists(path("opset15.onnx")))

    def test_a_tuple_element_read_only_past_a_none_test_stays_an_input_as_in_torch_onnx(self):
        class TupleOfOptional(torch.nn.Module):
            def forward(self, x, y: Tuple[Optional[torch.Tensor], Optional[torch.Tensor]]):
                first, second = y
                if first is not None:
                    return x + first
                if second is not None:
                    return x + second
                return x

        model = torch.jit.script(TupleOfOptional())
        x, y0, y1 = torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3)
        out = path("tuple_of_optional.onnx")
        onnxport.export(model, (x, (y0, y1)), out, opset_version=15)
        self.assertEqual(len(onnx.load(out).graph.input), 3, "torch.onnx keeps `second`: its test stays at run time")
        ok, log = ort_matches(out, save_manifest("tuple_of_optional", [x, y0, y1], [model(x, (y0, y1))]))
        self.assertTrue(ok, log)

    def test_ops_and_plugins_list_what_the_cli_lists(self):
        cli_ops = json.loads(cli("ops", "--json").stdout)
        self.assertEqual(onnxport.ops(), cli_ops)
        self.assertGreater(len(cli_ops), 500)
        self.assertEqual(onnxport.ops(opset=9, pack="nn"), json.loads(cli("ops", "--json", "--opset", "9",
                                                                           "--pack", "nn").stdout))
        self.assertEqual(onnxport.plugins(), json.loads(cli("plugins", "--json").stdout))
        self.assertTrue(all(p["status"] == "loaded" for p in onnxport.plugins()))

    def test_report_is_written_for_a_success_and_for_a_failure(self):
        model = torch.nn.Linear(4, 2).eval()
        report = path("report.json")
        result = onnxport.export(model, torch.randn(1, 4), path("r.onnx"), report=report)
        with open(report) as fh:
            written = json.load(fh)
        self.assertEqual((written["status"], written["checker"]), ("ok", "ok"))
        self.assertEqual(written["graph"], result["graph"])
        failed = path("failed.md")
        with self.assertRaises(onnxport.ExportError):
            onnxport.export(model, torch.randn(1, 4), path("r2.onnx"), report=failed, opset_version=7,
                            dynamic_axes={"missing": [0]})
        with open(failed) as fh:
            self.assertIn("failed", fh.read())


def fixture_manifests():
    dirs = [d for d in os.environ.get("ONNXPORT_FIXTURES", "").split(":") if d]
    found = []
    for d in dirs:
        for manifest in sorted(glob.glob(os.path.join(d, "*.json"))):
            with open(manifest) as fh:
                m = json.load(fh)
            if isinstance(m, dict) and "model" in m and "inputs" in m:
                found.append((manifest, m))
    return found


class PackageModelsTest(unittest.TestCase):
    """Each model exported in this one process, as a user would from Python, and with the CLI."""

    def test_every_fixture_model_matches_the_cli_byte_for_byte_and_pytorch(self):
        manifests = fixture_manifests()
        self.assertTrue(manifests, "no fixture manifests found in ONNXPORT_FIXTURES")
        os.makedirs(path("models"), exist_ok=True)
        for manifest, m in manifests:
            name = os.path.splitext(os.path.basename(manifest))[0]
            with self.subTest(model=name):
                d = os.path.dirname(manifest)
                inputs = [torch.from_numpy(np.load(os.path.join(d, i["file"]))) for i in m["inputs"]]

                def nest(spec):
                    return tuple(nest(s) for s in spec) if isinstance(spec, list) else inputs[spec]

                args = nest(m["args"]) if "args" in m else tuple(inputs)
                names = [i["name"] for i in m["inputs"]]
                package_file, cli_file = path("models", f"{name}.package.onnx"), path("models", f"{name}.cli.onnx")
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    onnxport.export(torch.jit.load(os.path.join(d, m["model"])), args, package_file,
                                    input_names=names, opset_version=17)
                flags = [a for i in m["inputs"] for a in ("--input", f"{i['name']}={os.path.join(d, i['file'])}")]
                r = cli("export", os.path.join(d, m["model"]), "-o", cli_file, "--opset", "17", *flags)
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(package_file, "rb") as a, open(cli_file, "rb") as b:
                    self.assertTrue(a.read() == b.read(), f"{name}: the package's file differs from the CLI's")
                ok, log = ort_matches(package_file, manifest)
                self.assertTrue(ok, f"{name}: {log}")
                # Passing models leave nothing behind: together they are gigabytes of build tree.
                os.remove(package_file)
                os.remove(cli_file)


if __name__ == "__main__":
    unittest.main()
