"""The Python half of onnxport's Python op-pack bridge (python/bridge/): torch.onnx symbolic
functions run unchanged, on real torch._C graphs, and what they build is handed to the C++ side
as plain data, which replays it into onnxport's graph with g.op.

The bridge library compiles this file in and runs it as the module `onnxport._bridge`, in the
embedded interpreter of the command line or in the Python process that imported onnxport, after
_torch_release.py in the same module: `graph_context` comes from there.

One symbolic call: a scratch torch._C.Graph gets one value per argument of the TorchScript node,
made the way torch.onnx's own conversion presents them (typed tensors as graph inputs, constants
as onnx::Constant, None as a None prim::Constant, lists as prim::ListConstruct); the symbolic runs
with a GraphContext on that graph at the target opset; the nodes it inserted are described in order
(op, inputs, attributes, output count) and its result is given as references to them.
"""
import os
import runpy
import traceback

import torch
from torch import _C
from torch.onnx import symbolic_helper
from torch.onnx._globals import GLOBALS
from torch.onnx._internal import registration

# onnxport's DType numbering is ONNX's TensorProto.DataType.
_TORCH_DTYPES = {1: torch.float32, 2: torch.uint8, 3: torch.int8, 5: torch.int16, 6: torch.int32, 7: torch.int64,
                 9: torch.bool, 10: torch.float16, 11: torch.float64, 14: torch.complex64, 15: torch.complex128,
                 16: torch.bfloat16}
_ONNX_DTYPES = {v: k for k, v in _TORCH_DTYPES.items()}

# The opsets onnxport maps (options.h: kMinOpset, kMaxMappedOpset); a build whose ONNX stops
# earlier never asks for the rest.
MIN_OPSET, MAX_OPSET = 7, 22

# prim::PythonOp (a torch.autograd.Function traced by the Python package) has one symbolic per
# node: the Function's own `symbolic`, else torch.onnx's registration for prim::PythonOp.
PYTHON_OP = "prim::PythonOp"
PYTHON_OP_KEY = -1
PYTHON_OP_ATTRIBUTE = "onnxport_python_op"  # the node's id in _python_ops
# A Function with a symbolic that returns a tuple is called through this op instead (the
# interpreter runs a prim::PythonOp with one output only, and tuples are flattened before the run
# that records types): its tensors as a list in, the results as a list out.
PYTHON_CALL = "onnxport_python::call"
PYTHON_CALL_KEY = -2

# The ops whose plain-number operands torch.onnx retypes to the tensors' type after conversion
# (its scalar type analysis pass): a symbolic may write Mul(x, Constant(0.5 as double)).
_SCALAR_TYPE_OPS = {"Add", "Sub", "Mul", "Div", "Gemm", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Equal",
                    "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Where", "Clip"}

_functions = {}  # key -> the decorated symbolic torch.onnx would call
_key_of = {}  # the reverse, so that a function re-read before each export keeps its key
_pack_of_op = {}  # "mylib::op" -> file of the .py pack that registered it (CLI)
_python_ops = {}  # id -> prim::PythonOp node of the module being exported
_python_calls = {}  # id -> _Call of a tuple-returning Function rewritten to PYTHON_CALL
_library = []  # the torch.library.Library defining PYTHON_CALL, once per process
_symbolic_exception = [None]  # what the last failing symbolic raised (the Python package re-raises it)


# Libraries that register torch.onnx symbolics for their own ops when imported, and whose ops
# onnxport's built-in packs map: their registrations are not used. torchvision registers roi_align
# at opset 11 for every opset, approximating aligned=True, where the torchvision pack writes
# RoiAlign-16 exactly; the user did not ask for either.
_SUPERSEDED_LIBRARIES = ("torchvision.",)


def _custom_registrations():
    """{(name, opset): function} of every custom symbolic in torch.onnx's registry, but those a
    library in _SUPERSEDED_LIBRARIES registered on import."""
    found = {}
    for name in registration.registry.all_functions():
        group = registration.registry.get_function_group(name)
        functions = group._functions
        for opset in list(functions):
            module = getattr(functions[opset], "__module__", None) or ""
            if functions.overridden(opset) and not module.startswith(_SUPERSEDED_LIBRARIES):
                found[(name, opset)] = functions[opset]
    return found


