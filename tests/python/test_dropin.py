#!/usr/bin/python3
"""onnxport.export where torch.onnx.export was called: the same graph inputs and outputs as
torch.onnx makes for the same call (count, order, names, dtypes), torch.onnx's leniency, and each
file checked in ONNX Runtime against PyTorch.

Environment as for test_package.py.
"""
import os
import shutil
import unittest
import warnings
from typing import Optional

import onnx
import torch

from test_package import ort_matches, save_manifest

import onnxport  # noqa: E402  (on the path test_package.py sets)

TMP = os.path.join(os.environ["ONNXPORT_TEST_TMP"], "dropin")


def path(name):
    return os.path.join(TMP, name)


def io_names(graph):
    return [i.name for i in graph.input], [o.name for o in graph.output]


def elem_types(values):
    return [v.type.tensor_type.elem_type for v in values]


def dim_params(value):
    return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]


class Detector(torch.nn.Module):
    """Returns a list of dicts, one per image, as torchvision's detection models do."""

    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(4, 5)

    def forward(self, images):
        out = []
        for image in images:
            scores = self.head(image)
            out.append({"boxes": image * 2, "scores": scores, "labels": scores.argmax(-1)})
        return out


class NestedArgs(torch.nn.Module):
    """Takes a dict, a list, a number and None; returns a tuple holding a list."""

    def forward(self, named, listed, scale, nothing=None):
        total = named["a"] + listed[0] * scale
        return total, [named["b"] - listed[1], total.sum()]


class PairsOnly(torch.nn.Module):
    """Runs only on an even number of rows: a dynamic axis grown by one cannot run it."""

    def forward(self, x):
        return x.view(-1, 2, x.shape[1]).sum(1)


class ScaledIfAsked(torch.nn.Module):
    """A forward taking numbers: scripted, they are graph inputs in torch.onnx's file."""

    def forward(self, x, scale: float, offset: int, asked: bool):
        if asked:
            return x * scale + offset
        return x - offset


