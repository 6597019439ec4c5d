#!/usr/bin/python3
"""The catalogue of bad inputs: one row per way a user can hand onnxport something broken.

Each row is written as a demanding user expects the tool to behave, whatever it does today:
the command fails with a non-zero exit (not a signal, not a hang), prints at most three
non-empty lines on stderr (without --verbose), one of which names the thing at fault (the
file, flag, input name, axis, op pack, path...), and leaves the file system as it found it:
no output file, no temporary file, every file that existed before byte-for-byte unchanged.

A row:
  id       unique, `group-what` (the group is the first word)
  desc     one line: what is wrong
  setup    steps run in the row's fresh work directory before the command (see the helpers
           below: art/fixture copies, write, npy, mkdir, fifo, tmpfs, ...); a step may raise
           Skip when the row cannot be made meaningful here (e.g. permissions as root)
  cmd      onnxport's arguments; run with the row's work directory as the current directory;
           {fixtures} and {work} are replaced
  expect   regular expressions (case-insensitive), each must match somewhere in stderr
  output   the output path the command names (relative to the work directory, or absolute),
           None when the command writes no file; it must not exist afterwards unless the
           row created it, in which case it must be unchanged
  wrapper  a shell prefix run before exec'ing onnxport (e.g. "ulimit -f 100")
  timeout  seconds before the command counts as hung

run_catalogue.py runs the table; build_artifacts() makes the small models the rows copy.
"""
import os
import re
import shutil
import struct
import subprocess
import zipfile
from dataclasses import dataclass, field
from typing import Callable, List, Optional


class Skip(Exception):
    """Raised by a setup step when the row cannot be exercised in this environment."""


@dataclass
class Context:
    work: str        # the row's fresh directory (the command's current directory)
    art: str         # cached artifacts made by build_artifacts()
    fixtures: str    # build/fixtures/models
    teardown: List[Callable[[], None]] = field(default_factory=list)

    def path(self, rel):
        return os.path.join(self.work, rel)


@dataclass
class Row:
    id: str
    desc: str
    setup: List[Callable[[Context], None]]
    cmd: List[str]
    expect: List[str]
    output: Optional[str] = "out.onnx"
    wrapper: Optional[str] = None
    timeout: float = 30.0
    env: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Artifacts: small models and files, made once per work directory and copied into each row.

ARTIFACT_VERSION = "10"  # bump when build_artifacts changes

NOENTRY_CPP = 'extern "C" int not_an_op_pack_entry_point() { return 42; }\n'

# A traced TorchScript module's code, edited after saving: an op this libtorch does not have,
# and a syntax error.
UNKNOWN_OP_EDIT = (b"torch.relu(", b"ops.aten.definitely_not_an_op(")
SYNTAX_ERROR_EDIT = (b"def forward(", b"def forward((")


def _rewrite_zip(src, dst, edit=None, drop=lambda name: False):
    """Copies a TorchScript zip, dropping some entries and editing the code that holds edit[0]."""
    edited = 0
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            if drop(info.filename):
                continue
            data = zin.read(info.filename)
            if edit and "/code/" in info.filename and info.filename.endswith(".py") and edit[0] in data:
                data = data.replace(*edit)
                edited += 1
            zout.writestr(info, data)
    assert edited or not edit, f"{src}: no code file holds {edit[0]!r}"


def _varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number, wire_type, payload=b""):
    """One protobuf field: a length-delimited payload (wire type 2) or a varint (0)."""
    key = _varint((number << 3) | wire_type)
    return key + (_varint(len(payload)) + payload if wire_type == 2 else payload)


def nested_if_model(depth):
    """A ModelProto whose graph holds an If whose then_branch holds an If... `depth` levels down,
    written field by field: each level is GraphProto.node(1) > NodeProto{op_type(4), attribute(5)}
    > AttributeProto{name(1), type(20)=GRAPH, g(6)} > GraphProto. Built from the inside out with
    only the headers per level, so the bytes are not copied once per level."""
    innermost = b""
    headers = []  # outermost first, each followed by the next level's bytes
    size = len(innermost)
    for _ in range(depth):
        attr_head = _field(1, 2, b"then_branch") + _field(20, 0, _varint(5)) + _varint((6 << 3) | 2) + _varint(size)
        attr_size = len(attr_head) + size
        node_head = _field(4, 2, b"If") + _varint((5 << 3) | 2) + _varint(attr_size)
        node_size = len(node_head) + attr_size
        graph_head = _varint((1 << 3) | 2) + _varint(node_size)
        headers.append(graph_head + node_head + attr_head)
        size = len(graph_head) + node_size
    opset = _field(8, 2, _field(2, 0, _varint(13)))
    model_head = _field(1, 0, _varint(8)) + opset + _varint((7 << 3) | 2) + _varint(size)
    return model_head + b"".join(reversed(headers)) + innermost


