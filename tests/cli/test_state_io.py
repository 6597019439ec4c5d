#!/usr/bin/python3
"""--state-io: the module tensors a TorchScript method assigns (a streaming model's state) become
graph inputs named after the attributes and graph outputs NAME_out. Each model here is called in
a loop of 50 steps by PyTorch and by ONNX Runtime (tests/integration/ort_state_loop.js), the ONNX
file fed the state its previous step returned, starting from the state saved in the file; every
step's outputs and states must match (a state whose sizes calls change takes dynamic dims; one the
first call gives its lasting rank: the ONNX file from zeros). Without the flag the export warns,
naming the attributes; a state whose rank keeps changing, one that a call from zeros does not
reproduce, and a trace that fixed the first call's branch are refused in one line.

Environment (set by ctest): ONNXPORT, ONNXPORT_ORT_STATE_LOOP, ONNXPORT_TEST_TMP.
"""
import json
import os
import subprocess
import sys
import unittest

import numpy as np
import onnx
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "support"))
from cli_test import TMP, path, run  # noqa: E402

ORT_STATE_LOOP = os.environ["ONNXPORT_ORT_STATE_LOOP"]
STEPS = 50


class Resetting(torch.nn.Module):
    """A recurrent cell whose state is reset every sixth call, in script mode's branches."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.register_buffer("_state", torch.zeros(2, 4))
        self.register_buffer("_count", torch.zeros(1))

    def forward(self, x):
        h = torch.tanh(self.lin(x) + self._state)
        if bool(self._count >= 5):
            self._state = torch.zeros_like(h)
            self._count = torch.zeros(1)
        else:
            self._state = h
            self._count = self._count + 1
        return h * 2.0


class Average(torch.nn.Module):
    """A running average kept by a submodule, read by its parent: straight-line (trace mode)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("avg", torch.zeros(3))

    def forward(self, x):
        self.avg = 0.9 * self.avg + 0.1 * x.mean(0)
        return self.avg


