#!/usr/bin/python3
"""torch.export programs (.pt2, torch.export.save) written by a newer PyTorch — 2.6 in the Debian 13
root, 2.14 in the Debian sid root, whose archives have the PT2 layout — for both onnxport builds to
export without Python and without running the model (tests/programs/CMakeLists.txt).

Files per case NAME in OUT_DIR, in the form of tests/fixtures/make_models.py's (so that
tests/newer_torch/export_and_compare.py judges them in ONNX Runtime): NAME.pt2, NAME.in<k>.npy,
NAME.out<k>.npy, NAME.json. The expected outputs are the PyTorch's own, computed in float64 (model
and inputs converted) and stored in float32. The inputs compared are not the program's saved example
inputs where the program has symbolic dims: a size fixed at export then shows as a failure.
Manifest keys besides make_models.py's: "export_inputs": [] (export from the archive's own example
inputs), "program": {"schema_version", "nodes", "symbols"}, "torchscript": NAME.traced.pt (the same
module traced) and "torchscript_args" (its export arguments matching the program's inputs and dims).

Usage (in a root: bash tests/programs/make_programs_in_root.sh OUT_DIR):
  make_programs.py OUT_DIR [--only NAME]... [--skip NAME]... [--force] [--list]
"""
import argparse
import copy
import json
import os
import sys
import time
import zipfile

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")
sys.path.insert(0, FIXTURES)
import make_models  # noqa: E402
from npy_io import save_arrays, write_atomically  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "zoo"))
import make_zoo  # noqa: E402

SCRIPTS = [os.path.abspath(__file__), os.path.abspath(make_models.__file__),
           os.path.abspath(os.path.join(FIXTURES, "npy_io.py")), os.path.abspath(make_zoo.__file__)]


class TwoOutputs(nn.Module):
    """Parameters, a buffer, two user inputs, a 0-d output."""
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 3)
        self.register_buffer("scale", torch.linspace(0.5, 1.5, 3))

    def forward(self, x, y):
        return torch.relu(self.linear(x)) + self.scale * y, x.sum()


def with_parameter_attribute():
    """A parameter carrying an attribute: torch.save pickles it with its state, a one-entry dict (the
    SETITEM opcode libtorch 1.13's unpickler lacks); PyTorch 2.6's strict export gives such state to
    the parameters of models like swin_t (`_dynamo_static_input_type`)."""
    model = TwoOutputs()
    model.linear.weight.note = "kept"
    return model


class ConvBlock(nn.Module):
    """Conv, BatchNorm (eval), pooling, a view of a symbolic batch."""
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.head = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        y = F.max_pool2d(F.gelu(self.bn(self.conv(x))), 2)
        return self.head(y.reshape(y.shape[0], -1)).softmax(-1)


class Attention(nn.Module):
    """F.scaled_dot_product_attention called directly: causal, a custom scale, grouped heads."""
    def __init__(self, causal=True, scale=None, kv_heads=4):
        super().__init__()
        self.q = nn.Linear(32, 32)
        self.kv = nn.Linear(32, 2 * 8 * kv_heads)
        self.causal, self.scale, self.kv_heads = causal, scale, kv_heads

    def forward(self, x):
        b, n, _ = x.shape
        q = self.q(x).view(b, n, 4, 8).transpose(1, 2)
        k, v = self.kv(x).view(b, n, 2, self.kv_heads, 8).permute(2, 0, 3, 1, 4)
        extra = {"enable_gqa": True} if self.kv_heads != 4 else {}
        y = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal, scale=self.scale, **extra)
        return y.transpose(1, 2).reshape(b, n, 32)


def encoder_layer():
    return nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)


def resnet18():
    import torchvision
    return torchvision.models.resnet18(num_classes=10)


def mobilenet_v3_small():
    import torchvision
    return torchvision.models.mobilenet_v3_small(num_classes=10)


class Branches(nn.Module):
    """torch.cond on the data: a higher-order operator in the program."""
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda t: t.cos(), lambda t: t.sin(), (x,))


class Loop(nn.Module):
    """torch.while_loop whose turn count depends on the data, reading parameters in its body."""
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)

    def forward(self, x):
        from torch._higher_order_ops.while_loop import while_loop

        def grows(turns, t):
            return t.abs().sum() < 50.0

        def step(turns, t):
            return turns + 1, torch.tanh(self.linear(t)) + t * 1.5
        turns, t = while_loop(grows, step, (torch.tensor(0), x))
        return t, turns


class WithoutGrad(nn.Module):
    """A torch.no_grad region: wrap_with_set_grad_enabled around a subgraph in the program."""
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x):
        y = self.linear(x)
        with torch.no_grad():
            z = torch.tanh(y) * 3
        return z + y