def build_artifacts(art):
    """Makes every artifact the rows copy: tiny models traced with torch, ONNX files, a .so."""
    import numpy as np
    import onnx
    import torch
    from onnx import TensorProto, helper

    os.makedirs(art, exist_ok=True)
    torch.manual_seed(0)

    class Tiny(torch.nn.Module):  # one conv: a 4-d float input, rank/dtype/channels matter
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3)

        def forward(self, image):
            return torch.relu(self.conv(image))

    class Two(torch.nn.Module):  # two inputs, two outputs
        def forward(self, lhs, rhs):
            return lhs + rhs, lhs * rhs

    class Lgamma(torch.nn.Module):  # an op no built-in pack maps
        def forward(self, x):
            return torch.lgamma(x)

    tiny = Tiny().eval()
    torch.jit.trace(tiny, torch.randn(1, 3, 8, 8)).save(os.path.join(art, "tiny.pt"))
    torch.jit.trace(Two(), (torch.randn(2, 3), torch.randn(2, 3))).save(os.path.join(art, "two.pt"))
    torch.jit.trace(Lgamma(), torch.rand(2, 3) + 0.5).save(os.path.join(art, "lgamma.pt"))
    torch.save(tiny.state_dict(), os.path.join(art, "state_dict.pt"))  # a pickle, not TorchScript
    _rewrite_zip(os.path.join(art, "tiny.pt"), os.path.join(art, "unknown_op.pt"), UNKNOWN_OP_EDIT,
                 drop=lambda n: n.endswith(".debug_pkl"))
    _rewrite_zip(os.path.join(art, "tiny.pt"), os.path.join(art, "badcode.pt"), SYNTAX_ERROR_EDIT,
                 drop=lambda n: n.endswith(".debug_pkl"))
    _rewrite_zip(os.path.join(art, "tiny.pt"), os.path.join(art, "nocode.pt"), drop=lambda n: "/code/" in n)

    # ONNX files: a one-node model, and a MatMul with a 64 KiB initializer to truncate.
    relu = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu",
                             [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])])
    onnx.save(helper.make_model(relu, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(art, "relu.onnx"))
    w = helper.make_tensor("w", TensorProto.FLOAT, [128, 128],
                           np.random.RandomState(0).rand(128, 128).astype(np.float32).tobytes(), raw=True)
    mat = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "mat",
                            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 128])],
                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 128])], [w])
    onnx.save(helper.make_model(mat, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(art, "mat.onnx"))
    # Valid to ONNX's checker, but a zero stride makes libonnx's shape inference divide by zero.
    conv = helper.make_graph([helper.make_node("Conv", ["x", "k"], ["y"], strides=[0, 0])], "conv0",
                             [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8]),
                              helper.make_tensor_value_info("k", TensorProto.FLOAT, [4, 4, 3, 3])],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])])
    onnx.save(helper.make_model(conv, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(art, "stride0.onnx"))
    # Valid to ONNX's checker, but libonnx's inference reads the weight's kernel dims past the
    # lower-rank input (SIGSEGV; found by fuzz_onnx_file in CI).
    conv = helper.make_graph([helper.make_node("Conv", ["x", "k"], ["y"])], "conv_ranks",
                             [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8]),
                              helper.make_tensor_value_info("k", TensorProto.FLOAT, [4, 4, 3, 3])],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])])
    onnx.save(helper.make_model(conv, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(art, "conv_ranks.onnx"))
    # ModelProto: ir_version 7, then field 7 (graph, length-delimited) claiming 2^62 bytes.
    with open(os.path.join(art, "hugelen.onnx"), "wb") as f:
        f.write(b"\x08\x07" + bytes([(7 << 3) | 2]) + _varint(2 ** 62) + b"\x00" * 16)

    # ConstantOfShape asking for 2^40 floats (4 TiB): valid to the checker, only running it is not.
    shape = helper.make_tensor("shape", TensorProto.INT64, [1], [2 ** 40])
    huge = helper.make_graph([helper.make_node("ConstantOfShape", ["shape"], ["y"])], "huge", [],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2 ** 40])], [shape])
    onnx.save(helper.make_model(huge, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(art, "huge_constant.onnx"))
    # An initializer of 4 floats holding the bytes of 2 (once an internal error in run; a fuzz find).
    short = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4], raw_data=struct.pack("<2f", 1, 2))
    add = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "short",
                            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [short])
    onnx.save(helper.make_model(add, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(art, "short_init.onnx"))
    with open(os.path.join(art, "nested_subgraphs.onnx"), "wb") as f:
        f.write(nested_if_model(50000))

    # A bfloat16 model: ONNX's MaxPool takes no bfloat16 at any opset onnxport writes. (Not a
    # Conv: libtorch's bfloat16 convolution needs AVX-512 (oneDNN), so it would not even run on
    # every CPU.)
    class Bf16(torch.nn.Module):
        def forward(self, image):
            return torch.nn.functional.max_pool2d(torch.relu(image), 2)

    torch.jit.trace(Bf16(), torch.randn(1, 3, 8, 8).to(torch.bfloat16)).save(os.path.join(art, "bf16.pt"))

    # Example-input .npy files of the right and the wrong kind.
    np.save(os.path.join(art, "image.npy"), np.random.RandomState(1).rand(1, 3, 8, 8).astype(np.float32))
    np.save(os.path.join(art, "rank3.npy"), np.zeros((3, 8, 8), np.float32))
    np.save(os.path.join(art, "int64img.npy"), np.zeros((1, 1, 16, 16), np.int64))

    # A shared library that is not an op pack (no ONNXPORT_OP_PACK entry point).
    src = os.path.join(art, "noentry.cpp")
    with open(src, "w") as f:
        f.write(NOENTRY_CPP)
    subprocess.run(["g++", "-shared", "-fPIC", "-o", os.path.join(art, "libnoentry.so"), src], check=True)

    with open(os.path.join(art, "random.bin"), "wb") as f:
        f.write(np.random.RandomState(2).bytes(4096))
    with open(os.path.join(art, ".version"), "w") as f:
        f.write(ARTIFACT_VERSION)


def artifacts_ready(art):
    try:
        with open(os.path.join(art, ".version")) as f:
            return f.read() == ARTIFACT_VERSION
    except OSError:
        return False


# ---------------------------------------------------------------------------------------------
# Setup steps: each returns a function of the row's Context.

def art(name, dst=None):
    """Copies an artifact into the work dir (a copy: a row that destroys it harms no other)."""
    def step(ctx):
        shutil.copyfile(os.path.join(ctx.art, name), ctx.path(dst or name))
    return step


def fixture(name, dst=None):
    def step(ctx):
        shutil.copyfile(os.path.join(ctx.fixtures, name), ctx.path(dst or name))
    return step


def truncated(source, dst, fraction=0.5, from_fixtures=False):
    def step(ctx):
        with open(os.path.join(ctx.fixtures if from_fixtures else ctx.art, source), "rb") as f:
            data = f.read()
        with open(ctx.path(dst), "wb") as f:
            f.write(data[: int(len(data) * fraction)])
    return step


def write(dst, content):
    def step(ctx):
        os.makedirs(os.path.dirname(ctx.path(dst)) or ".", exist_ok=True)
        with open(ctx.path(dst), "wb") as f:
            f.write(content.encode() if isinstance(content, str) else content)
    return step


def mkdir(dst):
    def step(ctx):
        os.makedirs(ctx.path(dst), exist_ok=True)
    return step


def fifo(dst):
    def step(ctx):
        os.mkfifo(ctx.path(dst))
    return step


def unreadable_dir(dst):
    """A directory of op packs nobody may read (mode 000); as root, reading still works: skip."""
    def step(ctx):
        d = ctx.path(dst)
        os.makedirs(d)
        shutil.copyfile(os.path.join(ctx.art, "libnoentry.so"), os.path.join(d, "libnoentry.so"))
        os.chmod(d, 0)
        ctx.teardown.append(lambda: os.chmod(d, 0o755))
        try:
            os.listdir(d)
        except PermissionError:
            return
        raise Skip(f"running as uid {os.geteuid()}: chmod 000 does not stop this user from reading "
                   "the directory, so the row would not test an unreadable one")
    return step


def tmpfs(dst, size):
    """A tiny file system (a full disk). Needs root and mount(8); otherwise the row is skipped."""
    def step(ctx):
        d = ctx.path(dst)
        os.makedirs(d)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", d], capture_output=True, text=True)
        if r.returncode != 0:
            raise Skip(f"cannot mount a tmpfs here ({(r.stderr or r.stdout).strip()})")
        ctx.teardown.append(lambda: subprocess.run(["umount", "-l", d], capture_output=True))
    return step


def external_data_model(dst, location, data_file=None):
    """An ONNX model (y = x + w) whose initializer w keeps its 16 bytes as external data at
    `location` (a string, or a function of the row's Context); `data_file`, if given, is
    written with those bytes (relative to the work directory)."""
    def step(ctx):
        import onnx
        from onnx import TensorProto, helper
        w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4], data_location=TensorProto.EXTERNAL)
        where = location(ctx) if callable(location) else location
        for key, value in (("location", where), ("offset", "0"), ("length", "16")):
            entry = w.external_data.add()
            entry.key, entry.value = key, value
        graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "external",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [w])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        os.makedirs(os.path.dirname(ctx.path(dst)) or ".", exist_ok=True)
        with open(ctx.path(dst), "wb") as f:
            f.write(model.SerializeToString())
        if data_file:
            with open(ctx.path(data_file), "wb") as f:
                f.write(struct.pack("<4f", 1, 2, 3, 4))
    return step


