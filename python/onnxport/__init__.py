"""onnxport from Python: torch.onnx.export's signature, onnxport's exporter.

    import onnxport
    onnxport.export(model, (x,), "model.onnx", opset_version=17, dynamic_axes={"x": {0: "batch"}})

`export` takes the arguments of torch.onnx.export (PyTorch 1.13) with the same names, defaults
and meaning, plus onnxport's own keywords (plugin_dirs, mode and every other key of
`onnxport export --print-config`, e.g. extra_outputs=["layer3.1"] to make what a module returns
an extra graph output). Errors raise onnxport.ExportError with the one-line message
the command line prints.
"""
import contextlib
import copy
import inspect
import json
import os
import shutil
import tempfile
import warnings

import torch

from . import _onnxport, _torch_release

ExportError = _onnxport.ExportError


class NoneArgumentError(ExportError, ValueError):
    """A None among the arguments of a scripted model, which its graph cannot type: an
    ExportError, and a ValueError as torch.onnx.export raises there."""

__all__ = ["export", "ops", "plugins", "ExportError", "NoneArgumentError"]

_TRAINING = {torch.onnx.TrainingMode.EVAL: "eval", torch.onnx.TrainingMode.PRESERVE: "preserve",
             torch.onnx.TrainingMode.TRAINING: "train"}
_OPERATOR_EXPORT_TYPE = {
    torch.onnx.OperatorExportTypes.ONNX: "onnx",
    torch.onnx.OperatorExportTypes.ONNX_ATEN: "onnx_aten",
    torch.onnx.OperatorExportTypes.ONNX_ATEN_FALLBACK: "onnx_aten_fallback",
    torch.onnx.OperatorExportTypes.ONNX_FALLTHROUGH: "onnx_fallthrough",
}


def ops(opset=0, pack="", plugin_dirs=()):
    """Every registered mapping as a dict {op, since_opset, pack, file, override[, overrides]}, as
    `onnxport ops --json` lists them; `opset`/`pack` filter like --opset/--pack."""
    return json.loads(_onnxport.ops_json(_dirs(plugin_dirs), int(opset), str(pack)))


def plugins(plugin_dirs=()):
    """Every op pack found, as `onnxport plugins --json` lists them (status and error included)."""
    return json.loads(_onnxport.plugins_json(_dirs(plugin_dirs)))


