"""One worker process of run_symbolic_tests.py: imports PyTorch 1.13's tests of symbolic functions
written in Python (test_custom_ops.py, test_autograd_funs.py, test_utility_funs.py), routes every
export they make to the chosen exporter with dropin_worker.py's hooks, and runs the cases it is given.

    symbolic_worker.py --tests DIR --exporter onnxport|torch [--internal-graphs] --list MODULE.CLASS...
        -> {"cases": [["MODULE.CLASS", method], ...]}
    symbolic_worker.py --tests DIR --exporter onnxport|torch [--internal-graphs] --run CASES.json
        -> dropin_worker.py's replies (CASES.json: [{"class": "MODULE.CLASS", "method": M}, ...])

Beyond dropin_worker.py's hooks:

- Graphs. Some tests inspect the graph torch.onnx's internal `utils._model_to_graph` returns (the
  kind of its first node, a node's string attribute): the graph torch.onnx.export serializes. In
  the test modules that function is replaced by `graph_from_export`, which exports with
  torch.onnx.export (so through the chosen exporter) at the opset _model_to_graph would use
  (GLOBALS.export_onnx_opset_version) and returns a view of the written ONNX graph: nodes() in file
  order, kind() "domain::op_type" ("onnx::" for the default domain), s/i/f(name) an attribute.
  --internal-graphs (torch only) leaves the tests as written.
- Isolation. Each case starts with torch.onnx's registry of symbolics, its GLOBALS and the
  tracer's module map as they were when the worker started: a test that registers a symbolic
  and never unregisters it (test_register_custom_op), or fails before it does, does not change
  the cases after it.
- Caffe2. test_custom_ops.py imports caffe2 and test_pytorch_onnx_caffe2 at its top for
  test_custom_add alone (not run: Debian has no caffe2); stand-ins that raise when used are
  installed for that import only.
"""
import argparse
import glob
import io
import json
import os
import sys
import time
import types
import unittest

import torch
import torch.onnx.utils
from torch.onnx._globals import GLOBALS
from torch.onnx._internal import registration

import dropin_worker

TEST_MODULES = ("test_custom_ops", "test_autograd_funs", "test_utility_funs")


class OnnxNode:
    """An ONNX NodeProto as the tests read torch._C.Node."""

    def __init__(self, node):
        self.node = node

    def kind(self):
        return f"{self.node.domain or 'onnx'}::{self.node.op_type}"

    def attributeNames(self):
        return [a.name for a in self.node.attribute]

    def _attribute(self, name):
        import onnx.helper

        for a in self.node.attribute:
            if a.name == name:
                return onnx.helper.get_attribute_value(a)
        raise RuntimeError(f"{self.kind()} has no attribute '{name}' (attributes: {self.attributeNames()})")

    def s(self, name):
        value = self._attribute(name)
        return value.decode() if isinstance(value, bytes) else value

    def i(self, name):
        return int(self._attribute(name))

    def f(self, name):
        return float(self._attribute(name))

    def inputsSize(self):
        return len(self.node.input)

    def outputsSize(self):
        return len(self.node.output)

    def __repr__(self):
        return f"{self.kind()}({', '.join(self.node.input)}) -> {', '.join(self.node.output)}"


class OnnxGraph:
    """An ONNX GraphProto as the tests read torch._C.Graph."""

    def __init__(self, model):
        self.model = model

    def nodes(self):
        return iter([OnnxNode(n) for n in self.model.graph.node])

    def __str__(self):
        import onnx.helper

        return onnx.helper.printable_graph(self.model.graph)


def graph_from_export(model, args, verbose=False, input_names=None, output_names=None,
                      operator_export_type=torch.onnx.OperatorExportTypes.ONNX, do_constant_folding=True,
                      _disable_torch_constant_prop=False, fixed_batch_size=False,
                      training=torch.onnx.TrainingMode.EVAL, dynamic_axes=None):
    """utils._model_to_graph's signature and result (graph, params_dict, torch_out), from the ONNX
    file torch.onnx.export writes; torch_out is None (no test here reads it)."""
    import onnx
    from onnx import numpy_helper

    f = io.BytesIO()
    torch.onnx.export(model, args, f, verbose=verbose, training=training, input_names=input_names,
                      output_names=output_names, operator_export_type=operator_export_type,
                      opset_version=GLOBALS.export_onnx_opset_version, do_constant_folding=do_constant_folding,
                      dynamic_axes=dynamic_axes)
    proto = onnx.load_from_string(f.getvalue())
    params = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in proto.graph.initializer}
    return OnnxGraph(proto), params, None