def symlink(dst, target):
    def step(ctx):
        os.symlink(target, ctx.path(dst))
    return step


def npy_bytes(descr="<f4", fortran=False, shape=(1, 3, 8, 8), data=None, magic=b"\x93NUMPY", version=(1, 0),
              header_text=None, header_len=None, extra=b""):
    """A .npy file by hand, so every field can be wrong on its own. `data` defaults to the
    float32 bytes of `shape` (zeros)."""
    text = header_text if header_text is not None else repr(
        {"descr": descr, "fortran_order": fortran, "shape": tuple(shape)})
    raw = text.encode()
    pad = (64 - (len(magic) + 4 + len(raw) + 1) % 64) % 64
    raw = raw + b" " * pad + b"\n"
    length = struct.pack("<H", header_len if header_len is not None else len(raw))
    if data is None:
        n = 1
        for d in (1, 3, 8, 8):
            n *= d
        data = b"\x00" * (4 * n)
    return magic + bytes(version) + length + raw + data + extra


def npy(dst, **kwargs):
    return write(dst, npy_bytes(**kwargs))


# ---------------------------------------------------------------------------------------------
# The table.

TINY = [art("tiny.pt", "model.pt")]
EXPORT = ["export", "model.pt", "-o", "out.onnx"]
IMAGE = ["--input", "image:1x3x8x8"]
TWO = [art("two.pt", "model.pt")]
LHS_RHS = ["--input", "lhs:2x3", "--input", "rhs:2x3"]
SUPERRES = [fixture("superres.pt", "model.pt")]
PREVIOUS = b"previous contents of out.onnx: a failed export must leave them alone\n"

# Reasons, written loosely: the row asks for the idea, not the exact wording.
IS_DIR = r"is a directory|not a (regular )?file"
NO_FILE = r"no such file|does not exist|not found|cannot open|cannot find"
DUPLICATE = r"twice|duplicate|more than once|multiple times|already used|used for (two|both)|\bboth\b"
JSON = r"json"


def row(id, desc, setup, cmd, expect, **kw):
    return Row(id, desc, list(setup), list(cmd), list(expect), **kw)


def model_row(id, desc, setup, file, expect, **kw):
    return row(id, desc, setup, ["export", file, "-o", "out.onnx"] + IMAGE, expect, **kw)


def npy_row(id, desc, reason, file="sample.npy", **npy_kwargs):
    # One neutral file name: a reason word ("fortran", "complex") must come from the message.
    setup = TINY + [npy(file, **npy_kwargs)]
    return row(id, desc, setup, EXPORT + ["--input", f"image={file}"], [_re(file), reason])


def config_row(id, desc, content, expect, with_input=True, file_or_key=False):
    """--config user.cfg (not bad.json: "json" in the expected text must come from the message).
    The error names the file; file_or_key: a value that is only wrong for this model may name
    the file or the config key instead (but not a flag the user never gave)."""
    where = r"user\.cfg|dynamic_axes" if file_or_key else r"user\.cfg"
    return row(id, desc, TINY + [write("user.cfg", content)],
               EXPORT + (IMAGE if with_input else []) + ["--config", "user.cfg"], [where] + expect)


def inspect_rows(suffix, desc, setup, file, reason, **kw):
    return [row(f"{cmd}-{suffix}", f"onnxport {cmd}: {desc}", setup, [cmd, file], [_re(file), reason],
                output=None, **kw) for cmd in ("inspect", "check")]


def external_data_rows(suffix, desc, setup, location_text, reason):
    """run, check and inspect of models/model.onnx whose initializer 'w' names its data outside
    the model's directory: each must refuse, naming the initializer and the location."""
    commands = {"run": ["run", "models/model.onnx", "-o", "outdir"], "check": ["check", "models/model.onnx"],
                "inspect": ["inspect", "models/model.onnx"]}
    return [row(f"data-{suffix}-{name}", f"onnxport {name}: {desc}", setup + ([mkdir("outdir")] if name == "run" else []),
                cmd, [r"models/model\.onnx", r"\bw\b", re.escape(location_text), reason],
                output="outdir/y.npy" if name == "run" else None) for name, cmd in commands.items()]


def _re(path):
    return re.escape(path)