def export(model, args=(), f=None, export_params=True, verbose=False, training=torch.onnx.TrainingMode.EVAL,
           input_names=None, output_names=None, operator_export_type=torch.onnx.OperatorExportTypes.ONNX,
           opset_version=None, do_constant_folding=True, dynamic_axes=None, keep_initializers_as_inputs=None,
           custom_opsets=None, export_modules_as_functions=False, *, kwargs=None, dynamo=False,
           external_data=None, dynamic_shapes=None, custom_translation_table=None, profile=False,
           dump_exported_program=False, artifacts_dir=".", fallback=False, autograd_inlining=True, verify=False,
           plugin_dirs=None, mode=None, report=None, **onnxport_options):
    """Exports `model` (an nn.Module, ScriptModule or ScriptFunction, or with PyTorch 2 a torch.export
    ExportedProgram, exported as it is, not run) run on `args` to ONNX file `f`
    (a path or a binary file object), as torch.onnx.export does. `args` is a tensor, a tuple of
    arguments, or a tuple ending in a dict of keyword arguments; `kwargs` (PyTorch 2) is that dict.
    opset_version None means onnxport's default (17). report: a path (.json or .md) to write the
    export report to, also when the export fails. Returns the report as a dict
    (docs/export-report.md). mode: "trace", "script" or "auto" (default "auto": control flow that
    depends on tensor values or dynamic sizes is kept as ONNX If/Loop, as torch.onnx keeps the
    scripted functions a traced model calls; the rest is traced).
    PyTorch 2's keywords: artifacts_dir is taken and changes nothing, as on torch.onnx's
    TorchScript path (dynamo=False); external_data is onnxport's option of that name (True: the
    initializers in MODEL.onnx.data, as torch.onnx's dynamo path writes them; a str names the file;
    None, the default, or False: in the model unless they pass protobuf's 2 GiB); what only the
    dynamo path does (dynamo=True, dynamic_shapes, custom_translation_table, verify, profile,
    dump_exported_program, fallback, report=True) is refused in one line instead of being ignored."""
    _refuse_dynamo_only(dynamo=dynamo, dynamic_shapes=dynamic_shapes, custom_translation_table=custom_translation_table,
                        verify=verify, profile=profile, dump_exported_program=dump_exported_program, fallback=fallback,
                        report=report)
    if report is False:
        report = None
    if not autograd_inlining:
        raise ExportError("config error: onnxport.export(): autograd_inlining=False is not supported by onnxport "
                          "— a torch.autograd.Function without a symbolic is exported as the operations it ran "
                          "(autograd_inlining=True)")
    if f is None:
        raise ExportError("config error: onnxport.export(): no file to write — give f, a path or a binary file object")
    if kwargs is not None:
        args = ((args,) if isinstance(args, torch.Tensor) else tuple(args)) + (dict(kwargs),)
    if external_data is not None:
        onnxport_options["external_data"] = external_data
    if export_modules_as_functions:
        raise ExportError("export error: export_modules_as_functions is not supported by onnxport "
                          "— leave it False (modules are exported inlined, their paths kept in node names)")
    if training not in _TRAINING:
        raise ExportError(f"config error: onnxport.export(): training must be a torch.onnx.TrainingMode, got {training!r}")
    if operator_export_type not in _OPERATOR_EXPORT_TYPE:
        raise ExportError("config error: onnxport.export(): operator_export_type must be a "
                          f"torch.onnx.OperatorExportTypes, got {operator_export_type!r}")
    options = {
        "export_params": bool(export_params),
        "verbose": bool(verbose),
        "training": _TRAINING[training],
        "operator_export_type": _OPERATOR_EXPORT_TYPE[operator_export_type],
        "do_constant_folding": bool(do_constant_folding),
        "keep_initializers_as_inputs": bool(keep_initializers_as_inputs),
    }
    optional = {"input_names": input_names, "output_names": output_names, "opset_version": opset_version,
                "dynamic_axes": _without_repeated_axes(dynamic_axes), "custom_opsets": custom_opsets,
                "plugin_dirs": plugin_dirs}
    # torch.onnx's leniency, which the command line does not have: inputs the graph never reads
    # are dropped; dynamic_axes names that match nothing, and dynamic axes the model cannot run
    # grown (no proof either way), are warnings.
    options.update(drop_unused_inputs=True, ignore_unknown_dynamic_axes=True, warn_unproven_dynamic_axes=True)
    options["default_dtype"] = _default_dtype()
    options.update({k: _jsonable(v) for k, v in optional.items() if v is not None})
    options.update({k: _jsonable(v) for k, v in onnxport_options.items()})
    if "inputs" in options:
        raise ExportError("config error: onnxport.export(): argument 'inputs' is not taken here "
                          "— pass the example inputs as `args`")

    if _is_exported_program(model):
        return _export_program(model, args, f, options, plugin_dirs, report, verbose)
    positional = _positional_args(model, args)
    if isinstance(model, (torch.jit.ScriptModule, torch.jit.ScriptFunction)):
        _refuse_none_arguments(positional)
    owned = not isinstance(model, torch.jit.ScriptModule)  # traced here: its graphs may be rewritten
    threads = options.get("threads")  # a value of the wrong type: torch's setting, and the export refuses it
    with _onnxport.intra_op_threads(threads if threads is None or isinstance(threads, int) else 0):
        module, positional, _ = _script_module(model, positional, training)
    # Not "trace" for a traced module: its scripted islands (torchvision's
    # @_script_if_tracing functions) would be re-traced, and the re-trace bakes in every size.
    options["mode"] = mode if mode is not None else "auto"
    exporter = _onnxport.exporter(_dirs(plugin_dirs or ()))
    # torch.autograd.Function calls (prim::PythonOp): their `symbolic` staticmethod, a symbolic
    # registered for prim::PythonOp, or else the operations they ran, as torch.onnx does
    bridge = _onnxport.bridge()
    holds_python_objects = bridge.register_python_ops(
        _onnxport.method_graphs(module), opset_version or 17,
        operator_export_type == torch.onnx.OperatorExportTypes.ONNX_FALLTHROUGH, owned)
    try:
        with _output_path(f) as path:
            result = json.loads(exporter.export(module, _flatten_tuples(positional), path, json.dumps(options),
                                                os.fspath(report) if report is not None else "",
                                                hand_over=owned and not holds_python_objects))
    except ExportError as e:
        raised = bridge.take_symbolic_exception()
        if raised is None:
            raise
        raise _symbolic_error(raised, e) from e
    finally:
        bridge.forget_python_ops()
    return _reported(result, verbose)