class NumberArguments(nn.Module):
    """Number and bool arguments, which torch.export specializes: constant inputs of the program."""
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x, n: int, shift: float, positive: bool):
        y = self.linear(x) * n + shift
        return y.relu() if positive else -y


class SymbolicInt(nn.Module):
    """An int argument kept symbolic (Dim.DYNAMIC, PyTorch 2.14): a number input of the program."""
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x, repeats: int):
        return self.linear(x).repeat(1, repeats) * repeats


class Case:
    def __init__(self, seed, make_model, make_args, names, dynamic=None, compare_args=None, rtol=1e-4, atol=1e-5,
                 min_torch=(2, 6), traceable=True):
        self.seed, self.make_model, self.make_args, self.names = seed, make_model, make_args, names
        # dynamic: {input name: {axis: Dim name}} as torch.export's dynamic_shapes takes them
        self.dynamic, self.compare_args = dynamic, compare_args
        self.rtol, self.atol, self.min_torch = rtol, atol, min_torch
        self.traceable = traceable  # torch.jit.trace can record it (not torch.cond)


CASES = {
    "two_outputs": Case(1, TwoOutputs, lambda: (torch.randn(2, 4), torch.randn(2, 3)), ["x", "y"]),
    "parameter_with_attribute": Case(8, with_parameter_attribute, lambda: (torch.randn(2, 4), torch.randn(2, 3)),
                                     ["x", "y"]),
    # The same program judged on an input for each branch: all positive (cos), all negative (sin).
    "cond_true_branch": Case(9, Branches, lambda: (torch.randn(2, 3),), ["x"],
                             compare_args=lambda: (torch.rand(2, 3) + 0.1,), traceable=False),
    "cond_false_branch": Case(9, Branches, lambda: (torch.randn(2, 3),), ["x"],
                              compare_args=lambda: (-torch.rand(2, 3) - 0.1,), traceable=False),
    "no_grad_region": Case(10, WithoutGrad, lambda: (torch.randn(2, 4),), ["x"]),
    # 5 turns for the example; judged on an input 5 times larger, 2 turns
    "while_loop": Case(13, Loop, lambda: (torch.randn(2, 3),), ["x"], compare_args=lambda: (torch.randn(2, 3) * 5,),
                       traceable=False),
    # torch.jit.trace takes tensors only: no TorchScript twin
    "number_arguments": Case(11, NumberArguments, lambda: (torch.randn(2, 4), 3, -0.25, False), ["x"],
                             traceable=False),
    # judged at another number than the example's: a folded one would fail
    "symbolic_int_argument": Case(12, SymbolicInt, lambda: (torch.randn(2, 4), 2), ["x", "repeats"],
                                  dynamic={"x": {}, "repeats": "int"}, compare_args=lambda: (torch.randn(2, 4), 3),
                                  min_torch=(2, 14), traceable=False),
    "conv_block_dynamic_batch": Case(2, ConvBlock, lambda: (torch.randn(2, 3, 8, 8),), ["x"], dynamic={"x": {0: "batch"}},
                                     compare_args=lambda: (torch.randn(5, 3, 8, 8),)),
    "sdpa_causal": Case(3, lambda: Attention(causal=True), lambda: (torch.randn(2, 6, 32),), ["x"]),
    "sdpa_scale_gqa": Case(4, lambda: Attention(causal=False, scale=0.3, kv_heads=2), lambda: (torch.randn(2, 6, 32),),
                           ["x"]),
    "encoder_layer_dynamic": Case(5, encoder_layer, lambda: (torch.randn(2, 7, 32),), ["src"],
                                  dynamic={"src": {0: "batch", 1: "length"}},
                                  compare_args=lambda: (torch.randn(3, 5, 32),)),
    "resnet18_dynamic_batch": Case(6, resnet18, lambda: (torch.randn(2, 3, 64, 64),), ["x"],
                                   dynamic={"x": {0: "batch"}}, compare_args=lambda: (torch.randn(3, 3, 64, 64),),
                                   rtol=1e-3, atol=1e-4),
    "mobilenet_v3_small": Case(7, mobilenet_v3_small, lambda: (torch.randn(1, 3, 64, 64),), ["x"], rtol=1e-3, atol=1e-4),
}