def _dispatch(names):
    """[(name, registered opset, key, [target opsets])]: for each op, the custom symbolics torch.onnx
    dispatches to at each target opset onnxport exports (its own rule, applied by its registry)."""
    out = []
    for name in sorted(names):
        group = registration.registry.get_function_group(name)
        served = {}
        for target in range(MIN_OPSET, MAX_OPSET + 1):
            version = registration._dispatch_opset_version(target, group._functions)
            if version is not None and group._functions.overridden(version):
                served.setdefault(version, []).append(target)
        for version, targets in sorted(served.items()):
            function = group._functions[version]
            key = _key_of.setdefault(function, len(_key_of))
            _functions[key] = function
            out.append((name, version, key, targets))
    return out


def load_pack(path):
    """Runs the .py file once; returns ("ok", registrations) for the symbolics it registered, or
    ("error", one line naming the file and line)."""
    before = _custom_registrations()
    try:
        runpy.run_path(path, run_name="onnxport_pack_" + os.path.splitext(os.path.basename(path))[0])
    except BaseException as e:  # SystemExit too: a pack must not end the exporter
        return "error", "importing the Python op pack failed: " + _one_line(e, path)
    after = _custom_registrations()
    names = {name for key, fn in after.items() if before.get(key) is not fn for name in [key[0]]}
    for name in names:
        _pack_of_op[name] = path
    return "ok", _dispatch(names)


def process_symbolics():
    """The custom symbolics registered in this process (torch.onnx.register_custom_op_symbolic),
    other than those of .py packs loaded here; prim::PythonOp when the module has such nodes."""
    registered = _dispatch({name for name, _ in _custom_registrations() if name not in set(_pack_of_op) | {PYTHON_OP}})
    if _python_ops:
        registered.append((PYTHON_OP, 1, PYTHON_OP_KEY, list(range(MIN_OPSET, MAX_OPSET + 1))))
    if _python_calls:
        registered.append((PYTHON_CALL, 1, PYTHON_CALL_KEY, list(range(MIN_OPSET, MAX_OPSET + 1))))
    return registered


def take_symbolic_exception():
    """The exception the last failing symbolic raised, once (None if none failed since)."""
    exception, _symbolic_exception[0] = _symbolic_exception[0], None
    return exception


def forget_python_ops():
    """After an export: the nodes of its module are not converted again."""
    _python_ops.clear()
    _python_calls.clear()


class _Call:
    """What a rewritten Function call needs once its prim::PythonOp is gone."""

    def __init__(self, node):
        self.function = _function_of(node)
        self.apply = node.pyobj()
        self.cconv = node.cconv()
        self.scalars = list(node.scalar_args())
        self.name = node.pyname()

    def arguments(self, tensors):
        tensors, scalars = iter(tensors), iter(self.scalars)
        return [next(tensors) if kind == "d" else next(scalars) for kind in self.cconv]


def _run_call(inputs, call_id):
    return list(_python_calls[call_id].apply(*_python_calls[call_id].arguments(inputs)))


def _define_call_op():
    if not _library:
        library = torch.library.Library("onnxport_python", "DEF")
        library.define("call(Tensor[] inputs, int id) -> Tensor[]")
        library.impl("call", _run_call, "CPU")
        _library.append(library)


def _rewrite_tuple_call(graph, node):
    """%t = ^Function(...) -> list op call, ListUnpack, TupleConstruct (which tuple lowering removes)."""
    _define_call_op()
    call_id = len(_python_calls)
    _python_calls[call_id] = _Call(node)
    out = node.output()
    elements = out.type().elements()
    with graph.insert_point_guard(node):
        tensors = graph.insertNode(graph.create("prim::ListConstruct", list(node.inputs()), 1)).output()
        tensors.setType(_C.ListType.ofTensors())
        call = graph.insertNode(graph.create(PYTHON_CALL, [tensors, graph.insertConstant(call_id)], 1))
        call.output().setType(_C.ListType.ofTensors())
        unpack = graph.insertNode(graph.create("prim::ListUnpack", [call.output()], len(elements)))
        for value, element_type in zip(unpack.outputs(), elements):
            value.setType(element_type)
        results = graph.insertNode(graph.create("prim::TupleConstruct", list(unpack.outputs()), 1)).output()
        results.setType(out.type())
    out.replaceAllUsesWith(results)
    node.destroy()


