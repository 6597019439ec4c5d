"""What differs between the PyTorch releases the Python package runs on (1.13 on Debian 12, 2.6 on
Debian 13), told apart by what the installed torch offers rather than by its version number."""
import dataclasses

import torch
from torch.onnx._internal import jit_utils

# PyTorch 2 added a last, required `store_inputs` argument (keep the example inputs on the module).
_TRACE_TAKES_STORE_INPUTS = "store_inputs" in (torch._C.ScriptModule._create_method_from_trace.__doc__ or "")

# PyTorch 2 added `values_in_env` (the set of env's values) to the context symbolics receive.
_CONTEXT_FIELDS = {field.name for field in dataclasses.fields(jit_utils.GraphContext)}


def create_method_from_trace(module, name, func, args, name_lookup, argument_names):
    """Records `func` on `args` as `module`'s method `name` (not strict, not forced out of place,
    the example inputs not kept)."""
    extra = (False,) if _TRACE_TAKES_STORE_INPUTS else ()
    module._create_method_from_trace(name, func, args, name_lookup, False, False, argument_names, *extra)


def graph_context(graph, opset, original_node):
    """torch.onnx's GraphContext for a symbolic called on `original_node` of `graph` at `opset`,
    with no parameters and an empty environment."""
    fields = {"graph": graph, "block": graph.block(), "opset": opset, "original_node": original_node,
              "params_dict": {}, "env": {}}
    if "values_in_env" in _CONTEXT_FIELDS:
        fields["values_in_env"] = set()
    return jit_utils.GraphContext(**fields)