def build_vendor(out_dir):
    """OUT_DIR/vendor/vendor_model.pt2: samples/vendor_op_pack's model (vendor::fancy, a vendor's op with
    the schema samples/vendor_op_pack/vendor_ops.cpp registers) as a program with a dynamic batch. The op
    is defined here in Python, with the fake kernel torch.export traces it by; onnxport reads the program
    with the vendor's C++ library (--load-op-library) and maps it with the vendor's pack
    (samples/vendor_op_pack/run_sample.sh). Also written: its input (batch 3) and the float64 output."""
    folder = os.path.join(out_dir, "vendor")
    os.makedirs(folder, exist_ok=True)
    library = torch.library.Library("vendor", "DEF")
    library.define("fancy(Tensor x, float alpha) -> Tensor")
    library.impl("fancy", lambda x, alpha: x * torch.sigmoid(x * alpha), "CPU")
    torch.library.register_fake("vendor::fancy")(lambda x, alpha: torch.empty_like(x))

    class VendorModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(8, 8)

        def forward(self, x):
            return torch.ops.vendor.fancy(self.proj(x), 0.5) * 2.0

    torch.manual_seed(0)
    model = VendorModel().eval()
    program = torch.export.export(model, (torch.randn(2, 8),),
                                  dynamic_shapes={"x": {0: torch.export.Dim("batch", min=1, max=64)}})
    torch.export.save(program, os.path.join(folder, "vendor_model.pt2"))
    x = torch.randn(3, 8)
    with torch.no_grad():
        wide = copy.deepcopy(model).double()
        y = wide.proj(x.double())
        expected = (y * torch.sigmoid(y * 0.5) * 2.0).float()
    save_arrays(folder, "vendor_model.in", [x])
    save_arrays(folder, "vendor_model.out", [expected])
    library._destroy()


def torchvision_model(name):
    def make():
        import torchvision
        return getattr(torchvision.models, name)()
    return make


# For the benchmark of a program's export against its TorchScript file's (docs/benchmarks.md), not
# the tests: `make_programs.py --bench OUT_DIR`, then tests/programs/against_torchscript.py OUT_DIR --runs 5.
BENCH_CASES = {
    name: Case(100 + k, torchvision_model(name), lambda: (torch.randn(1, 3, 224, 224),), ["x"], rtol=1e-3, atol=1e-4)
    for k, name in enumerate(("resnet50", "vit_b_16", "swin_t"))
}


def zoo_model(name):
    """tests/zoo/make_zoo.py's model NAME as its fixture is made: BatchNorm statistics calibrated, the
    head scaled (make_models.write_fixture)."""
    entry = make_zoo.ZOO[name]

    def make():
        model = entry.make_model()
        make_models.calibrate_batchnorm(model, lambda: make_models.flatten(entry.make_args()))
        if entry.head_std is not None:
            make_models.normalize_head(model, entry.make_args, entry.head_std)
        return model
    return make


# A part of the zoo as programs (the zoo's other CNNs are resnet18's and mobilenet's kind).
ZOO_PROGRAMS = ("efficientnet_b0", "convnext_tiny", "vit_b_32", "swin_t", "transformer_encoder", "tiny_gpt")
CASES.update({f"zoo_{name}": Case(make_zoo.ZOO[name].seed, zoo_model(name), make_zoo.ZOO[name].make_args, ["x"],
                                  rtol=make_zoo.ZOO[name].rtol, atol=make_zoo.ZOO[name].atol)
              for name in ZOO_PROGRAMS})


def dynamic_shapes(case):
    if not case.dynamic:
        return None
    dims = {}
    shapes = {}
    for input_name, axes in case.dynamic.items():
        if axes == "int":
            shapes[input_name] = torch.export.Dim.DYNAMIC
            continue
        shapes[input_name] = {axis: dims.setdefault(dim, torch.export.Dim(dim, min=1, max=512)) for axis, dim in axes.items()}
    return shapes


def program_facts(pt2):
    with zipfile.ZipFile(pt2) as z:
        name = next(n for n in z.namelist() if n.endswith("serialized_exported_program.json") or n.endswith("models/model.json"))
        program = json.loads(z.read(name))
    version = program["schema_version"]
    return {"schema_version": f"{version['major']}.{version['minor']}",
            "nodes": len(program["graph_module"]["graph"]["nodes"]),
            "symbols": sorted(program.get("range_constraints", {}))}