class EarlyReturns(torch.nn.Module):
    """PyTorch's test_uninitialized_optional: each inner branch leaves another result uninitialized."""

    def forward(self, y: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
        if y is not None:
            if y.shape[1] < 5:
                if y.size(0) == 1:
                    y = y + 4
                else:
                    return y
        return y


class MaskUnlessSingle(torch.nn.Module):
    """Emformer's padding mask: None for a batch of one, known only at run time."""

    def forward(self, x):
        mask = None if x.size(0) == 1 else x > 0
        if mask is not None:
            x = x.masked_fill(mask, 0.0)
        return x + 1.0


class QuantizedArithmetic(torch.nn.Module):
    """PyTorch's test_quantized_arithmetic: quantized tensors in and out."""

    def forward(self, x, y):
        o = torch.ops.quantized.add(x, y, 0.4, 100)
        return torch.ops.quantized.mul(o, x, 0.4, 100)


class PickedByValue(torch.nn.Module):
    """Which list item it returns is a number made of a tensor's values."""

    def forward(self, x, k):
        rows = [x[i] for i in range(x.size(0))]
        return rows[int(k.sum())]


class DropInTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        shutil.rmtree(TMP, ignore_errors=True)
        os.makedirs(TMP)
        torch.manual_seed(0)

    def export_both(self, model, args, name, **kwargs):
        """Exports with onnxport and with torch.onnx; returns both graphs and onnxport's warnings."""
        ours, theirs = path(f"{name}.onnx"), path(f"{name}.torch.onnx")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            onnxport.export(model, args, ours, **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, args, theirs, **kwargs)
        return onnx.load(ours).graph, onnx.load(theirs).graph, [str(w.message) for w in caught]

    def assert_runs_like_pytorch(self, name, inputs, outputs):
        ok, log = ort_matches(path(f"{name}.onnx"), save_manifest(f"dropin_{name}", inputs, outputs))
        self.assertTrue(ok, log)

    def test_a_list_of_dicts_is_flattened_into_outputs_as_torch_onnx_does(self):
        model = Detector().eval()
        images = [torch.randn(3, 4), torch.randn(3, 4)]
        ours, theirs, _ = self.export_both(model, (images,), "detector", opset_version=13)
        self.assertEqual(len(ours.input), len(theirs.input))
        self.assertEqual(len(ours.output), len(theirs.output))
        self.assertEqual(len(ours.output), 6)
        self.assertEqual(elem_types(ours.output), elem_types(theirs.output))
        flat = [t for per_image in model(images) for t in per_image.values()]
        self.assertEqual(len(flat), 6)
        self.assert_runs_like_pytorch("detector", images, flat)

    def test_dicts_lists_numbers_and_none_in_args_become_inputs_as_in_torch_onnx(self):
        model = NestedArgs()
        named = {"a": torch.randn(2, 3), "b": torch.randn(2, 3)}
        listed = [torch.randn(2, 3), torch.randn(2, 3)]
        args = (named, listed, 3, None)
        ours, theirs, _ = self.export_both(model, args, "nested", opset_version=17)
        # a, b, the two list items and the number (an int64 0-d input); None is no input
        self.assertEqual(len(ours.input), 5)
        self.assertEqual(elem_types(ours.input), elem_types(theirs.input))
        self.assertEqual(len(ours.output), len(theirs.output))
        total, (diff, summed) = model(*args)
        inputs = [named["a"], named["b"], listed[0], listed[1], torch.tensor(3)]
        self.assert_runs_like_pytorch("nested", inputs, [total, diff, summed])

    def test_inputs_the_graph_never_reads_are_dropped_as_torch_onnx_drops_them(self):
        class FirstOnly(torch.nn.Module):
            def forward(self, x, y, z):
                return x * 2 + z

        args = (torch.randn(2), torch.randn(3), torch.randn(2))
        ours, theirs, _ = self.export_both(FirstOnly(), args, "unused", input_names=["x", "y", "z"])
        self.assertEqual(io_names(ours)[0], ["x", "z"])
        self.assertEqual(io_names(ours)[0], io_names(theirs)[0])
        self.assert_runs_like_pytorch("unused", [args[0], args[2]], [FirstOnly()(*args)])

    def test_inputs_read_only_for_their_shape_are_kept_or_dropped_as_torch_onnx_does(self):
        """torch.onnx folds what a static shape determines but keeps a shape read whole by an op
        that does not fold, and anything read from a 0-d input's shape."""
        class ShapeReads(torch.nn.Module):
            def forward(self, x, gathered, whole, scalar):
                return x * gathered.shape[0], x.expand_as(whole), torch.full_like(scalar, 1.5)

        args = (torch.randn(1, 4), torch.randn(3, 4), torch.randn(2, 4), torch.tensor(7.0))
        names = ["x", "gathered", "whole", "scalar"]
        ours, theirs, _ = self.export_both(ShapeReads(), args, "shape_reads", input_names=names, opset_version=13)
        self.assertEqual(io_names(ours)[0], ["x", "whole", "scalar"])
        self.assertEqual(io_names(ours)[0], io_names(theirs)[0])
        self.assert_runs_like_pytorch("shape_reads", [args[0], args[2], args[3]], list(ShapeReads()(*args)))

    def test_numbers_taken_by_a_scripted_forward_are_graph_inputs_as_in_torch_onnx(self):
        model = torch.jit.script(ScaledIfAsked())
        x = torch.randn(2, 3)
        ours, theirs, _ = self.export_both(model, (x, 1.5, 3, True), "numbers", opset_version=13)
        self.assertEqual(elem_types(ours.input), [onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE,
                                                  onnx.TensorProto.INT64, onnx.TensorProto.BOOL])
        self.assertEqual(elem_types(ours.input), elem_types(theirs.input))
        # The numbers are read at run time: other values than the example's give other results.
        for scale, offset, asked in [(1.5, 3, True), (-2.0, 7, True), (0.5, 4, False)]:
            inputs = [x, torch.tensor(scale, dtype=torch.float64), torch.tensor(offset), torch.tensor(asked)]
            ok, log = ort_matches(path("numbers.onnx"), save_manifest(f"dropin_numbers_{offset}", inputs,
                                                                      [model(x, scale, offset, asked)]))
            self.assertTrue(ok, log)

    def test_a_number_made_of_tensor_values_is_computed_at_run_time_not_traced_in(self):
        model = torch.jit.script(PickedByValue())
        x, k = torch.randn(4, 3), torch.tensor([1, 0])
        report = onnxport.export(model, (x, k), path("picked.onnx"), opset_version=17)
        self.assertEqual(report["mode"], "script")
        for other in ([1, 0], [2, 1], [0, 0]):
            k = torch.tensor(other)
            ok, log = ort_matches(path("picked.onnx"), save_manifest(f"dropin_picked_{sum(other)}", [x, k], [model(x, k)]))
            self.assertTrue(ok, log)

    def test_values_missing_on_one_path_export_and_run_each_path(self):
        # Placeholders (an early return's uninitialized result, a None) take the dtype and rank
        # of the other branch's tensor; the file runs each path as PyTorch does.
        early = torch.jit.script(EarlyReturns())
        onnxport.export(early, torch.ones(3, 4, dtype=torch.int32), path("early.onnx"), input_names=["y"],
                        dynamic_axes={"y": {0: "y0", 1: "y1"}}, opset_version=17)
        masked = torch.jit.script(MaskUnlessSingle())
        onnxport.export(masked, torch.randn(2, 3), path("masked.onnx"), input_names=["x"],
                        dynamic_axes={"x": {0: "batch"}}, opset_version=13)
        for name, model, inputs in [("early", early, torch.ones(1, 4, dtype=torch.int32)),
                                    ("early", early, torch.ones(2, 3, dtype=torch.int32)),
                                    ("early", early, torch.ones(2, 6, dtype=torch.int32)),
                                    ("masked", masked, torch.randn(1, 3)), ("masked", masked, torch.randn(4, 3))]:
            manifest = save_manifest(f"dropin_{name}_{'x'.join(map(str, inputs.shape))}", [inputs], [model(inputs)])
            ok, log = ort_matches(path(f"{name}.onnx"), manifest)
            self.assertTrue(ok, log)

    def test_forward_pre_hooks_set_what_forward_reads(self):
        # weight_norm and spectral_norm set `weight` in a forward pre-hook. The trace ran the hook
        # on its copy of the module but forward on the original, which read the stale attribute:
        # weight_norm's (requiring grad) was refused as a constant, spectral_norm's unnormalized
        # weight was exported. The module keeps the attribute it had.
        torch.manual_seed(3)
        for name, model in (("weight_norm", torch.nn.utils.weight_norm(torch.nn.Linear(5, 10), dim=1)),
                            ("spectral_norm", torch.nn.utils.spectral_norm(torch.nn.Linear(5, 10)).eval())):
            before = model.weight
            x = torch.randn(3, 4, 5, requires_grad=True)
            onnxport.export(model, (x,), path(f"{name}.onnx"), opset_version=13)
            self.assertIs(model.weight, before)
            manifest = save_manifest(f"dropin_{name}", [x.detach()], [model(x).detach()])
            ok, log = ort_matches(path(f"{name}.onnx"), manifest)
            self.assertTrue(ok, f"{name}: {log}")

    def test_a_quantized_tensor_is_three_inputs_and_outputs_as_in_torch_onnx(self):
        # Its integer values, its scale and its zero point: the inputs as torch.onnx's file takes
        # them (float64 scale, int64 zero point), the outputs as it gives them (float32, uint8).
        torch.manual_seed(7)
        x = torch.quantize_per_tensor(torch.randn(3, 4), 0.2, 128, torch.quint8)
        y = torch.quantize_per_tensor(torch.randn(3, 4), 0.3, 120, torch.quint8)
        ours, theirs, _ = self.export_both(QuantizedArithmetic(), (x, y), "quantized", opset_version=13,
                                           input_names=["x_int", "x_scale"])
        self.assertEqual(elem_types(ours.input), [onnx.TensorProto.UINT8, onnx.TensorProto.DOUBLE,
                                                  onnx.TensorProto.INT64] * 2)
        self.assertEqual(elem_types(ours.input), elem_types(theirs.input))
        self.assertEqual(elem_types(ours.output), elem_types(theirs.output))
        self.assertEqual(io_names(ours)[0][:2], ["x_int", "x_scale"])
        out = QuantizedArithmetic()(x, y)
        inputs = [t for q in (x, y) for t in (q.int_repr(), torch.tensor(q.q_scale(), dtype=torch.float64),
                                              torch.tensor(q.q_zero_point()))]
        outputs = [out.int_repr(), torch.tensor(out.q_scale(), dtype=torch.float32),
                   torch.tensor(out.q_zero_point(), dtype=torch.uint8)]
        self.assert_runs_like_pytorch("quantized", inputs, outputs)

    def test_integer_true_division_gives_the_default_dtype_in_force(self):
        # PyTorch's test_div_promotion_*: int / int is float64 under torch.set_default_dtype(float64).
        class Div(torch.nn.Module):
            def forward(self, x, y):
                return x / y

        x = torch.randint(-5, 5, (2, 3), dtype=torch.int32)
        y = torch.arange(1, 7, dtype=torch.int32).reshape(2, 3)
        previous = torch.get_default_dtype()
        try:
            torch.set_default_dtype(torch.float64)
            onnxport.export(Div(), (x, y), path("div64.onnx"), opset_version=13)
            expected = Div()(x, y)
        finally:
            torch.set_default_dtype(previous)
        self.assertEqual(expected.dtype, torch.float64)
        self.assertEqual(elem_types(onnx.load(path("div64.onnx")).graph.output), [onnx.TensorProto.DOUBLE])
        self.assert_runs_like_pytorch("div64", [x, y], [expected])

    def test_dynamic_axes_naming_nothing_warn_and_list_axes_are_named_by_position(self):
        model = torch.nn.Linear(4, 2)
        x = torch.randn(3, 5, 4)
        ours, theirs, caught = self.export_both(model, (x,), "axes", input_names=["x"],
                                                dynamic_axes={"x": [0, 1], "not_a_value": {0: "n"}})
        self.assertTrue(any("'not_a_value'" in w and "ignored" in w for w in caught), caught)
        self.assertEqual(dim_params(ours.input[0]), ["x_dynamic_axes_1", "x_dynamic_axes_2", 4])
        self.assertEqual(dim_params(ours.input[0]), dim_params(theirs.input[0]))
        x2 = torch.randn(2, 7, 4)
        self.assert_runs_like_pytorch("axes", [x2], [model(x2)])

    def test_fewer_output_names_and_axes_beyond_a_rank_as_torch_onnx_takes_them(self):
        # PyTorch's test_slice_dynamic: one name for four outputs, and it is the name onnxport would
        # give output 1 by default; test_slice_dynamic_to_end: axis 2 of a rank-2 output.
        class Slices(torch.nn.Module):
            def forward(self, x):
                return tuple(x[: x.size(0) - i, i: x.size(2), i:3] for i in range(3)) + (x[:, 1:, 0],)

        model = Slices()
        x = torch.rand(5, 5, 5)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            onnxport.export(model, (x,), path("slices.onnx"), input_names=["input_1"], output_names=["output_1"],
                            dynamic_axes={"input_1": [0, 1, 2], "output_1": [0, 1, 2], "output_3": [0, 1, 2]})
        messages = [str(w.message) for w in caught]
        self.assertTrue(any("'output_3' axis 2, but it has rank 2: ignored" in m for m in messages), messages)
        graph = onnx.load(path("slices.onnx")).graph
        self.assertEqual([o.name for o in graph.output], ["output_1", "output_1_1", "output_2", "output_3"])
        y = torch.randn(6, 7, 8)
        self.assert_runs_like_pytorch("slices", [y], list(model(y)))

    def test_a_model_that_cannot_run_with_the_axes_grown_is_written_with_a_warning(self):
        model = PairsOnly()
        x = torch.randn(4, 3)
        ours, _, caught = self.export_both(model, (x,), "pairs", input_names=["x"], dynamic_axes={"x": {0: "rows"}})
        self.assertTrue(any("dynamic axes are not proven" in w and "x 4x3 -> 5x3" in w for w in caught), caught)
        self.assertEqual(dim_params(ours.input[0]), ["rows", 3])
        x6 = torch.randn(6, 3)
        self.assert_runs_like_pytorch("pairs", [x6], [model(x6)])

    def test_a_transformer_encoder_with_a_padding_mask_traces_as_torch_onnx_traces_it(self):
        layer = torch.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
        model = torch.nn.TransformerEncoder(layer, num_layers=2).eval()
        x = torch.randn(2, 5, 8)
        mask = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
        self.export_both(model, (x, {"src_key_padding_mask": mask}), "encoder", opset_version=17)
        # With autograd on, as torch.onnx traces it (under no_grad torch 1.13 takes the nested-tensor
        # fast path, which has no ONNX form and zeroes the padded positions).
        self.assert_runs_like_pytorch("encoder", [x, mask], [model(x, src_key_padding_mask=mask)])


if __name__ == "__main__":
    unittest.main()