def register_python_ops(graphs, opset, keep=False, owned=True):
    """Prepares the prim::PythonOp nodes (torch.autograd.Function calls) of a module's method
    `graphs` as torch.onnx does at `opset` (keep: for ONNX_FALLTHROUGH, leave them all as they
    are): a Function without a `symbolic`, when no symbolic is registered for prim::PythonOp, is
    replaced by the operations its forward ran (recorded by the tracer); every other one is marked
    with its id, so that the node the exporter converts (a frozen copy) leads back to the Function
    and its non-tensor arguments. Returns whether prim::PythonOp nodes are left in the graphs."""
    _python_ops.clear()
    _symbolic_exception[0] = None
    if keep:  # operator_export_type ONNX_FALLTHROUGH: torch.onnx keeps the nodes as they are
        return any(graph.findAllNodes(PYTHON_OP) for graph in graphs)
    group = registration.registry.get_function_group(PYTHON_OP)
    registered = group is not None and group.get(opset) is not None

    def inlinable(node):
        return not registered and not hasattr(_function_of(node), "symbolic") and node.hasAttribute("Subgraph")

    for graph in graphs:
        # a Function's recorded operations may call another Function: inline until none is left
        while any(inlinable(node) for node in graph.findAllNodes(PYTHON_OP)):
            for node in graph.findAllNodes(PYTHON_OP):  # in nested blocks too
                if inlinable(node):
                    _inline(graph, node, node.g("Subgraph"))
        for node in graph.findAllNodes(PYTHON_OP):
            if owned and node.outputsSize() == 1 and isinstance(node.output().type(), _C.TupleType):
                _rewrite_tuple_call(graph, node)  # the module is the package's own trace
                continue
            node.i_(PYTHON_OP_ATTRIBUTE, len(_python_ops))
            _python_ops[len(_python_ops)] = node
    return bool(_python_ops)


def _function_of(node):
    return getattr(node.pyobj(), "__self__", None)  # Function.apply is bound to the Function class


def _inline(graph, node, body):
    values = dict(zip(body.inputs(), node.inputs()))
    with graph.insert_point_guard(node):
        for inner in body.nodes():
            clone = graph.insertNode(graph.createClone(inner, lambda v: values[v]))
            values.update(zip(inner.outputs(), clone.outputs()))
    results = [values[r] for r in body.outputs()]
    outputs = list(node.outputs())
    if len(outputs) == 1 and len(results) > 1:  # a Function returning a tuple: one tuple-typed output
        with graph.insert_point_guard(node):
            results = [graph.insertNode(graph.create("prim::TupleConstruct", results, 1)).output()]
        results[0].setType(outputs[0].type())
    for out, result in zip(outputs, results):
        out.replaceAllUsesWith(result)
    node.destroy()


class _ListResult:
    """A symbolic's values given back as one list value (PYTHON_CALL's Tensor[] output)."""

    def __init__(self, values):
        self.values = list(values)


def _python_call(context, inputs):
    """PYTHON_CALL: the rewritten Function's symbolic on its tensors and numbers; its results as a list."""
    call = _python_calls[symbolic_helper._get_const(inputs[1], "i", "id")]
    results = _function_symbolic(context, call, call.arguments(list(inputs[0].node().inputs())), {})
    return _ListResult(results if isinstance(results, (tuple, list)) else [results])


def _python_op(context, inputs, attributes):
    """torch.onnx's conversion of a prim::PythonOp: the arguments in the order of the call (tensors
    and the numbers kept on the node), to the Function's symbolic or the registered one."""
    node = _python_ops[attributes[PYTHON_OP_ATTRIBUTE]]
    context.original_node = node
    call = _Call(node)
    keywords = {name: getattr(node, node.kindOf(name))(name) for name in node.attributeNames()
                if name != PYTHON_OP_ATTRIBUTE}
    return _function_symbolic(context, call, call.arguments(inputs), keywords)