def _reported(result, verbose):
    """The export's report, its warnings raised as Python warnings, with verbose a one-line summary."""
    for warning in result["warnings"]:
        warnings.warn(warning)
    if verbose:
        graph = result["graph"]
        print(f"onnxport: {graph['nodes']} nodes, {graph['initializers']} initializers, opset {graph['opset']}, "
              f"{result['mode']} mode; passes: {'; '.join(result['passes']) or 'none changed the graph'}")
    return result


def _is_exported_program(model):
    export = getattr(torch, "export", None)  # PyTorch 2: torch.export
    return export is not None and isinstance(model, getattr(export, "ExportedProgram", ()))


def _export_program(program, args, f, options, plugin_dirs, report, verbose):
    """A torch.export ExportedProgram, saved with torch.export.save and exported as `onnxport export
    MODEL.pt2` exports it: no run of the model, its graph and types as the program holds them. `args`
    (tensors) replaces the program's own example inputs when given."""
    tensors = [args] if isinstance(args, torch.Tensor) else list(args or ())
    if not all(isinstance(t, torch.Tensor) for t in tensors):
        raise ExportError("config error: onnxport.export(): an ExportedProgram takes its example inputs as tensors "
                          "in `args` (or none: the program's own)")
    exporter = _onnxport.exporter(_dirs(plugin_dirs or ()))
    with tempfile.TemporaryDirectory(prefix="onnxport-program-") as scratch:
        saved = os.path.join(scratch, "program.pt2")
        torch.export.save(program, saved)
        with _output_path(f) as path:
            result = json.loads(exporter.export_file(saved, tensors, path, json.dumps(options),
                                                     os.fspath(report) if report is not None else ""))
    return _reported(result, verbose)


# torch.onnx.export's keywords that only its dynamo path (torch.export, onnxscript) acts on, with
# what each does there; onnxport exports the TorchScript way.
_DYNAMO_ONLY = {
    "dynamo": "exports through torch.export and onnxscript",
    "dynamic_shapes": "declares torch.export's dynamic shapes — give dynamic_axes",
    "custom_translation_table": "maps ops with onnxscript functions — register a symbolic "
                                "(torch.onnx.register_custom_op_symbolic) or load an op pack",
    "verify": "checks the file in ONNX Runtime — run `onnxport verify MODEL FILE.onnx`",
    "profile": "profiles the dynamo export",
    "dump_exported_program": "writes the torch.export program",
    "fallback": "falls back from dynamo to the TorchScript path",
    "report": "writes the dynamo path's markdown report — give report a path (.md or .json) for onnxport's",
}


def _refuse_dynamo_only(**given):
    """One line for the first dynamo-only keyword given a value that asks for something (report
    only when True: a path is onnxport's own report)."""
    for name, value in given.items():
        if value is True if name == "report" else bool(value):
            raise ExportError(f"config error: onnxport.export(): {name}={value!r} is torch.onnx's dynamo path, "
                              f"which {_DYNAMO_ONLY[name]}; onnxport exports the TorchScript way (dynamo=False)")


def _symbolic_error(raised, export_error):
    """What a symbolic raised, as torch.onnx lets it through (same type and message, for code that
    catches it), that is also an ExportError carrying onnxport's one line (`onnxport_message`)."""
    try:
        error_type = type(f"SymbolicError_{type(raised).__name__}", (ExportError, type(raised)), {})
        error = error_type(*raised.args)
    except TypeError:  # an exception type that cannot be combined or rebuilt: itself
        return raised
    error.onnxport_message = str(export_error)
    return error.with_traceback(raised.__traceback__)


def _default_dtype():
    """torch.get_default_dtype() as the exporter's default_dtype: the C++ side loads, runs and
    converts under the one it is given (the command line's default is float32)."""
    names = {torch.float32: "float32", torch.float64: "float64"}
    dtype = torch.get_default_dtype()
    if dtype not in names:
        raise ExportError(f"config error: onnxport.export(): torch.get_default_dtype() is {dtype}; onnxport exports "
                          "with float32 or float64 as the default dtype — set one of them with torch.set_default_dtype")
    return names[dtype]