def build(name, out_dir):
    case = CASES[name]
    manifest_path = os.path.join(out_dir, f"{name}.json")
    if os.path.exists(manifest_path):
        os.remove(manifest_path)  # until rewritten last, the fixture counts as incomplete
    torch.manual_seed(case.seed)
    model = case.make_model().eval()
    if any(isinstance(m, nn.BatchNorm2d) for m in model.modules()):
        make_models.calibrate_batchnorm(model, case.make_args)
        model.eval()
    args = case.make_args()
    program = torch.export.export(model, args, dynamic_shapes=dynamic_shapes(case))
    pt2 = os.path.join(out_dir, f"{name}.pt2")
    torch.export.save(program, pt2)
    # The same module traced into TorchScript, for tests/programs/against_torchscript.py.
    if case.traceable:
        with torch.no_grad():
            torch.jit.trace(model, args, check_trace=False).save(os.path.join(out_dir, f"{name}.traced.pt"))
    compare = case.compare_args() if case.compare_args else args
    with torch.no_grad():
        eager = [t.detach() for t in make_models.flatten(program.module()(*compare))]
        module = [t.detach() for t in make_models.flatten(model(*compare))]
        reference = [t.detach() for t in make_models.flatten(copy.deepcopy(model).double()(*make_models.to_float64(compare)))]
    if make_models.max_difference(eager, module) > 1e-4:
        raise RuntimeError(f"{name}: the program does not compute what its module computes")
    # The ONNX file's inputs: the program's tensor inputs and symbolic ints (0-d int64), under the
    # program's names for them (forward's argument names); numbers specialized at export are constants.
    signature = torch.export.graph_signature
    user_specs = [spec for spec in program.graph_signature.input_specs if spec.kind == signature.InputKind.USER_INPUT]
    fed = [(spec.arg.name, a if isinstance(a, torch.Tensor) else torch.tensor(a))
           for spec, a in zip(user_specs, compare, strict=True) if not isinstance(spec.arg, signature.ConstantArgument)]
    inputs = save_arrays(out_dir, f"{name}.in", [t for _, t in fed])
    program_names = [input_name for input_name, _ in fed]
    for entry, input_name in zip(inputs, program_names, strict=True):
        entry["name"] = input_name
    manifest = {
        "model": f"{name}.pt2",
        "seed": case.seed,
        "inputs": inputs,
        "outputs": save_arrays(out_dir, f"{name}.out", [r.to(e.dtype) for r, e in zip(reference, eager)]),
        "rtol": case.rtol,
        "atol": case.atol,
        "export_args": [],
        "export_inputs": [],
        "torch": f"{torch.__version__} export",
        "float32_error": make_models.max_difference(eager, reference),
        "program": program_facts(pt2),
    }
    if case.traceable:
        manifest["torchscript"] = f"{name}.traced.pt"
        # the .pt exported as the .pt2 is: the program's inputs at its example sizes, its symbolic dims dynamic
        manifest["torchscript_args"] = (
            [arg for input_name, t in zip(program_names, args) for arg in
             ("--input", f"{input_name}:{'x'.join(map(str, t.shape))}:{str(t.dtype).replace('torch.', '')}")]
            + [arg for input_name, axes in (case.dynamic or {}).items() for arg in
               ("--dynamic-axes", f"{input_name}:" + ",".join(f"{a}={d}" for a, d in axes.items()))])
    write_atomically(manifest_path, json.dumps(manifest, indent=2) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", nargs="?", help="directory for the .pt2/.npy/.json fixtures")
    parser.add_argument("--only", action="append", choices=sorted({**CASES, **BENCH_CASES}), metavar="NAME")
    parser.add_argument("--skip", action="append", default=[], choices=sorted({**CASES, **BENCH_CASES}), metavar="NAME")
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    parser.add_argument("--list", action="store_true", help="print the case names and exit")
    parser.add_argument("--bench", action="store_true", help="write the benchmark's programs (BENCH_CASES) instead")
    options = parser.parse_args()
    if options.bench:
        CASES.clear()
        CASES.update(BENCH_CASES)
    if options.list:
        print("\n".join(CASES))
        return 0
    if not options.out_dir:
        parser.error("OUT_DIR is required")
    print(f"torch {torch.__version__}")
    os.makedirs(options.out_dir, exist_ok=True)
    if not options.only and not options.bench:
        build_vendor(options.out_dir)
    for name in [n for n in options.only or CASES if n not in options.skip]:
        if not options.force and make_models.is_up_to_date(name, options.out_dir, SCRIPTS):
            print(f"{name}: up to date")
            continue
        if torch_release() < CASES[name].min_torch:
            print(f"{name}: skipped (needs torch {'.'.join(map(str, CASES[name].min_torch))})")
            continue
        start = time.perf_counter()
        build(name, options.out_dir)
        size = os.path.getsize(os.path.join(options.out_dir, f"{name}.pt2"))
        print(f"{name}: built in {time.perf_counter() - start:.1f} s ({size / 2**20:.1f} MiB .pt2)", flush=True)
    return 0


def torch_release():
    return tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])


if __name__ == "__main__":
    sys.exit(main())