def _function_symbolic(context, call, arguments, keywords):
    """The Function's `symbolic` staticmethod, else the symbolic registered for prim::PythonOp
    (given the node's attributes and the Function's name), as torch.onnx picks them."""
    if hasattr(call.function, "symbolic"):
        return call.function.symbolic(context, *arguments)
    group = registration.registry.get_function_group(PYTHON_OP)
    registered = group.get(context.opset) if group else None
    if registered is None:
        raise _Refusal(f"torch.autograd.Function {call.name} has no symbolic staticmethod and no symbolic is "
                       "registered for prim::PythonOp: add `def symbolic(g, ...)` to the Function, or register one")
    return registered(context, *arguments, **{**keywords, "name": call.name})


class _Refusal(RuntimeError):
    """What the bridge cannot carry, or nothing converts the node: the message says what to do."""


def _one_line(error, path=None):
    """"file:line: Type: message" at the deepest frame in `path` (else the deepest outside torch)."""
    if isinstance(error, _Refusal):
        return str(error)
    frames = traceback.extract_tb(error.__traceback__)
    if isinstance(error, SyntaxError) and error.filename:
        where = f"{error.filename}:{error.lineno}"
    else:
        chosen = None
        for frame in frames:
            if (path and os.path.abspath(frame.filename) == os.path.abspath(path)) or (
                    not path and "/torch/" not in frame.filename and not frame.filename.endswith("_bridge.py")):
                chosen = frame
        chosen = chosen or (frames[-1] if frames else None)
        where = f"{chosen.filename}:{chosen.lineno}" if chosen else "<unknown>"
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{where}: {type(error).__name__}" + (f": {message}" if message else "")


def _tensor_data(t):
    t = t.detach().contiguous().cpu()
    return (_ONNX_DTYPES[t.dtype], list(t.shape), t.numpy().tobytes() if t.dtype != torch.bfloat16
            else t.view(torch.int16).numpy().tobytes())


def _tensor_from(dtype, shape, data):
    torch_dtype = _TORCH_DTYPES[dtype]
    if not data:
        return torch.zeros(shape, dtype=torch_dtype)
    return torch.frombuffer(bytearray(data), dtype=torch_dtype).reshape(shape).clone()


def _tensor_type(dtype, dims):
    t = _C.TensorType.create_from_tensor(torch.empty(0, dtype=_TORCH_DTYPES.get(dtype, torch.float32)))
    if dims is not None:
        t = t.with_sizes([d if isinstance(d, int) and d >= 0 else None for d in dims])
    return t


class _Scratch:
    """The scratch graph of one call, and the values made for the node's arguments."""

    def __init__(self):
        self.graph = _C.Graph()
        self.made = set()  # nodes made here (not by the symbolic)
        self.refs = {}  # scratch value -> reference the C++ side resolves

    def _node(self, kind, inputs=()):
        node = self.graph.insertNode(self.graph.create(kind, list(inputs), 1))
        self.made.add(node)
        return node

    def constant(self, payload):
        node = self._node("onnx::Constant")
        if isinstance(payload, str):
            node.s_("value", payload)
        else:
            # numbers as torch.onnx's conversion makes them: int64, double, bool 0-d tensors
            value = (_tensor_from(*payload) if isinstance(payload, tuple) else
                     torch.tensor(payload, dtype=torch.double) if isinstance(payload, float) else torch.tensor(payload))
            node.t_("value", value)
            node.output().inferTypeFrom(value)
        return node.output()

    def argument(self, desc, ref):
        kind = desc[0]
        if kind == "none":
            node = self._node("prim::Constant")
            node.output().setType(_C.NoneType.get())
            value = node.output()
        elif kind == "const":
            value = self.constant(desc[1])
        elif kind == "list":
            items = [self.argument(item, ref + (i,)) for i, item in enumerate(desc[1])]
            node = self._node("prim::ListConstruct", items)
            value = node.output()
            element = items[0].type() if items else _C.TensorType.get()
            value.setType(_C.ListType(element) if items else _C.ListType.ofTensors())
        else:  # "tensor" or "sequence": a value known only by its type
            value = self.graph.addInput()
            tensor_type = _tensor_type(desc[1], desc[2])
            value.setType(_C.ListType(tensor_type) if kind == "sequence" else tensor_type)
        self.refs[value] = ("arg",) + ref
        return value