class WithAverage(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stats = Average()
        self.register_buffer("scale", torch.full((3,), 0.5))  # read only: stays an initializer

    def forward(self, x):
        return (x - self.stats(x)) * self.scale


class Gru(torch.nn.Module):
    """A voice-activity-like model: a GRU whose hidden state is kept between calls, and a sample
    rate argument that scales the input unless it is 16000 (folded as a constant)."""

    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(4, 8, batch_first=True)
        self.head = torch.nn.Linear(8, 1)
        self.register_buffer("_h", torch.zeros(1, 1, 8))

    def forward(self, x, sr: int):
        if sr != 16000:
            x = x * 0.5
        y, h = self.gru(x, self._h)
        self._h = h
        return torch.sigmoid(self.head(y[:, -1]))


class Filling(torch.nn.Module):
    """Its context is empty in the file and filled by the first call."""

    def __init__(self):
        super().__init__()
        self.register_buffer("_context", torch.zeros(0))

    def forward(self, x):
        joined = torch.cat([self._context, x])
        self._context = x[-2:]
        return joined.sum().reshape(1)


class Vad(torch.nn.Module):
    """Shaped like a widely used voice-activity model: its recurrent state and audio context are
    empty in the file and made in the first call, for the batch size and sample rate it is called
    with (int attributes remember both); a change of either resets them."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(64 + 32, 16)
        self.cell = torch.nn.GRUCell(16, 16)
        self.head = torch.nn.Linear(16, 1)
        self._state = torch.zeros(0)
        self._context = torch.zeros(0)
        self._last_sr = 0
        self._last_batch_size = 0

    def reset_states(self):
        self._state = torch.zeros(0)
        self._context = torch.zeros(0)
        self._last_sr = 0
        self._last_batch_size = 0

    def forward(self, x, sr: int):
        batch_size = x.shape[0]
        context_size = 64 if sr == 16000 else 32
        if not self._last_batch_size:
            self.reset_states()
        if self._last_sr and self._last_sr != sr:
            self.reset_states()
        if self._last_batch_size and self._last_batch_size != batch_size:
            self.reset_states()
        if not len(self._context):
            self._context = torch.zeros(batch_size, context_size)
        if not len(self._state):
            self._state = torch.zeros(batch_size, 16)
        joined = torch.cat([self._context, x], dim=1)
        features = torch.relu(self.proj(joined[:, -96:]))
        self._state = self.cell(features, self._state)
        self._context = joined[:, -context_size:]
        self._last_sr = sr
        self._last_batch_size = batch_size
        return torch.sigmoid(self.head(self._state))


class Marking(torch.nn.Module):
    """Fills its empty history with ones, not zeros: a call from zeros is not the file's first.
    `shape`: the history's lasting shape (2 values, in one dim or more)."""

    def __init__(self, shape=(2,)):
        super().__init__()
        self._history = torch.zeros(0)
        self._shape = list(shape)

    def forward(self, x):
        if not len(self._history):
            self._history = torch.ones(self._shape)
        y = x + self._history.sum()
        self._history = x[-2:].reshape(self._shape)
        return y


class Growing(torch.nn.Module):
    """Appends every call's input to its cache: the cache grows by the input's length each call."""

    def __init__(self):
        super().__init__()
        self._cache = torch.zeros(0)

    def forward(self, x):
        self._cache = torch.cat([self._cache, x])
        return self._cache.sum().reshape(1)


class Nesting(torch.nn.Module):
    """Wraps its record in one more dimension every call: its rank keeps changing."""

    def __init__(self):
        super().__init__()
        self._record = torch.zeros(0)

    def forward(self, x):
        self._record = self._record.unsqueeze(0)
        return x + self._record.sum()


def state_value(module, name):
    """The attribute at dotted path `name` of `module`, copied."""
    owner = module
    for part in name.split(".")[:-1]:
        owner = getattr(owner, part)
    return getattr(owner, name.split(".")[-1]).detach().clone()


def loop_in_torch(module, inputs, state_names, call_args=()):
    """Calls `module` on each input (and `call_args`); per step its output and the state
    attributes after it."""
    steps = []
    with torch.no_grad():
        for x in inputs:
            y = module(x, *call_args)
            steps.append((y.clone(), [state_value(module, name) for name in state_names]))
    return steps


def loop_in_ort(test, onnx_file, tag, inputs, initial, steps, state_names):
    """Writes the loop's files and runs it in ONNX Runtime; returns its summary line."""
    loop = {"state": [], "steps": []}
    for name, value in zip(state_names, initial):
        np.save(path(f"{tag}.{name}.init.npy"), value.numpy())
        loop["state"].append({"input": name, "output": name + "_out", "initial": f"{tag}.{name}.init.npy"})
    for k, (x, (y, states)) in enumerate(zip(inputs, steps)):
        np.save(path(f"{tag}.x{k}.npy"), x.numpy())
        np.save(path(f"{tag}.y{k}.npy"), y.numpy())
        outputs = {"output_0": f"{tag}.y{k}.npy"}
        for name, value in zip(state_names, states):
            np.save(path(f"{tag}.{name}.{k}.npy"), value.numpy())
            outputs[name + "_out"] = f"{tag}.{name}.{k}.npy"
        loop["steps"].append({"inputs": {"x": f"{tag}.x{k}.npy"}, "outputs": outputs})
    with open(path(f"{tag}.loop.json"), "w") as fh:
        json.dump(loop, fh)
    r = subprocess.run(["node", ORT_STATE_LOOP, onnx_file, path(f"{tag}.loop.json")], capture_output=True, text=True)
    test.assertEqual(r.returncode, 0, r.stdout + r.stderr)
    return r.stdout.strip().splitlines()[-1]


class StateIoTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(TMP, exist_ok=True)

    def save(self, module, name):
        torch.manual_seed(0)
        torch.jit.script(module.eval()).save(path(name))
        return path(name)

    def check_loop(self, model_file, tag, shape, state_names, *export_args, call_args=(), start_from=None):
        """`start_from`: the ONNX file's first state per name where it is not the model file's."""
        onnx_file = path(tag + ".onnx")
        r = run("export", model_file, "-o", onnx_file, "--input", "x:" + "x".join(map(str, shape)), "--state-io",
                *export_args)
        graph = onnx.load(onnx_file).graph
        self.assertEqual([i.name for i in graph.input], ["x", *state_names])
        self.assertEqual([o.name for o in graph.output], ["output_0", *[n + "_out" for n in state_names]])
        module = torch.jit.load(model_file)
        initial = [(start_from or {}).get(name, state_value(module, name)) for name in state_names]
        torch.manual_seed(1)
        inputs = [torch.randn(*shape) for _ in range(STEPS)]
        steps = loop_in_torch(module, inputs, state_names, call_args)
        summary = loop_in_ort(self, onnx_file, tag, inputs, initial, steps, state_names)
        self.assertIn(f"{STEPS} steps, 0 outputs differ", summary)
        return r, graph, steps

    def test_script_mode_loop_with_resets(self):
        model = self.save(Resetting(), "resetting.pt")
        _, graph, steps = self.check_loop(model, "resetting", (2, 4), ["_count", "_state"], "--mode", "script")
        self.assertIn("If", [n.op_type for n in graph.node])
        # The loop went through resets: the state was all zeros after some steps and not after others.
        zero_states = sum(1 for _, states in steps if float(states[1].abs().max()) == 0.0)
        self.assertEqual(zero_states, STEPS // 6)
        # onnxport's own evaluator runs the same loop against libtorch, from three input sets.
        r = run("verify", model, path("resetting.onnx"), "--input", "x:2x4", "--steps", str(STEPS), "--mode", "script")
        self.assertIn(f"verify: ok: 3 input sets x {STEPS} steps, 3 outputs each", r.stdout)

    def test_submodule_state_in_trace_mode_and_read_only_buffer_stays(self):
        model = self.save(WithAverage(), "average.pt")
        _, graph, _ = self.check_loop(model, "average", (5, 3), ["stats.avg"], "--mode", "trace")
        self.assertEqual([i.name for i in graph.initializer], ["scale"])

    def test_gru_state_with_a_folded_number_argument(self):
        model = self.save(Gru(), "gru.pt")
        for sr in (16000, 8000):
            self.check_loop(model, f"gru{sr}", (1, 10, 4), ["_h"], "--input", f"sr:int={sr}", call_args=(sr,))

    def test_without_the_flag_a_warning_names_the_state(self):
        model = self.save(Resetting(), "resetting_plain.pt")
        out = path("plain.onnx")
        r = run("export", model, "-o", out, "--input", "x:2x4", "--mode", "script")
        self.assertIn("assigns module state (_count, _state)", r.stderr)
        self.assertIn("--state-io makes each an input and an output", r.stderr)
        self.assertEqual([i.name for i in onnx.load(out).graph.input], ["x"])
        r = run("verify", model, out, "--input", "x:2x4", "--steps", "3", ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("has no state inputs", r.stderr)
        self.assertIn("export the model with --state-io", r.stderr)

    def refusal(self, module, name, *export_args):
        """Exports `module` with --state-io expecting a refusal: one line, no file; returns it."""
        model = self.save(module, name + ".pt")
        out = path(name + ".onnx")
        r = run("export", model, "-o", out, "--input", "x:5", "--state-io", *export_args, ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertFalse(os.path.exists(out))
        return r.stderr

    def dims(self, graph, name, outputs=False):
        value = next(v for v in (graph.output if outputs else graph.input) if v.name == name)
        return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]

    def test_a_state_filled_by_the_first_call_takes_a_dynamic_dim(self):
        model = self.save(Filling(), "filling.pt")
        r, graph, _ = self.check_loop(model, "filling", (5,), ["_context"])
        self.assertIn("state '_context' changes size in calls (float32[0] -> float32[2]): the ONNX file takes dynamic "
                      "dims (_context axis 0) and starts from the model file's state", r.stderr)
        self.assertEqual(self.dims(graph, "_context"), ["_context_dim0"])
        self.assertEqual(self.dims(graph, "_context_out", outputs=True), [2])
        # verify starts both from the model file's state.
        r = run("verify", model, path("filling.onnx"), "--input", "x:5", "--steps", "20")
        self.assertIn("verify: ok: 3 input sets x 20 steps", r.stdout)

    def test_a_growing_cache_takes_dynamic_dims_in_and_out(self):
        model = self.save(Growing(), "growing.pt")
        r, graph, steps = self.check_loop(model, "growing", (5,), ["_cache"])
        self.assertIn("state '_cache' changes size in calls (float32[0] -> float32[5])", r.stderr)
        self.assertEqual(self.dims(graph, "_cache"), ["_cache_dim0"])
        self.assertEqual(self.dims(graph, "_cache_out", outputs=True), ["_cache_out_dim0"])
        self.assertEqual(list(steps[-1][1][0].shape), [5 * STEPS])

    def test_a_state_filled_in_a_branch_follows_the_branch_in_script_mode(self):
        model = self.save(Marking(), "marking.pt")
        r, graph, _ = self.check_loop(model, "marking", (5,), ["_history"], "--mode", "script")
        self.assertIn("If", [n.op_type for n in graph.node])
        self.assertEqual(self.dims(graph, "_history"), ["_history_dim0"])

    def test_a_trace_that_fixes_the_first_calls_branch_is_refused(self):
        stderr = self.refusal(Marking(), "marking_traced", "--mode", "trace")
        self.assertIn("--state-io: the graph traced from the model file's state does not give the module's next call "
                      "from the state ('_history') after it: their values differ", stderr)
        self.assertIn("export with --mode script", stderr)

    def test_voice_activity_shaped_model_with_state_made_in_its_first_call(self):
        model = self.save(Vad(), "vad.pt")
        for sr, width in ((16000, 512), (8000, 256)):
            zeros = {"_context": torch.zeros(2, 64 if sr == 16000 else 32), "_state": torch.zeros(2, 16)}
            r, graph, steps = self.check_loop(model, f"vad{sr}", (2, width), ["_context", "_state"], "--mode", "script",
                                              "--input", f"sr:int={sr}", call_args=(sr,), start_from=zeros)
            self.assertIn("states '_context', '_state' take their lasting types in the first call", r.stderr)
            self.assertIn(f"forward also assigns numbers (_last_batch_size = 2, _last_sr = {sr}), which are no state "
                          "inputs", r.stderr)
            # The branches on the remembered batch size and rate are decided for the first call on.
            self.assertNotIn("If", [n.op_type for n in graph.node])
            self.assertGreater(float(steps[-1][1][1].abs().max()), 0.0)
        # verify takes the states' shapes besides the arguments (needed where their dims are dynamic).
        r = run("verify", model, path("vad8000.onnx"), "--input", "x:2x256", "--input", "sr:int=8000",
                "--input", "_context:2x32", "--input", "_state:2x16", "--steps", "4", "--mode", "script")
        self.assertIn("verify: ok: 3 input sets x 4 steps", r.stdout)

    def test_a_state_not_made_from_zeros_is_refused(self):
        stderr = self.refusal(Marking((1, 2)), "marking2d", "--mode", "script")
        self.assertIn("--state-io: state '_history' is float32[0] in the model file and float32[1,2] after a call, "
                      "and a call from zeros in its place does not give the file's first call", stderr)
        self.assertIn("call it once, then save it", stderr)

    def test_a_state_whose_rank_keeps_changing_is_refused(self):
        stderr = self.refusal(Nesting(), "nesting")
        self.assertIn("--state-io: state '_record' is float32[0] in the model file and float32[1,0] after a call and "
                      "float32[1,1,0] after two: an input and output of the ONNX file cannot follow a dtype or rank "
                      "that keeps changing", stderr)

if __name__ == "__main__":
    unittest.main()