def _without_repeated_axes(dynamic_axes):
    """dynamic_axes with an axis listed twice for one name given once, with torch.onnx's warning."""
    if not isinstance(dynamic_axes, dict):
        return dynamic_axes  # the exporter names what is wrong with it
    cleaned = {}
    for name, axes in dynamic_axes.items():
        if isinstance(axes, (list, tuple)):
            unique = []
            for axis in axes:
                if axis in unique:
                    warnings.warn(f"Duplicate dynamic axis index {axis} was provided for input {name}.")
                else:
                    unique.append(axis)
            axes = unique
        cleaned[name] = axes
    return cleaned


def _flatten_tuples(args):
    """The example inputs one per graph input, as the exporter takes them: a tuple argument (an
    LSTM's (h0, c0)) gives its elements in order."""
    flat = []
    for a in args:
        flat.extend(_flatten_tuples(a) if isinstance(a, tuple) else [a])
    return flat


def _dirs(plugin_dirs):
    if isinstance(plugin_dirs, (str, os.PathLike)):
        plugin_dirs = [plugin_dirs]
    return [os.fspath(d) for d in plugin_dirs]


def _jsonable(value):
    """Option values as the config file holds them: tuples become lists, PathLikes strings."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _forward_parameters(model):
    """(name, default or inspect.Parameter.empty) of forward's arguments after self."""
    forward = model.forward if isinstance(model, torch.nn.Module) else model
    schema = getattr(forward, "schema", None)
    if schema is not None:  # a ScriptMethod or ScriptFunction: its TorchScript schema
        arguments = [a for a in schema.arguments if a.name != "self"]
        return [(a.name, a.default_value if a.has_default_value() else inspect.Parameter.empty) for a in arguments]
    return [(p.name, p.default) for p in inspect.signature(forward).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _none_leaves(value):
    if isinstance(value, (tuple, list)):
        return sum(_none_leaves(v) for v in value)
    if isinstance(value, dict):
        return sum(_none_leaves(v) for v in value.values())
    return int(value is None)


def _refuse_none_arguments(args):
    """A scripted graph gives every argument a type from its example; None has none to give (the
    scripted Optional stays unresolved), so such an export is refused up front, as torch.onnx
    refuses it, with the count torch.onnx's message gives."""
    count = _none_leaves(args)
    if count:
        raise NoneArgumentError(
            f"config error: onnxport.export(): args contained {count} None's after flattening; a scripted "
            "model (ScriptModule or ScriptFunction) cannot take None as an example argument — pass a tensor "
            "for it, or export the nn.Module itself, whose trace drops None arguments")


def _positional_args(model, args):
    """torch.onnx's convention: a tensor is one argument; a tuple ending in a dict passes that
    dict's entries as keyword arguments (an empty dict: none), placed by forward's signature; the
    arguments left out after those take forward's defaults, so a default tensor or number becomes
    an input holding it, as in torch.onnx's file. A None default of a scripted forward ends the
    filling there (torch.onnx refuses it: a scripted graph takes no None) and the arguments from
    it on keep their defaults inside the graph."""
    if not isinstance(args, tuple):  # a tensor, or another single argument
        args = (args,)
    keywords = {}
    if args and isinstance(args[-1], dict):
        args, keywords = args[:-1], dict(args[-1])
    positional = list(args)
    parameters = _forward_parameters(model)
    known = [name for name, _ in parameters]
    unknown = sorted(set(keywords) - set(known))
    if unknown:
        raise ExportError(f"config error: onnxport.export(): keyword argument(s) {', '.join(unknown)} of `args` are "
                          f"not arguments of forward — forward takes {', '.join(known) or 'no arguments'}")
    scripted = isinstance(model, (torch.jit.ScriptModule, torch.jit.ScriptFunction))
    for name, default in parameters[len(positional):]:
        if name in keywords:
            positional.append(keywords.pop(name))
        elif default is inspect.Parameter.empty:
            if not keywords:
                break
            raise ExportError(f"config error: onnxport.export(): forward's argument '{name}' has no value "
                              "— give it in `args`, positionally or in the trailing dict")
        elif default is None and scripted and not keywords:
            break
        else:
            positional.append(default)
    return tuple(positional)


@contextlib.contextmanager
def _module_mode(model, training):
    """The module in the mode `training` asks for while it is traced (as torch.onnx does), restored after."""
    if not isinstance(model, torch.nn.Module) or training == torch.onnx.TrainingMode.PRESERVE:
        yield
        return
    was_training = model.training
    model.train(training == torch.onnx.TrainingMode.TRAINING)
    try:
        yield
    finally:
        model.train(was_training)


class _CallFunction(torch.nn.Module):
    """A ScriptFunction as a module, so that it can be traced (its own control flow stays scripted)."""

    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, *args):
        return self.function(*args)