def _attribute(node, name):
    kind = node.kindOf(name)
    value = getattr(node, kind)(name)
    if kind == "t":
        return name + "_t", ("tensor",) + _tensor_data(value)
    if kind == "ts":
        return name + "_t", [("tensor",) + _tensor_data(v) for v in value]
    if kind in ("g", "gs"):
        raise _Refusal(f"attribute '{name}' of {node.kind()} holds a graph, which onnxport's Python bridge does not "
                       "carry yet — write this mapping in a C++ op pack")
    return name + "_" + kind[0], value


def _retyped_constant(value, dtype):
    """A plain number's constant in the type of the tensors beside it, as torch.onnx retypes it."""
    node = value.node()
    if node.kind() != "onnx::Constant" or node.kindOf("value") != "t":
        return None
    t = node.t("value")
    if t.dim() != 0 or t.dtype == dtype or not (t.is_floating_point() or dtype.is_floating_point):
        return None
    return ("tensor",) + _tensor_data(t.to(dtype))


# The ONNX graph attributes the blocks of a control-flow node become.
_BLOCK_ATTRIBUTES = {"onnx::If": ("then_branch_g", "else_branch_g"), "onnx::Loop": ("body_g",)}


def _describe(scratch, result, op_name):
    """The symbolic's nodes in order and its result. A node is (op, inputs, attributes, outputs,
    index): index numbers every node of the call, inside sub-blocks too, so that a reference
    ("node", index, output) means one value wherever it is used (ONNX sub-graphs may read values
    of the graphs around them)."""
    counter = [0]
    nodes = _describe_nodes(scratch, scratch.graph.nodes(), op_name, counter)
    return nodes, _result_refs(scratch, result, op_name)


def _describe_nodes(scratch, block_nodes, op_name, counter):
    nodes = []
    for node in block_nodes:
        if node in scratch.made:
            continue
        kind = node.kind()
        index = counter[0]
        counter[0] += 1
        blocks = list(node.blocks())
        if blocks and len(blocks) != len(_BLOCK_ATTRIBUTES.get(kind, ())):
            raise _Refusal(f"the symbolic for {op_name} built {kind} with {len(blocks)} sub-block(s), which onnxport's "
                           "Python bridge carries only for If (2) and Loop (1) — write this mapping in a C++ op pack")
        if kind == "prim::ListConstruct":
            nodes.append(("list", [scratch.refs.get(v) for v in node.inputs()], [], 1, index))
        elif kind == "prim::Constant" and node.mustBeNone():
            nodes.append(("none", [], [], 1, index))
        elif kind.startswith("onnx::") or not kind.startswith(("prim::", "aten::")):
            op = kind[len("onnx::"):] if kind.startswith("onnx::") else kind
            inputs = list(node.inputs())
            tensor_types = [v.type().dtype() for v in inputs if isinstance(v.type(), _C.TensorType)
                            and v.type().dtype() is not None and not _is_plain_number(v)]
            refs = []
            for v in inputs:
                retyped = (_retyped_constant(v, tensor_types[0])
                           if op in _SCALAR_TYPE_OPS and tensor_types and _is_plain_number(v) else None)
                refs.append(retyped if retyped else scratch.refs.get(v))
            attributes = [_attribute(node, name) for name in sorted(node.attributeNames())]
            for name, block in zip(_BLOCK_ATTRIBUTES.get(kind, ()), blocks):
                attributes.append((name, _describe_block(scratch, node, block, op_name, counter)))
            nodes.append((op, refs, attributes, node.outputsSize(), index))
        else:
            raise _Refusal(f"the symbolic for {op_name} made a {kind} node, which onnxport's Python bridge does not "
                           "carry — emit ONNX ops, or write this mapping in a C++ op pack")
        for i, out in enumerate(node.outputs()):
            scratch.refs[out] = ("node", index, i)
    return nodes