ROWS: List[Row] = [
    # -- model files: corrupt, truncated, foreign --------------------------------------------
    model_row("model-empty", "the model is an empty file", [write("suspect.pt", b"")], "suspect.pt",
              [r"suspect\.pt", r"empty|0 bytes|not a (zip|torchscript)|cannot load"]),
    model_row("model-random-bytes", "the model is 4 KiB of random bytes", [art("random.bin", "noise.pt")], "noise.pt",
              [r"noise\.pt", r"cannot load|not a (zip|torchscript)"]),
    model_row("model-truncated", "the model is the first half of a TorchScript zip",
              [truncated("tiny.pt", "half.pt")], "half.pt", [r"half\.pt", r"truncated|corrupt|cannot load"]),
    model_row("model-truncated-fixture", "the model is the first half of the superres fixture",
              [truncated("superres.pt", "superres_half.pt", from_fixtures=True)], "superres_half.pt",
              [r"superres_half\.pt", r"truncated|corrupt|cannot load"]),
    model_row("model-zip-without-code", "a TorchScript zip with its code/ directory removed",
              [art("nocode.pt", "suspect.pt")], "suspect.pt", [r"suspect\.pt", r"cannot load|code"]),
    model_row("model-state-dict-pickle", "torch.save(state_dict) instead of a TorchScript archive",
              [art("state_dict.pt", "suspect.pt")], "suspect.pt",
              [r"suspect\.pt", r"state.dict|torch\.save|torch\.jit|not a torchscript"]),
    model_row("model-onnx-file", "an ONNX file given as the model", [art("relu.onnx")], "relu.onnx",
              [r"relu\.onnx", r"torchscript|torch\.jit|is an onnx"]),
    model_row("model-directory", "the model path is a directory", [mkdir("modeldir.pt")], "modeldir.pt",
              [r"modeldir\.pt", IS_DIR]),
    model_row("model-fifo", "the model path is a FIFO nobody writes to (must not hang)",
              [fifo("stream.pt")], "stream.pt", [r"stream\.pt", r"fifo|named pipe|not a (regular )?file"],
              timeout=5),
    model_row("model-nonexistent", "the model path does not exist", [], "nowhere.pt",
              [r"nowhere\.pt", r"no such file|does not exist|not found"]),
    model_row("model-unknown-op", "TorchScript code calling aten::definitely_not_an_op",
              [art("unknown_op.pt")], "unknown_op.pt", [r"unknown_op\.pt", r"definitely_not_an_op"]),
    model_row("model-code-syntax-error", "TorchScript code edited into a syntax error",
              [art("badcode.pt")], "badcode.pt", [r"badcode\.pt", r"cannot load|syntax|parse|expected"]),

    # -- --opset -------------------------------------------------------------------------------
    row("opset-zero", "--opset 0", TINY, EXPORT + IMAGE + ["--opset", "0"], [r"opset", r"\b0\b"]),
    row("opset-99", "--opset 99 (past the newest supported)", TINY, EXPORT + IMAGE + ["--opset", "99"],
        [r"opset", r"\b99\b"]),
    row("opset-6", "--opset 6 (below the oldest supported)", TINY, EXPORT + IMAGE + ["--opset", "6"],
        [r"opset", r"\b6\b"]),
    row("opset-abc", "--opset abc", TINY, EXPORT + IMAGE + ["--opset", "abc"], [r"--opset", r"abc"]),
    row("opset-empty", "--opset ''", TINY, EXPORT + IMAGE + ["--opset", ""], [r"--opset"]),
    row("opset-overflow", "--opset 4294967313 (17 modulo 2^32)", TINY, EXPORT + IMAGE + ["--opset", "4294967313"],
        [r"opset", r"4294967313"]),

    # -- --input -------------------------------------------------------------------------------
    row("input-bad-shape", "--input with dims 1x0x-3", TINY, EXPORT + ["--input", "image:1x0x-3"],
        [r"--input", r"-3"]),
    row("input-bad-dtype", "--input with dtype float99", TINY, EXPORT + ["--input", "image:1x3x8x8:float99"],
        [r"--input", r"float99"]),
    row("input-empty-dtype", "--input with a trailing ':' and no dtype", TINY, EXPORT + ["--input", "image:1x3x8x8:"],
        [r"--input", r"dtype"]),
    row("input-missing-name", "--input :1x3x8x8 (no name)", TINY, EXPORT + ["--input", ":1x3x8x8"],
        [r"--input", r":1x3x8x8"]),
    row("input-missing-shape", "--input image::float32 (empty shape)", TINY, EXPORT + ["--input", "image::float32"],
        [r"--input", r"image::float32|shape"]),
    row("input-npy-missing", "--input NAME=missing.npy", TINY, EXPORT + ["--input", "image=missing.npy"],
        [r"missing\.npy", NO_FILE]),
    row("input-duplicate-names", "two example inputs with the same name", TWO,
        EXPORT + ["--input", "dup:2x3", "--input", "dup:2x3"], [r"--input", r"\bdup\b", DUPLICATE]),
    row("input-too-many", "two example inputs for a one-argument forward", TINY,
        EXPORT + IMAGE + ["--input", "extra:1x3x8x8"], [r"forward", r"\b1\b", r"\b2\b"]),
    row("input-too-few", "one example input for a two-argument forward", TWO, EXPORT + ["--input", "lhs:2x3"],
        [r"forward", r"\brhs\b", r"no --input"]),
    row("input-none", "no --input at all", TINY, EXPORT, [r"--input"]),
    row("input-wrong-rank", "a 3-d input to a Conv2d model", TINY, EXPORT + ["--input", "image:3x8x8"],
        [r"\bimage\b", r"conv", r"3x8x8|\[3, ?8, ?8\]|\b3-d|rank"]),
    row("input-wrong-rank-fixture", "a 3-d input to the superres fixture", SUPERRES,
        EXPORT + ["--input", "image:1x8x8"], [r"\bimage\b", r"conv", r"1x8x8|\[1, ?8, ?8\]|\b3-d|rank"]),
    row("input-wrong-dtype", "an int64 image for a float Conv2d model", TINY,
        EXPORT + ["--input", "image:1x3x8x8:int64"], [r"\bimage\b", r"int64|long"]),
    row("input-wrong-channels", "4 channels for a 3-channel Conv2d", TINY, EXPORT + ["--input", "image:1x4x8x8"],
        [r"\bimage\b", r"conv", r"channel|1x4x8x8|\[1, ?4, ?8, ?8\]"]),
    row("input-npy-wrong-rank", "a 3-d .npy for a Conv2d model", TINY + [art("rank3.npy")],
        EXPORT + ["--input", "image=rank3.npy"], [r"\bimage\b|rank3\.npy", r"conv"]),
    row("input-npy-int64-fixture", "an int64 .npy image for the superres fixture", SUPERRES + [art("int64img.npy")],
        EXPORT + ["--input", "image=int64img.npy"], [r"\bimage\b|int64img\.npy", r"int64|long"]),
    row("input-broadcast-mismatch", "2x3 and 4x5 inputs to a model adding them", TWO,
        EXPORT + ["--input", "lhs:2x3", "--input", "rhs:4x5"], [r"\blhs\b", r"\brhs\b", r"add"]),
    row("input-huge-shape", "an example input of 3*10^15 elements", TINY,
        EXPORT + ["--input", "image:100000x3x100000x100000"], [r"\bimage\b", r"memory|too large|bytes|[GTPE]iB"]),
    row("input-dim-overflow", "a dimension past int64", TINY, EXPORT + ["--input", "image:99999999999999999999x3x8x8"],
        [r"--input", r"99999999999999999999"]),

    # -- --dynamic-axes ------------------------------------------------------------------------
    row("dyn-unknown-input", "--dynamic-axes names no input or output", TINY,
        EXPORT + IMAGE + ["--dynamic-axes", "nosuch:0=batch"], [r"--dynamic-axes|dynamic.axes", r"nosuch"]),
    row("dyn-unknown-output", "--dynamic-axes names output_9 of a one-output model", TINY,
        EXPORT + IMAGE + ["--dynamic-axes", "output_9:0=batch"], [r"output_9"]),
    row("dyn-axis-past-rank", "--dynamic-axes axis 7 of a 4-d input", TINY,
        EXPORT + IMAGE + ["--dynamic-axes", "image:7=batch"], [r"\bimage\b", r"\b7\b"]),
    row("dyn-output-axis-past-rank", "--dynamic-axes axis 4 of a 4-d output", TINY,
        EXPORT + IMAGE + ["--dynamic-axes", "output_0:4=batch"], [r"output_0", r"\b4\b"]),
    row("dyn-no-colon", "--dynamic-axes image (no axes)", TINY, EXPORT + IMAGE + ["--dynamic-axes", "image"],
        [r"--dynamic-axes", r"image"]),
    row("dyn-empty-axes", "--dynamic-axes 'image:' (empty axis list)", TINY,
        EXPORT + IMAGE + ["--dynamic-axes", "image:"], [r"--dynamic-axes", r"image:"]),
    row("dyn-axis-not-number", "--dynamic-axes image:a=batch", TINY,
        EXPORT + IMAGE + ["--dynamic-axes", "image:a=batch"], [r"--dynamic-axes", r"a=batch"]),
    row("dyn-same-axis-twice", "--dynamic-axes image:0=a,0=b (one axis, two names)", TINY,
        EXPORT + IMAGE + ["--dynamic-axes", "image:0=a,0=b"], [r"--dynamic-axes", r"image", r"\b0\b"]),

    # -- --input-names / --output-names --------------------------------------------------------
    row("names-input-duplicate", "--input-names same,same", TWO, EXPORT + LHS_RHS + ["--input-names", "same,same"],
        [r"\bsame\b", DUPLICATE]),
    row("names-input-too-many", "three --input-names for two inputs", TWO,
        EXPORT + LHS_RHS + ["--input-names", "n1,n2,n3"], [r"input.names|input names", r"\b3\b", r"\b2\b"]),
    row("names-input-empty-entry", "--input-names ',second' (an empty name)", TWO,
        EXPORT + LHS_RHS + ["--input-names", ",second"], [r"--input-names|input name", r"empty"]),
    row("names-output-duplicate", "--output-names out_dup,out_dup", TWO,
        EXPORT + LHS_RHS + ["--output-names", "out_dup,out_dup"], [r"\bout_dup\b", DUPLICATE]),
    row("names-output-too-many", "three --output-names for two outputs", TWO,
        EXPORT + LHS_RHS + ["--output-names", "o1,o2,o3"], [r"output", r"\b3\b", r"\b2\b"]),
    row("names-output-is-input", "--output-names lhs, the name of an input", TWO,
        EXPORT + LHS_RHS + ["--output-names", "lhs"], [r"\blhs\b"]),
    row("names-input-output-same", "--input-names shared --output-names shared", TINY,
        EXPORT + IMAGE + ["--input-names", "shared", "--output-names", "shared"], [r"\bshared\b", DUPLICATE]),

    # -- conflicting flags ---------------------------------------------------------------------
    row("conflict-input-vs-input-names", "--input names the input 'image', --input-names calls it 'other'", TINY,
        EXPORT + IMAGE + ["--input-names", "other"], [r"\bimage\b", r"\bother\b"]),
    row("conflict-dynamic-axes-after-rename", "--dynamic-axes uses the --input name that --input-names replaced",
        TINY, EXPORT + IMAGE + ["--input-names", "other", "--dynamic-axes", "image:0=batch"], [r"\bimage\b"]),
    row("conflict-external-data-is-output", "--external-data names the output file itself", TINY,
        EXPORT + IMAGE + ["--external-data", "out.onnx"], [r"--external-data|external data", r"out\.onnx"]),
    row("conflict-external-data-is-model", "--external-data names the model being exported (beside the output)",
        [art("tiny.pt", "precious.pt")], ["export", "precious.pt", "-o", "out.onnx"] + IMAGE
        + ["--external-data", "precious.pt"], [r"--external-data|external data", r"precious\.pt"]),
    row("conflict-external-data-is-input-npy", "--external-data names the example input .npy", TINY
        + [art("image.npy", "in.npy")], EXPORT + ["--input", "image=in.npy", "--external-data", "in.npy"],
        [r"--external-data|external data", r"in\.npy"]),

    # -- --config ------------------------------------------------------------------------------
    config_row("config-string-for-int", 'opset_version is the string "13"', '{"opset_version": "13"}',
               [r"opset_version"]),
    config_row("config-int-for-bool", "verbose is 1", '{"verbose": 1}', [r"verbose"]),
    config_row("config-string-for-list", 'input_names is the string "image"', '{"input_names": "image"}',
               [r"input_names"]),
    config_row("config-unknown-key", 'the key "opset"', '{"opset": 13}', [r"\bopset\b(?!_)"]),
    config_row("config-wrong-nesting", 'options nested under "nested"', '{"nested": {"opset_version": 13}}',
               [r"\bnested\b"]),
    config_row("config-wrong-nesting-dynamic-axes", "an object where a dim name goes",
               '{"dynamic_axes": {"image": {"0": {"name": "batch"}}}}', [r"dynamic_axes"]),
    config_row("config-dynamic-axes-list", "dynamic_axes is a list", '{"dynamic_axes": ["image"]}', [r"dynamic_axes"]),
    config_row("config-huge-opset", "opset_version 4294967313 (17 modulo 2^32)", '{"opset_version": 4294967313}',
               [r"opset_version"]),
    config_row("config-huge-float-opset", "opset_version 1e12", '{"opset_version": 1e12}', [r"opset_version"]),
    config_row("config-huge-seed", "seed 1e30", '{"seed": 1e30}', [r"seed"]),
    config_row("config-huge-custom-opset", "a custom opset version of 2^32+1",
               '{"custom_opsets": {"com.example": 4294967297}}', [r"custom_opsets|com\.example"]),
    row("config-huge-input-shape", "inputs from the config file of 3*10^15 elements",
        TINY + [write("user.cfg", '{"inputs": ["image:100000x3x100000x100000"]}')], EXPORT + ["--config", "user.cfg"],
        [r"\bimage\b", r"memory|too large|bytes|[GTPE]iB"]),
    config_row("config-invalid-json", "a trailing comma", '{"opset_version": 13,}', [JSON]),
    config_row("config-empty-file", "an empty file", "", [JSON + r"|empty"]),
    config_row("config-not-object", "a JSON list", "[1, 2]", [r"object"]),
    config_row("config-null", "JSON null", "null", [r"object|null"]),
    config_row("config-binary", "binary garbage", b"\xff\xfe{\x00\x01", [JSON]),
    config_row("config-duplicate-key", "opset_version given twice with different values",
               '{"opset_version": 13, "opset_version": 11}', [r"opset_version", DUPLICATE]),
    config_row("config-dynamic-axes-past-rank", "dynamic_axes axis 9 of a 4-d input",
               '{"inputs": ["image:1x3x8x8"], "dynamic_axes": {"image": {"9": "batch"}}}', [r"\bimage\b", r"\b9\b"], file_or_key=True,
               with_input=False),
    config_row("config-dynamic-axes-unknown-name", "dynamic_axes naming no input or output",
               '{"inputs": ["image:1x3x8x8"], "dynamic_axes": {"ghost": [0]}}', [r"\bghost\b"], with_input=False,
               file_or_key=True),
    row("config-directory", "--config names a directory", TINY + [mkdir("cfgdir")],
        EXPORT + IMAGE + ["--config", "cfgdir"], [r"cfgdir", IS_DIR]),
    row("config-missing", "--config names a missing file", TINY, EXPORT + IMAGE + ["--config", "nowhere.json"],
        [r"nowhere\.json", NO_FILE]),

    # -- .npy example inputs -------------------------------------------------------------------
    npy_row("npy-bad-magic", "wrong magic string", r"magic|not a.*npy", magic=b"\x93NUMPZ"),
    # complex .npy files are read (complex inputs travel as real pairs); given to a model that takes
    # float32, the run on them fails naming the input and its dtype
    row("npy-complex-for-real-model", "complex64 data where the model takes float32",
        TINY + [npy("sample.npy", descr="<c8", data=b"\x00" * (8 * 192))], EXPORT + ["--input", "image=sample.npy"],
        [r"image complex64\[1,3,8,8\]", r"ComplexFloat"]),
    npy_row("npy-object-dtype", "an object array (a pickle inside)", r"\|O|object|dtype|pickle",
            descr="|O", data=b"\x80\x04N."),
    npy_row("npy-string-dtype", "a unicode string array", r"U2|string|dtype",
            descr="<U2", shape=(2,), data=b"\x00" * 16),
    npy_row("npy-big-endian", "big-endian float32", r">f4|big.endian|dtype|endian", descr=">f4"),
    npy_row("npy-shape-larger-than-data", "shape 1x3x16x16 over the data of 1x3x8x8",
            r"shape|truncated|short|bytes", shape=(1, 3, 16, 16)),
    npy_row("npy-data-longer-than-shape", "64 bytes after the data the shape describes",
            r"shape|size|bytes|extra|trailing|longer", extra=b"\x00" * 64),
    npy_row("npy-fortran-order", "fortran_order True", r"fortran", fortran=True),
    npy_row("npy-truncated-data", "the data cut to 100 bytes", r"truncated|short|ends early|end of file|bytes",
            data=b"\x00" * 100),
    npy_row("npy-header-past-end", "the header length field points past the end of the file",
            r"header|truncated", header_len=60000),
    npy_row("npy-garbled-header", "a header dict cut off in the middle", r"header|parse|invalid|malformed",
            header_text="{'descr': '<f4', 'fortran_order': False, 'shape': (1,3,8"),
    npy_row("npy-negative-dim", "a negative dimension in the shape", r"shape|dimension|-8",
            shape=(1, 3, -8, 8)),
    npy_row("npy-huge-shape", "a shape of 2^120 elements", r"shape|too large|overflow|size",
            shape=(2 ** 40, 2 ** 40, 2 ** 40)),
    npy_row("npy-unknown-version", "format version 9.0", r"version", version=(9, 0)),
    row("npy-empty-file", "a zero-byte .npy", TINY + [write("blank.npy", b"")],
        EXPORT + ["--input", "image=blank.npy"], [r"blank\.npy", r"empty|magic|not a|truncated"]),
    row("npy-directory", "--input NAME=DIR where DIR is a directory", TINY + [mkdir("npydir.npy")],
        EXPORT + ["--input", "image=npydir.npy"], [r"npydir\.npy", IS_DIR]),

    # -- op packs ------------------------------------------------------------------------------
    row("pack-dir-missing", "--plugin-dir names a missing directory", TINY,
        EXPORT + IMAGE + ["--plugin-dir", "nopacks"], [r"--plugin-dir|plugin|op pack", r"nopacks"]),
    row("pack-dir-is-file", "--plugin-dir names a regular file", TINY + [write("packs.txt", "not a directory\n")],
        EXPORT + IMAGE + ["--plugin-dir", "packs.txt"], [r"packs\.txt", r"not a directory|is a file|directory"]),
    row("pack-dir-unreadable", "--plugin-dir names a directory with mode 000", TINY + [unreadable_dir("lockedpacks")],
        EXPORT + IMAGE + ["--plugin-dir", "lockedpacks"], [r"lockedpacks", r"permission|cannot read|denied"]),
    row("pack-config-dir-missing", "plugin_dirs in --config names a missing directory",
        TINY + [write("packs.json", '{"plugin_dirs": ["/nonexistent/onnxport-packs"]}')],
        EXPORT + IMAGE + ["--config", "packs.json"], [r"/nonexistent/onnxport-packs"]),
    row("pack-not-a-library", "--plugin-dir holding a .so of random bytes",
        TINY + [mkdir("garbage_packs"), art("random.bin", "garbage_packs/libgarbage.so")],
        EXPORT + IMAGE + ["--plugin-dir", "garbage_packs"], [r"libgarbage\.so", r"ELF|not a .*librar|shared"]),
    row("pack-empty-so", "--plugin-dir holding a zero-byte .so",
        TINY + [mkdir("empty_packs"), write("empty_packs/libempty.so", b"")],
        EXPORT + IMAGE + ["--plugin-dir", "empty_packs"], [r"libempty\.so"]),
    row("pack-no-entry-point", "--plugin-dir holding a real shared library without the op pack entry point",
        TINY + [mkdir("noentry_packs"), art("libnoentry.so", "noentry_packs/libnoentry.so")],
        EXPORT + IMAGE + ["--plugin-dir", "noentry_packs"], [r"libnoentry\.so", r"entry|ONNXPORT_OP_PACK|onnxport_pack"]),
    # A pack in a directory named by --plugin-dir was asked for: failing to load it fails the
    # export (rows above). Packs found through ONNXPORT_PLUGIN_PATH are skipped with a warning,
    # and the export fails only if an op it needs stays unmapped: then both are named.
    row("pack-needed-but-broken", "the model needs aten::lgamma and the only ONNXPORT_PLUGIN_PATH pack failed to load",
        [art("lgamma.pt", "model.pt"), mkdir("noentry_packs"), art("libnoentry.so", "noentry_packs/libnoentry.so")],
        EXPORT + ["--input", "x:2x3"], [r"aten::lgamma", r"libnoentry\.so"],
        wrapper="export ONNXPORT_PLUGIN_PATH=noentry_packs"),
    row("pack-plugins-command-dir-missing", "onnxport plugins --plugin-dir names a missing directory", [],
        ["plugins", "--plugin-dir", "nopacks"], [r"nopacks"], output=None),
    row("pack-load-op-library-garbage", "--load-op-library names random bytes", TINY + [art("random.bin", "ops.so")],
        EXPORT + IMAGE + ["--load-op-library", "ops.so"], [r"ops\.so"]),

    # -- output locations ----------------------------------------------------------------------
    row("out-dir-missing", "-o into a directory that does not exist", TINY,
        ["export", "model.pt", "-o", "nodir/out.onnx"] + IMAGE, [r"nodir"], output="nodir/out.onnx"),
    row("out-is-directory", "-o names an existing directory", TINY + [mkdir("outdir")],
        ["export", "model.pt", "-o", "outdir"] + IMAGE, [r"outdir", r"is a directory"], output="outdir"),
    row("out-is-model", "-o names the model being exported: the model must survive", TINY,
        ["export", "model.pt", "-o", "model.pt"] + IMAGE, [r"model\.pt", r"same|overwrite|replace|is the (input|model)"],
        output="model.pt"),
    row("out-is-model-other-spelling", "-o ./model.pt for model.pt", TINY,
        ["export", "model.pt", "-o", "./model.pt"] + IMAGE,
        [r"model\.pt", r"same|overwrite|replace|is the (input|model)"], output="model.pt"),
    row("out-is-input-npy", "-o names the example input .npy", TINY + [art("image.npy", "in.npy")],
        ["export", "model.pt", "-o", "in.npy", "--input", "image=in.npy"],
        [r"in\.npy", r"same|overwrite|replace"], output="in.npy"),
    row("out-is-config", "-o names the --config file", TINY + [write("opts.json", '{"opset_version": 13}')],
        ["export", "model.pt", "-o", "opts.json", "--config", "opts.json"] + IMAGE,
        [r"opts\.json", r"same|overwrite|replace"], output="opts.json"),
    row("out-in-proc", "-o under /proc, where no file can be created", TINY,
        ["export", "model.pt", "-o", "/proc/onnxport-robustness.onnx"] + IMAGE, [r"/proc/onnxport-robustness\.onnx"],
        output="/proc/onnxport-robustness.onnx"),
    row("out-in-sys", "-o under /sys, where no file can be created", TINY,
        ["export", "model.pt", "-o", "/sys/onnxport-robustness.onnx"] + IMAGE, [r"/sys/onnxport-robustness\.onnx"],
        output="/sys/onnxport-robustness.onnx"),
    row("out-empty-path", "-o ''", TINY, ["export", "model.pt", "-o", ""] + IMAGE, [r"(^|[\s'\"(])(-o|--output)\b", r"empty"],
        output=None),
    row("out-file-size-limit", "ulimit -f 100 (100 KiB) while writing a 240 KiB model: SIGXFSZ must be handled",
        SUPERRES, EXPORT + ["--input", "image:1x1x8x8"],
        [r"out\.onnx", r"file size|too large|limit|space|disk"], wrapper="ulimit -f 100"),
    row("out-disk-full", "-o onto a 64 KiB tmpfs, the model is 240 KiB", SUPERRES + [tmpfs("small_fs", "64k")],
        ["export", "model.pt", "-o", "small_fs/out.onnx", "--input", "image:1x1x8x8"],
        [r"small_fs/out\.onnx", r"space|full|disk"], output="small_fs/out.onnx"),
    row("out-disk-full-external-data", "--external-data onto a 120 KiB tmpfs, the weights are 233 KiB",
        SUPERRES + [tmpfs("small_fs", "120k")],
        ["export", "model.pt", "-o", "small_fs/out.onnx", "--input", "image:1x1x8x8", "--external-data"],
        [r"small_fs/out\.onnx", r"space|full|disk"], output="small_fs/out.onnx"),
    row("out-existing-kept-unsupported-op", "out.onnx exists; the export fails on an unmapped op",
        [art("lgamma.pt", "model.pt"), write("out.onnx", PREVIOUS)], EXPORT + ["--input", "x:2x3"], [r"aten::lgamma"]),
    row("out-existing-kept-bad-dynamic-axes", "out.onnx exists; --dynamic-axes names no input or output",
        TINY + [write("out.onnx", PREVIOUS)], EXPORT + IMAGE + ["--dynamic-axes", "ghost:0=batch"], [r"\bghost\b"]),
    row("out-existing-kept-wrong-rank", "out.onnx exists; the example input has the wrong rank",
        TINY + [write("out.onnx", PREVIOUS)], EXPORT + ["--input", "image:3x8x8"], [r"\bimage\b", r"conv"]),

    # -- inspect / check -----------------------------------------------------------------------
    *inspect_rows("empty", "an empty file", [write("blank.onnx", b"")], "blank.onnx",
                  r"empty|0 bytes|not a valid onnx"),
    *inspect_rows("truncated", "the first half of a real .onnx", [truncated("mat.onnx", "half.onnx")], "half.onnx",
                  r"not a valid|truncated|parse|corrupt"),
    *inspect_rows("random", "4 KiB of random bytes", [art("random.bin", "noise.onnx")], "noise.onnx",
                  r"not a valid|parse|corrupt"),
    *inspect_rows("nonexistent", "a missing file", [], "nowhere.onnx", NO_FILE),
    *inspect_rows("directory", "a directory", [mkdir("onnxdir")], "onnxdir", IS_DIR),
    *inspect_rows("huge-length", "a graph field declaring 2^62 bytes", [art("hugelen.onnx")], "hugelen.onnx",
                  r"not a valid|length|truncated|parse|corrupt"),
    row("check-torchscript", "onnxport check: a TorchScript .pt instead of an .onnx", [art("tiny.pt", "model.pt")],
        ["check", "model.pt"], [r"model\.pt", r"not a valid onnx|torchscript|not an onnx"], output=None),
    row("inspect-torchscript-truncated", "onnxport inspect: the first half of a TorchScript .pt (a zip without its "
        "central directory)", [truncated("tiny.pt", "halfmodel.pt")], ["inspect", "halfmodel.pt"],
        [r"halfmodel\.pt", r"cannot load torchscript"], output=None),
    row("check-zero-stride", "onnxport check: a Conv with strides [0, 0] (libonnx's inference would divide by it)",
        [art("stride0.onnx", "conv.onnx")], ["check", "conv.onnx"], [r"conv\.onnx", r"strides must be positive"],
        output=None),
    row("check-conv-rank-mismatch", "onnxport check: a Conv whose input has rank 2 and weight rank 4 (libonnx's "
        "inference would read past the input's dims; a fuzz find)", [art("conv_ranks.onnx", "conv.onnx")],
        ["check", "conv.onnx"], [r"conv\.onnx", r"input 'x' has rank 2 but weight 'k' has rank 4"], output=None),
    row("check-fifo", "onnxport check: a FIFO nobody writes to (must not hang)", [fifo("stream.onnx")],
        ["check", "stream.onnx"], [r"stream\.onnx", r"fifo|named pipe|not a (regular )?file"], output=None, timeout=5),
    *inspect_rows("text-file", "a text file (protobuf parses it as an empty message)",
                  [write("notes.onnx", "hello, this is not a model\n")], "notes.onnx", r"not an onnx model|no ir_version"),
    *inspect_rows("nested-subgraphs", "50,000 If nodes, each in the last one's then_branch",
                  [art("nested_subgraphs.onnx", "deep.onnx")], "deep.onnx", r"nest|deep|recursion"),
    row("run-nested-subgraphs", "onnxport run: 50,000 If nodes, each in the last one's then_branch",
        [art("nested_subgraphs.onnx", "deep.onnx"), mkdir("outdir")], ["run", "deep.onnx", "-o", "outdir"],
        [r"deep\.onnx", r"nest|deep|recursion"], output="outdir/y.npy"),
    row("run-initializer-short", "onnxport run: an initializer of 4 floats holding 8 bytes",
        [art("short_init.onnx", "short.onnx"), mkdir("outdir")], ["run", "short.onnx", "-o", "outdir"],
        [r"short\.onnx", r"initializer 'w'", r"8 bytes"], output="outdir/y.npy"),
    row("run-huge-constant", "onnxport run: a ConstantOfShape of 2^40 floats (4 TiB)",
        [art("huge_constant.onnx", "huge.onnx"), mkdir("outdir")], ["run", "huge.onnx", "-o", "outdir"],
        [r"huge\.onnx", r"ConstantOfShape", r"1099511627776", r"memory"], output="outdir/y.npy"),

    # -- ONNX files naming data files: nothing outside the model's directory may be read --------
    *external_data_rows("parent-dir", "external data at ../outside.bin",
                        [external_data_model("models/model.onnx", "../outside.bin", data_file="outside.bin")],
                        "../outside.bin", r"\.\."),
    *external_data_rows("absolute", "external data at an absolute path to an existing file",
                        [external_data_model("models/model.onnx", lambda ctx: ctx.path("outside.bin"),
                                             data_file="outside.bin")],
                        "outside.bin", r"absolute"),
    *external_data_rows("symlink-out", "external data through a symbolic link that leaves the directory",
                        [external_data_model("models/model.onnx", "weights.bin", data_file="outside.bin"),
                         symlink("models/weights.bin", "../outside.bin")],
                        "weights.bin", r"symbolic link|leaves"),
    *external_data_rows("directory", "external data naming a directory",
                        [external_data_model("models/model.onnx", "weights"), mkdir("models/weights")],
                        "weights", r"directory"),
    row("data-device-run", "onnxport run: external data naming a device through a link (/dev/zero)",
        [external_data_model("models/model.onnx", "zero.bin"), symlink("models/zero.bin", "/dev/zero"), mkdir("outdir")],
        ["run", "models/model.onnx", "-o", "outdir"], [r"models/model\.onnx", r"zero\.bin", r"symbolic link|leaves|device"],
        output="outdir/y.npy"),

    # -- limits: text nested far deeper than anything real --------------------------------------
    config_row("config-deep-nesting", "a value nested 200,000 lists deep",
               '{"dynamic_axes": ' + "[" * 200000 + "]" * 200000 + "}", [r"nest|deep|depth"]),

    # -- flags that name nothing ---------------------------------------------------------------
    row("pack-load-op-library-empty", "--load-op-library '' (dlopen of an empty path is the program itself)", TINY,
        EXPORT + IMAGE + ["--load-op-library", ""], [r"--load-op-library", r"empty"]),

    # -- model types ONNX cannot take ----------------------------------------------------------
    row("model-bfloat16-maxpool", "a bfloat16 max-pooling model (ONNX's MaxPool takes no bfloat16)",
        [art("bf16.pt", "model.pt")],
        EXPORT + ["--input", "image:1x3x8x8:bfloat16", "--opset", "17"], [r"\bMaxPool\b", r"bfloat16", r"tensor\(float\)", r"\.float\(\)|float32"]),
]


def check_table(rows=ROWS):
    ids = [r.id for r in rows]
    dup = {i for i in ids if ids.count(i) > 1}
    assert not dup, f"duplicate row ids: {sorted(dup)}"
    for r in rows:
        assert r.expect, f"{r.id}: no expected text"
        assert r.desc, f"{r.id}: no description"
    return rows
