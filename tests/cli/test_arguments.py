#!/usr/bin/python3
"""Every kind of argument a TorchScript method takes, given on the command line and in the config
(`--input sr:int=16000`, `flags:bool[]=1,0`, `mask:none`, `hc:(2x4,2x4)`, `d:{a:2x4}`, ...), any
method (`--method`) or submodule (`--submodule`) of the file, and `onnxport inspect MODEL.pt`.

Each export is run in ONNX Runtime on the values PyTorch is called with and compared with what
the scripted module computes; a number folded as a constant must give the branch it selects, and
with --dynamic-numbers one file must give both branches. Each refused spec is checked for its
one-line message, a non-zero exit and no file written.

Environment (set by ctest): ONNXPORT, ONNXPORT_ORT_COMPARE, ONNXPORT_TEST_TMP.
"""
import json
import os
import subprocess
import sys
import unittest
from typing import Dict, List, Optional, Tuple

import numpy as np
import onnx
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "support"))
from cli_test import TMP, path, run  # noqa: E402

ORT_COMPARE = os.environ["ONNXPORT_ORT_COMPARE"]


class Inner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x, state):
        y = self.lin(x) + state
        return y, y.tanh()


class Streaming(torch.nn.Module):
    """forward(x, sr: int) as a voice-activity model takes it, plus methods of every argument kind."""

    def __init__(self):
        super().__init__()
        self._model = Inner()
        self.register_buffer("_state", torch.zeros(0))

    def forward(self, x: torch.Tensor, sr: int):
        if sr == 16000:
            y = self._model(x, x)[0]
        else:
            y = x * float(sr) / 8000.0
        self._state = y.detach()
        return y

    @torch.jit.export
    def infer(self, x: torch.Tensor, scale: float, flags: List[bool], mask: Optional[torch.Tensor]):
        y = self._model(x, x)[1] * scale
        if flags[0]:
            y = y + 1.0
        if flags[1]:
            y = y - 3.0
        if mask is not None:
            y = y * mask
        return y

    @torch.jit.export
    def pairs(self, hc: Tuple[torch.Tensor, torch.Tensor], xs: List[torch.Tensor], d: Dict[str, torch.Tensor],
              mode: str):
        out = hc[0] + hc[1] * 2.0 + xs[0] * xs[1] + d["a"] - d["b"]
        if mode == "double":
            out = out * 2.0
        return out

    @torch.jit.export
    def nested(self, pair: Tuple[torch.Tensor, Optional[torch.Tensor]], sizes: Tuple[int, int], gain: float = 2.0):
        y = pair[0].reshape(sizes[0], sizes[1]) * gain
        second = pair[1]
        if second is not None:
            y = y + second
        return y


def save_model():
    torch.manual_seed(0)
    scripted = torch.jit.script(Streaming().eval())
    scripted.save(path("streaming.pt"))
    return torch.jit.load(path("streaming.pt"))


def compare_in_ort(test, onnx_file, named_inputs, outputs, tag):
    """Runs onnx_file in ONNX Runtime on `named_inputs` (graph input name -> array) and compares
    with `outputs` (what PyTorch computed)."""
    files_in, files_out = [], []
    for name, value in named_inputs.items():
        np.save(path(f"{tag}.{name}.npy"), np.asarray(value))
        files_in.append({"name": name, "file": f"{tag}.{name}.npy"})
    for k, value in enumerate(outputs):
        np.save(path(f"{tag}.out{k}.npy"), value.detach().numpy())
        files_out.append({"file": f"{tag}.out{k}.npy"})
    with open(path(f"{tag}.json"), "w") as fh:
        json.dump({"model": onnx_file, "inputs": files_in, "outputs": files_out}, fh)
    r = subprocess.run(["node", ORT_COMPARE, onnx_file, path(f"{tag}.json")], capture_output=True, text=True)
    test.assertEqual(r.returncode, 0, r.stdout + r.stderr)


def graph_inputs(onnx_file):
    return [(i.name, i.type.tensor_type.elem_type) for i in onnx.load(onnx_file).graph.input]


class ArgumentsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(TMP, exist_ok=True)
        cls.module = save_model()
        cls.model = path("streaming.pt")
        torch.manual_seed(1)
        cls.x = torch.randn(2, 4)
        np.save(path("x.npy"), cls.x.numpy())

    def export(self, out, *args):
        target = path(out)
        run("export", self.model, "-o", target, *args)
        return target

    def test_number_folded_selects_its_branch(self):
        for sr in (16000, 8000):
            onnx_file = self.export(f"sr{sr}.onnx", "--input", "x=" + path("x.npy"), "--input", f"sr:int={sr}")
            self.assertEqual(graph_inputs(onnx_file), [("x", onnx.TensorProto.FLOAT)])
            compare_in_ort(self, onnx_file, {"x": self.x}, [self.module(self.x, sr)], f"sr{sr}")
        # The two branches differ, so each file really holds its own.
        self.assertGreater(float((self.module(self.x, 16000) - self.module(self.x, 8000)).abs().max()), 0.1)
        # The file records the --input of the number it folded: verify needs no --input again, and
        # with it the other file's number would not match (so the recorded one is what verify uses).
        props = {p.key: p.value for p in onnx.load(onnx_file).metadata_props}
        self.assertEqual(json.loads(props["onnxport.inputs"]), ["x=" + path("x.npy"), "sr:int=8000"])
        r = run("verify", self.model, onnx_file)
        self.assertIn(f"as the ONNX file records its export: --input x={path('x.npy')} --input sr:int=8000", r.stdout)
        self.assertIn("verify: ok", r.stdout)
        r = run("verify", self.model, onnx_file, "--input", "x:2x4", "--input", "sr:int=16000", ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("MISMATCH", r.stdout)
        self.assertNotIn("as the ONNX file records", r.stdout)
        # A file from elsewhere whose record is no list of specs is refused in one line.
        damaged = onnx.load(onnx_file)
        for p in damaged.metadata_props:
            if p.key == "onnxport.inputs":
                p.value = "[1]"
        onnx.save(damaged, path("damaged_record.onnx"))
        r = run("verify", self.model, path("damaged_record.onnx"), ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("onnxport.inputs holds 1, not an --input spec", r.stderr)
        self.assertIn("give the export's --input again", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_number_as_input_keeps_both_branches(self):
        onnx_file = self.export("sr_dynamic.onnx", "--input", "x=" + path("x.npy"), "--input", "sr:int=8000",
                                "--mode", "script", "--dynamic-numbers")
        self.assertEqual(graph_inputs(onnx_file), [("x", onnx.TensorProto.FLOAT), ("sr", onnx.TensorProto.INT64)])
        for sr in (16000, 8000, 4000):
            compare_in_ort(self, onnx_file, {"x": self.x, "sr": np.array(sr, dtype=np.int64)},
                           [self.module(self.x, sr)], f"srdyn{sr}")
        r = run("verify", self.model, onnx_file, "--input", "x:2x4", "--input", "sr:int=16000")
        self.assertIn("verify: ok", r.stdout)
        # onnxport run takes the number for the 0-d input it became.
        os.makedirs(path("run_out"), exist_ok=True)
        run("run", onnx_file, "--input", "x=" + path("x.npy"), "--input", "sr:int=16000", "-o", path("run_out"))
        ran = np.load(path("run_out", "output_0.npy"))
        np.testing.assert_allclose(ran, self.module(self.x, 16000).detach().numpy(), rtol=1e-5, atol=1e-6)

    def test_number_from_a_0d_npy_file(self):
        np.save(path("sr.npy"), np.array(16000, dtype=np.int64))
        onnx_file = self.export("sr_npy.onnx", "--input", "x=" + path("x.npy"), "--input", "sr=" + path("sr.npy"))
        compare_in_ort(self, onnx_file, {"x": self.x}, [self.module(self.x, 16000)], "srnpy")

    def test_method_with_float_bool_list_and_none(self):
        for mask_spec in ("mask:none", "mask:2x4"):
            onnx_file = self.export("infer.onnx", "--method", "infer", "--input", "x=" + path("x.npy"),
                                    "--input", "scale:float=0.5", "--input", "flags:bool[]=1,0", "--input", mask_spec)
            names = [n for n, _ in graph_inputs(onnx_file)]
            if mask_spec == "mask:none":
                self.assertEqual(names, ["x"])
                compare_in_ort(self, onnx_file, {"x": self.x}, [self.module.infer(self.x, 0.5, [True, False], None)],
                               "infer_none")
            else:
                self.assertEqual(names, ["x", "mask"])
                mask = torch.randn(2, 4)
                compare_in_ort(self, onnx_file, {"x": self.x, "mask": mask},
                               [self.module.infer(self.x, 0.5, [True, False], mask)], "infer_mask")
        # Another list of flags takes the other branches.
        onnx_file = self.export("infer01.onnx", "--method", "infer", "--input", "x=" + path("x.npy"),
                                "--input", "scale:int=2", "--input", "flags:bool[]=false,true", "--input", "mask:none")
        compare_in_ort(self, onnx_file, {"x": self.x}, [self.module.infer(self.x, 2.0, [False, True], None)],
                       "infer01")

    def test_tuple_list_dict_and_string(self):
        onnx_file = self.export("pairs.onnx", "--method", "pairs", "--input", "hc:(2x4,2x4)", "--input",
                                "xs:[2x4,2x4:float32]", "--input", "d:{a:2x4,b:2x4}", "--input", "mode:str=double")
        names = [n for n, _ in graph_inputs(onnx_file)]
        self.assertEqual(names, ["hc.0", "hc.1", "xs.0", "xs.1", "d.a", "d.b"])
        values = {n: torch.randn(2, 4) for n in names}
        expected = self.module.pairs((values["hc.0"], values["hc.1"]), [values["xs.0"], values["xs.1"]],
                                     {"a": values["d.a"], "b": values["d.b"]}, "double")
        compare_in_ort(self, onnx_file, values, [expected], "pairs")
        r = run("verify", self.model, onnx_file, "--method", "pairs", "--input", "hc:(2x4,2x4)", "--input",
                "xs:[2x4,2x4]", "--input", "d:{a:2x4,b:2x4}", "--input", "mode:str=double")
        self.assertIn("verify: ok", r.stdout)
        r = run("verify", self.model, onnx_file)  # the method and the string from the file
        self.assertIn("as the ONNX file records its export: --input hc:(2x4:float32,2x4:float32) "
                      "--input xs:[2x4:float32,2x4:float32] --input d:{a:2x4:float32,b:2x4:float32} "
                      "--input mode:str=double --method pairs", r.stdout)
        self.assertIn("verify: ok", r.stdout)

    def test_nested_tuple_with_none_numbers_and_default(self):
        onnx_file = self.export("nested.onnx", "--method", "nested", "--input", "pair:(8,none)", "--input",
                                "sizes:int[]=2,4")
        self.assertEqual([n for n, _ in graph_inputs(onnx_file)], ["pair.0"])
        flat = torch.randn(8)
        compare_in_ort(self, onnx_file, {"pair.0": flat}, [self.module.nested((flat, None), (2, 4))], "nested")
        onnx_file = self.export("nested2.onnx", "--method", "nested", "--input", "pair:(8,4x2)", "--input",
                                "sizes:(int=4,int=2)", "--input", "gain:float=-1")
        second = torch.randn(4, 2)
        compare_in_ort(self, onnx_file, {"pair.0": flat, "pair.1": second},
                       [self.module.nested((flat, second), (4, 2), -1.0)], "nested2")

    def test_submodule(self):
        onnx_file = self.export("inner.onnx", "--submodule", "_model", "--input", "x=" + path("x.npy"),
                                "--input", "state:2x4", "--verify")
        state = torch.randn(2, 4)
        compare_in_ort(self, onnx_file, {"x": self.x, "state": state}, list(self.module._model(self.x, state)),
                       "inner")
        onnx_file = self.export("lin.onnx", "--submodule", "_model.lin", "--input", "x:3x4")
        x = torch.randn(3, 4)
        compare_in_ort(self, onnx_file, {"x": x}, [self.module._model.lin(x)], "lin")
        # Tensors alone are not recorded (the file's inputs show them); the submodule is.
        props = {p.key: p.value for p in onnx.load(onnx_file).metadata_props}
        self.assertEqual(props, {"onnxport.submodule": "_model.lin"})
        r = run("verify", self.model, onnx_file)
        self.assertIn("as the ONNX file records its export: --submodule _model.lin", r.stdout)
        self.assertIn("verify: ok", r.stdout)

    def test_config_file_takes_the_same_forms(self):
        config = path("arguments.json")
        with open(config, "w") as fh:
            json.dump({"method": "infer", "inputs": ["x=" + path("x.npy"), "scale:float=3", "flags:bool[]=1,1",
                                                     "mask:none"]}, fh)
        onnx_file = self.export("config.onnx", "--config", config)
        compare_in_ort(self, onnx_file, {"x": self.x}, [self.module.infer(self.x, 3.0, [True, True], None)],
                       "config")

    def test_misfits_are_refused_in_one_line(self):
        cases = [
            (["--input", "x:2x4", "--input", "sr:16000"],
             "argument 'sr' of forward is int, the spec gives a tensor", "--input sr:int=VALUE"),
            (["--input", "x:2x4", "--input", "sr:float=1.5"], "argument 'sr' of forward is int, the spec gives a float",
             "sr:int=VALUE"),
            (["--input", "x:2x4", "--input", "sr=16000"], "'16000' is read as a .npy file name", "sr:int=16000"),
            (["--input", "x:2x4", "--input", "sr:int=abc"], "'abc' is not an int", ""),
            (["--input", "x:none", "--input", "sr:int=1"], "argument 'x' of forward is Tensor, the spec gives None",
             "x:SHAPE[:DTYPE] or x=FILE.npy"),
            (["--input", "x:2x4"], "no --input for argument 'sr' of forward (x: Tensor, sr: int)", "sr:int=VALUE"),
            (["--input", "x:2x4", "--input", "sr:int=1", "--input", "z:2"],
             "forward takes 2 arguments (x: Tensor, sr: int), 3 --input were given", ""),
            (["--input", "x:(2x4", "--input", "sr:int=1"], "'(' is not closed by ')'", ""),
            (["--method", "infer", "--input", "x:2x4", "--input", "scale:float=1", "--input", "flags:int[]=1,0",
              "--input", "mask:none"], "argument 'flags' of infer is List[bool], the spec gives a list of ints",
             "flags:bool[]=V,V"),
            (["--method", "pairs", "--input", "hc:(2x4)", "--input", "xs:[2x4]", "--input", "d:{a:2x4}",
              "--input", "mode:str=x"], "argument 'hc' of pairs is Tuple[Tensor, Tensor], the spec gives a tuple of 1",
             "hc:(SHAPE[:DTYPE],SHAPE[:DTYPE])"),
            (["--method", "inferr", "--input", "x:2x4"],
             "--method 'inferr': the model has no method 'inferr' (it has: forward, infer, nested, pairs)",
             "onnxport inspect"),
            (["--submodule", "_model.lni", "--input", "x:2x4"],
             "--submodule '_model.lni': '_model' has no submodule 'lni' (it has: lin)", "onnxport inspect"),
        ]
        for args, message, hint in cases:
            with self.subTest(args=args):
                target = path("refused.onnx")
                if os.path.exists(target):
                    os.remove(target)
                r = run("export", self.model, "-o", target, *args, ok=False)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn(message, r.stderr)
                self.assertIn(hint, r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertNotIn("INTERNAL ASSERT", r.stderr)
                self.assertFalse(os.path.exists(target))

    def test_inspect_lists_methods_submodules_and_state(self):
        r = run("inspect", self.model)
        text = r.stdout
        self.assertIn("forward(x: Tensor, sr: int) -> Tensor", text)
        self.assertIn("infer(x: Tensor, scale: float, flags: List[bool], mask: Optional[Tensor]) -> Tensor", text)
        self.assertIn("nested(pair: Tuple[Tensor, Optional[Tensor]], sizes: Tuple[int, int], gain: float = 2.0)", text)
        self.assertIn("writes _state", text)
        self.assertIn("_model: Inner", text)
        self.assertIn("_model.lin: Linear", text)
        self.assertIn("_state: float32[0]  (written by a method)", text)
        r = run("inspect", self.model, "--dot", ok=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("is a TorchScript file; --dot and --html draw ONNX files", r.stderr)


if __name__ == "__main__":
    unittest.main()