def _describe_block(scratch, node, block, op_name, counter):
    """("graph", id, input types, nodes, output references) of one sub-block. A Loop body's inputs
    are the iteration number, the condition and the carried values, typed like the Loop's own
    inputs when the symbolic left them untyped."""
    block_id = counter[0]
    counter[0] += 1
    node_inputs = list(node.inputs())
    input_types = []
    for i, value in enumerate(block.inputs()):
        scratch.refs[value] = ("block_input", block_id, i)
        described = _type_of(value)
        if described[0] == 0 and node.kind() == "onnx::Loop":
            described = ((7, [], False) if i == 0 else (9, [], False) if i == 1 else
                         _type_of(node_inputs[i]) if i < len(node_inputs) else described)
        input_types.append(described)
    nodes = _describe_nodes(scratch, block.nodes(), op_name, counter)
    return ("graph", block_id, input_types, nodes, [scratch.refs.get(v) for v in block.outputs()])


def _type_of(value):
    """(onnx dtype or 0, dims or None, is a sequence) of a scratch value's type."""
    t = value.type()
    sequence = isinstance(t, _C.ListType)
    if sequence:
        t = t.getElementType()
    if not isinstance(t, _C.TensorType) or t.dtype() is None:
        return (0, None, sequence)
    sizes = t.varyingSizes()
    dims = None if sizes is None else [d if d is not None else -1 for d in sizes]
    return (_ONNX_DTYPES.get(t.dtype(), 0), dims, sequence)


def _is_plain_number(value):
    node = value.node()
    return (node.kind() == "onnx::Constant" and node.kindOf("value") == "t" and node.t("value").dim() == 0)


def _result_refs(scratch, result, op_name):
    if result is None:
        return None
    if isinstance(result, _ListResult):
        return ("list", [_result_refs(scratch, r, op_name) for r in result.values])
    if isinstance(result, (tuple, list)):
        return [_result_refs(scratch, r, op_name) if r is not None else ("none",) for r in result]
    if isinstance(result, torch.Tensor):
        return ("tensor",) + _tensor_data(result)
    if result not in scratch.refs:
        raise TypeError(f"the symbolic for {op_name} returned {result!r}, not a value of its graph")
    return scratch.refs[result]


class _Globals:
    """torch.onnx's export-wide settings as an export at `opset` has them, restored after."""

    def __init__(self, opset):
        self.opset = opset

    def __enter__(self):
        self.saved = (GLOBALS.export_onnx_opset_version, GLOBALS.operator_export_type, GLOBALS.onnx_shape_inference)
        GLOBALS.export_onnx_opset_version = self.opset
        GLOBALS.operator_export_type = _C._onnx.OperatorExportTypes.ONNX
        GLOBALS.onnx_shape_inference = True

    def __exit__(self, *exc):
        (GLOBALS.export_onnx_opset_version, GLOBALS.operator_export_type, GLOBALS.onnx_shape_inference) = self.saved


def run_symbolic(key, opset, op_name, arguments, output_types, attributes):
    """Calls symbolic `key` for one node of kind `op_name` at `opset`. arguments: one description
    per node input; output_types: (dtype, dims) per node output; attributes: the node's integer
    attributes. Returns ("ok", nodes, result) or ("error", one line: file:line, exception)."""
    scratch = _Scratch()
    try:
        inputs = [scratch.argument(desc, (i,)) for i, desc in enumerate(arguments)]
        original = scratch.graph.create(op_name, inputs, len(output_types))
        for out, (dtype, dims) in zip(original.outputs(), output_types):
            out.setType(_tensor_type(dtype, dims))
        context = graph_context(scratch.graph, opset, original)
        with _Globals(opset):
            if key == PYTHON_OP_KEY:
                result = _python_op(context, inputs, attributes)
            elif key == PYTHON_CALL_KEY:
                result = _python_call(context, inputs)
            else:
                result = _functions[key](context, *inputs)
        nodes, refs = _describe(scratch, result, op_name)
        return "ok", nodes, refs
    except Exception as e:
        _symbolic_exception[0] = e
        return "error", _one_line(e, _pack_of_op.get(op_name)), None