def _traceable(model, args):
    """The module as torch.onnx's tracer sees it, and the tensors it is traced on: the arguments,
    of any nesting (tuples, lists, dicts), flattened as torch.onnx flattens them (numbers become
    0-d tensors, so graph inputs; None and strings are dropped and given back to forward as they
    were), and forward's result flattened the same way into a tuple of tensors (a detection
    model's list of dicts). A shallow copy shares the module's parameters and submodules, so
    they keep their names."""
    flat_args, args_layout = torch._C._jit_flatten(tuple(args))
    # forward runs on the copy, whose __call__ runs the module's hooks on the copy: what a
    # forward pre-hook sets (spectral_norm's and weight_norm's `weight`) is what forward reads.
    own_forward = "forward" in vars(model)
    forward = model.forward if own_forward else type(model).forward

    def flat_forward(*tensors):
        unflat = torch._C._jit_unflatten(tensors, args_layout)
        outputs = forward(*unflat) if own_forward else forward(wrapper, *unflat)
        if isinstance(outputs, torch.Tensor):
            return outputs
        return tuple(torch._C._jit_flatten(outputs)[0])

    wrapper = copy.copy(model)
    wrapper.forward = flat_forward
    return wrapper, tuple(flat_args)


def _trace(model, args):
    """torch.jit.trace(model, args, check_trace=False, strict=False)._c: the same recording of
    forward, with each module's scope, into a module built without TracedModule's inference of
    each class from the Python object (_onnxport.traced_module_skeleton)."""
    scopes = {"__module": model}

    def name_submodules(module, prefix):
        for name, child in module.named_children():
            scopes[child] = f"{prefix}.{name}"
            name_submodules(child, scopes[child])

    name_submodules(model, "__module")
    recording_scopes = torch.jit._trace._trace_module_map
    torch.jit._trace._trace_module_map = scopes  # nn.Module._slow_forward pushes each module's scope
    _onnxport.record_innermost_frame_sources(True)  # what the export reads of each node's source, cheaply
    try:
        module = _onnxport.traced_module_skeleton(model)
        _torch_release.create_method_from_trace(module, "forward", model, args,
                                                torch.jit._trace._create_interpreter_name_lookup_fn(0),
                                                torch.jit._trace.get_callable_argument_names(model.forward))
    finally:
        _onnxport.record_innermost_frame_sources(False)
        torch.jit._trace._trace_module_map = recording_scopes
    return module


def _script_module(model, args, training):
    """The torch._C.ScriptModule to export, the example inputs it takes, and whether it is a
    trace. A ScriptFunction is traced inside a module, its own control flow kept as scripted."""
    if isinstance(model, torch.jit.ScriptModule):
        return model._c, args, isinstance(model, torch.jit.TracedModule)
    scripted_function = isinstance(model, torch.jit.ScriptFunction)
    if scripted_function:
        model = _CallFunction(model)
    if not isinstance(model, torch.nn.Module):
        raise ExportError("config error: onnxport.export(): model must be a torch.nn.Module, ScriptModule or "
                          f"ScriptFunction, got {type(model).__name__}")
    # With autograd on, as torch.onnx traces: under no_grad torch 1.13's TransformerEncoder takes
    # its nested-tensor fast path, which has no ONNX form.
    with _module_mode(model, training):
        try:
            traced_model, traced_args = _traceable(model, args)
            return _trace(traced_model, traced_args), traced_args, not scripted_function
        except Exception as e:  # the model's own error while it ran on `args`
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise ExportError(f"model error: tracing {type(model).__name__} on the given args failed: {first} "
                              "— check that `args` match forward's arguments") from e


@contextlib.contextmanager
def _output_path(f):
    """A path to write to: `f` itself, or for a file object a temporary file copied into it."""
    if isinstance(f, (str, os.PathLike)):
        yield os.fspath(f)
        return
    if not hasattr(f, "write"):
        raise ExportError(f"config error: onnxport.export(): f must be a path or a binary file object, got {type(f).__name__}")
    with tempfile.TemporaryDirectory(prefix="onnxport-") as tmp:
        path = os.path.join(tmp, "model.onnx")
        yield path
        if os.path.exists(path + ".data") or len(os.listdir(tmp)) > 1:
            raise ExportError("export error: the model needs external data (over 2 GiB), which a file object "
                              "cannot hold — pass a path as f")
        with open(path, "rb") as written:
            shutil.copyfileobj(written, f)