class _UtilsWithGraphFromExport(types.ModuleType):
    """torch.onnx.utils as a test module sees it, with _model_to_graph replaced (torch.onnx.export
    itself keeps the real one)."""

    def __getattr__(self, name):
        return graph_from_export if name == "_model_to_graph" else getattr(torch.onnx.utils, name)


def use_exported_graphs(module):
    for name, value in list(vars(module).items()):
        if value is torch.onnx.utils._model_to_graph:
            setattr(module, name, graph_from_export)
        elif value is torch.onnx.utils:
            setattr(module, name, _UtilsWithGraphFromExport("torch.onnx.utils"))


def import_without_caffe2(tests_dir, name):
    """Imports test module `name` with stand-ins for the caffe2 modules and test_pytorch_onnx_caffe2
    (which imports caffe2), removed again once it is imported; what the module takes from them
    raises when called."""

    class Absent(types.ModuleType):
        def __getattr__(self, attribute):
            if attribute.startswith("__"):
                raise AttributeError(attribute)

            def absent(*args, **kwargs):
                raise RuntimeError(f"{self.__name__}.{attribute}: caffe2 is not installed (symbolic_worker.py's stand-in)")

            return absent

    names = ["caffe2", "caffe2.python", "caffe2.python.onnx", "caffe2.python.onnx.backend", "test_pytorch_onnx_caffe2"]
    saved = {n: sys.modules[n] for n in names if n in sys.modules}
    for n in names:
        sys.modules[n] = Absent(n)
        parent, _, child = n.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, sys.modules[n])
    try:
        return dropin_worker.import_tests(tests_dir, name)
    finally:
        for n in names:
            sys.modules.pop(n, None)
        sys.modules.update(saved)


class State:
    """What a case may change that the next one must not see: torch.onnx's custom symbolics, its
    GLOBALS, the tracer's module map."""

    def __init__(self):
        self.overrides = {name: dict(group._functions._overrides) for name, group in registration.registry._registry.items()}
        self.globals = dict(vars(GLOBALS))
        self.trace_module_map = torch.jit._trace._trace_module_map

    def restore(self):
        for name, group in list(registration.registry._registry.items()):
            functions = group._functions
            wanted = self.overrides.get(name, {})
            for opset in list(functions._overrides):
                if functions._overrides[opset] is not wanted.get(opset):
                    functions.remove_override(opset)
            for opset, function in wanted.items():
                if functions._overrides.get(opset) is not function:
                    functions.override(opset, function)
            if name not in self.overrides and not functions._base:
                del registration.registry._registry[name]  # made by a test's registration alone
        vars(GLOBALS).clear()
        vars(GLOBALS).update(self.globals)
        torch.jit._trace._trace_module_map = self.trace_module_map


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tests", required=True)
    parser.add_argument("--exporter", choices=("onnxport", "torch"), required=True)
    parser.add_argument("--internal-graphs", action="store_true")
    parser.add_argument("--list", nargs="+", metavar="MODULE.CLASS")
    parser.add_argument("--run", metavar="CASES.json")
    args = parser.parse_args()

    dropin_worker.take_stdout()
    dropin_worker.install_hooks(args.exporter)
    tests_dir = os.path.abspath(args.tests)

    modules = {}

    def module(name):
        if name not in modules:
            if name not in TEST_MODULES:
                raise ValueError(f"{name} is not one of {TEST_MODULES}")
            if name == "test_custom_ops":
                modules[name] = import_without_caffe2(tests_dir, name)
            else:
                modules[name] = dropin_worker.import_tests(tests_dir, name)
            if not args.internal_graphs:
                use_exported_graphs(modules[name])
        return modules[name]

    if args.list:
        loader = unittest.TestLoader()
        dropin_worker.send(cases=[[c, m] for c in args.list
                                  for m in loader.getTestCaseNames(getattr(module(c.split(".")[0]), c.split(".")[1]))])
        return
    with open(args.run) as f:
        cases = json.load(f)
    for name in {c["class"].split(".")[0] for c in cases}:
        module(name)
    state = State()
    for i, case in enumerate(cases):
        dropin_worker.send(start=i)
        start = time.monotonic()
        module_name, cls = case["class"].split(".")
        try:
            status, stage, reason = dropin_worker.run_case(module(module_name), cls, case["method"])
        finally:
            state.restore()
        dropin_worker.send(result={"status": status, "stage": stage, "reason": reason,
                                   "seconds": round(time.monotonic() - start, 2)})
        for name in glob.glob("*.onnx"):  # a test may export to a file of its own
            os.remove(name)


if __name__ == "__main__":
    main()
