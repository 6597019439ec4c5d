#!/usr/bin/env python3
"""Fails when an #include crosses a layer upward.

The layers, lowest first (docs/architecture.md, "Layers"):
  sdk/            what op packs compile against: includes nothing of ours but itself
  registry/       the SDK
  plugins/        the SDK only (an op pack links nothing else)
  core/1_base     options, reports, the ONNX IR, files
  core/2_eval     the ONNX evaluator
  core/3_export   the export pipeline; its stage folders 1_load .. 6_write are ordered too: a stage
                  includes only earlier stages (and the layer's public include/), the files at the
                  folder's root (pipeline, exporter) include any stage
  core/4_tools    run, verify, the picture, listings
  core/5_cli      the CLI
  python/         a client of the core, like the CLI
  python/bridge   the Python op-pack bridge: the SDK and the registry (and Python); only python/
                  includes it, so that the core, the CLI and the C++ packs never need Python

Every quoted include of a file in these folders must resolve to a header of the project, and
that header's layer must be the including file's or a lower one. The SDK also stays free of
torch and onnx headers (an op pack builds without libtorch). No folder holds more than
MAX_FOLDER_LINES lines of source in its own files (its subfolders count apart): one that grows
past it is split by what its files do (core/2_eval's kernel families are core/2_eval/kernels/).

  check_layers.py ROOT              check the tree at ROOT; exit 1 listing every upward include
  check_layers.py ROOT --self-test  plant upward includes in a copy of ROOT and check that each
                                    one is caught (and that the copy passes without them)
"""
import argparse
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
SOURCE_SUFFIXES = {".h", ".hpp", ".cpp", ".cc"}
CORE_LAYER = re.compile(r"^(\d+)_[a-z]+$")
# The core's layer N ranks 2 + N. Folders of one rank but another family are siblings, which
# never include each other: registry and plugins; the CLI and the Python package.
SDK, REGISTRY, PLUGINS = 0, 1, 1
PYTHON = 2 + 5
PYTHON_BRIDGE = 2  # above the registry; reached from python/ only (see violations)
# Headers the build generates (python/CMakeLists.txt): not in the tree.
GENERATED = {("python/bridge", "bridge_source.h")}
TOP = 1000  # a file at the root of a staged layer (3_export/pipeline.cpp) is above its stages
MAX_FOLDER_LINES = 4500


class Rank:
    """Where a file sits: its layer's rank, then its stage inside the layer (0 when unstaged)."""

    def __init__(self, layer, stage=0, name="", family=None):
        self.layer, self.stage, self.name = layer, stage, name
        self.family = family or name

    def below_or_same(self, other):
        if self.layer != other.layer:
            return self.layer < other.layer
        return self.family == other.family and self.stage <= other.stage

    def __str__(self):
        return self.name


def rank_of(root, path):
    """The Rank of a file of the project, or None for files outside the layered folders."""
    rel = path.relative_to(root).parts
    if rel[0] == "sdk":
        return Rank(SDK, name="sdk")
    if rel[0] == "registry":
        return Rank(REGISTRY, name="registry")
    if rel[0] == "plugins":
        return Rank(PLUGINS, name="plugins")
    if rel[:2] == ("python", "bridge"):
        return Rank(PYTHON_BRIDGE, name="python/bridge")
    if rel[0] == "python":
        return Rank(PYTHON, name="python")
    if rel[0] != "core" or len(rel) < 3:
        return None
    layer = CORE_LAYER.match(rel[1])
    if not layer:
        return None
    number = int(layer.group(1))
    name = f"core/{rel[1]}"
    staged = any(CORE_LAYER.match(p.name) for p in (root / "core" / rel[1]).iterdir() if p.is_dir())
    if not staged:
        return Rank(2 + number, name=name)
    if rel[2] == "include":  # the layer's public declarations: below its stages
        return Rank(2 + number, 0, f"{name}/include", name)
    stage = CORE_LAYER.match(rel[2]) if len(rel) > 3 else None
    if stage:
        return Rank(2 + number, int(stage.group(1)), f"{name}/{rel[2]}", name)
    return Rank(2 + number, TOP, name)


def public_include_dirs(root):
    dirs = [root / "sdk" / "include", root / "registry" / "include", root / "python" / "bridge" / "include"]
    dirs += sorted(p / "include" for p in (root / "core").iterdir() if CORE_LAYER.match(p.name))
    return [d for d in dirs if d.is_dir()]


def resolve(root, including, target, public_dirs):
    """The file a quoted include names, or None when it names no file of the project."""
    candidates = [including.parent / target, root / "core" / target]
    candidates += [d / target for d in public_dirs]
    for c in candidates:
        if c.is_file():
            return c.resolve()
    return None


def layered_sources(root):
    for top in ("sdk", "registry", "plugins", "core", "python"):
        for path in sorted((root / top).rglob("*")):
            if path.suffix in SOURCE_SUFFIXES and path.is_file() and rank_of(root, path) is not None:
                yield path


def oversized_folders(root):
    lines = {}
    for path in layered_sources(root):
        folder = path.parent.relative_to(root)
        lines[folder] = lines.get(folder, 0) + path.read_text(errors="replace").count("\n")
    return [f"{folder}: {n} lines of source in its own files, over the {MAX_FOLDER_LINES} a folder may hold: "
            "split it by what its files do" for folder, n in sorted(lines.items()) if n > MAX_FOLDER_LINES]


def violations(root):
    root = root.resolve()
    public_dirs = public_include_dirs(root)
    found = oversized_folders(root)
    checked = 0
    for path in layered_sources(root):
        rank = rank_of(root, path)
        text = path.read_text(errors="replace")
        for match in INCLUDE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            where = f"{path.relative_to(root)}:{line}"
            bracket, target = match.groups()
            if rank.layer == SDK and re.match(r"(torch|ATen|c10|onnx)/", target):
                found.append(f"{where}: the SDK includes <{target}>: op packs must build without libtorch and libonnx")
                continue
            if bracket == "<":
                continue
            included = resolve(root, path, target, public_dirs)
            if included is None and (rank.name, target) in GENERATED:
                continue
            if included is None:
                if rank.layer >= 2:  # inside the core every quoted include is a file of ours
                    found.append(f'{where}: "{target}" names no header of the project')
                continue
            checked += 1
            included_rank = rank_of(root, included)
            if included_rank is None:
                found.append(f'{where}: "{target}" is outside the layered folders')
            elif included_rank.name == "python/bridge" and path.relative_to(root).parts[0] != "python":
                found.append(f'{where}: {rank} includes "{target}" from python/bridge: only the Python package '
                             "reaches the bridge; the core, the CLI and the C++ packs need no Python")
            elif not included_rank.below_or_same(rank):
                found.append(f'{where}: {rank} includes "{target}" from {included_rank}, '
                             + ("a layer above it" if included_rank.layer >= rank.layer and included_rank.family == rank.family
                                or included_rank.layer > rank.layer else "a sibling it must not reach"))
    return found, checked


def check(root):
    found, checked = violations(root)
    for v in found:
        print(v)
    if found:
        print(f"layering: {len(found)} include(s) cross a layer upward or folder(s) are too large "
              "(docs/architecture.md, \"Layers\")")
        return 1
    print(f"layering: ok: {checked} includes of our own headers, none crosses a layer upward")
    return 0


# Each planted include must be caught: (file to append to, include line, text the report must hold).
PLANTED = [
    ("core/3_export/pipeline.h", '#include "4_tools/per_node.h"', "core/3_export includes"),
    ("core/3_export/3_convert/convert.cpp", '#include "3_export/5_passes/passes.h"', "core/3_export/3_convert includes"),
    ("core/3_export/1_load/load.cpp", '#include "3_export/pipeline.h"', "core/3_export/1_load includes"),
    ("core/2_eval/evaluator.cpp", '#include "onnxport/export.h"', "core/2_eval includes"),
    ("core/1_base/onnx_ir.cpp", '#include "2_eval/kernel.h"', "core/1_base includes"),
    ("core/3_export/5_passes/passes.cpp", '#include "onnxport/verify.h"', "core/3_export/5_passes includes"),
    ("core/4_tools/verify.cpp", '#include "5_cli/commands.h"', "core/4_tools includes"),
    ("core/3_export/6_write/model_writer.cpp", '#include "3_export/6_write/no_such_header.h"', "names no header"),
    ("registry/src/registry.cpp", '#include "onnxport/export.h"', "registry includes"),
    ("sdk/src/tensor.cpp", "#include <torch/script.h>", "the SDK includes <torch/script.h>"),
    ("plugins/elementwise/pack.cpp", '#include "onnxport/registry/registry.h"', "a sibling it must not reach"),
    ("python/src/onnxport_module.cpp", '#include "5_cli/commands.h"', "a sibling it must not reach"),
    ("core/3_export/3_convert/convert.cpp", '#include "onnxport/python_bridge.h"', "need no Python"),
    ("python/bridge/entry.cpp", '#include "onnxport/export.h"', "python/bridge includes"),
]


def self_test(root):
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / "tree"
        folders = ["sdk", "registry", "plugins", "core", "python"]
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"] + folders, cwd=root,
                                capture_output=True, text=True)
        if listed.returncode == 0:
            files = listed.stdout.split()
        else:  # not a git checkout: every file of the folders
            files = [str(p.relative_to(root)) for top in folders for p in (root / top).rglob("*") if p.is_file()]
        for f in files:
            (copy / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / f, copy / f)
        clean, _ = violations(copy)
        if clean:
            print("self-test: the unplanted copy already fails:\n" + "\n".join(clean))
            return 1
        failures = 0
        for rel, line, expected in PLANTED:
            target = copy / rel
            if not target.is_file():
                print(f"self-test: {rel} does not exist: update PLANTED")
                failures += 1
                continue
            original = target.read_text()
            target.write_text(original + "\n" + line + "\n")
            found, _ = violations(copy)
            target.write_text(original)
            caught = [v for v in found if v.startswith(rel + ":") and expected in v]
            print(f"self-test: {'caught' if caught else 'MISSED'} {line} in {rel}" +
                  (f": {caught[0]}" if caught else ""))
            failures += not caught
        planted = copy / "core" / "2_eval" / "planted_large.cpp"
        planted.write_text("// planted\n" * (MAX_FOLDER_LINES + 1))
        found, _ = violations(copy)
        planted.unlink()
        caught = [v for v in found if v.startswith("core/2_eval:") and "lines of source" in v]
        print(f"self-test: {'caught' if caught else 'MISSED'} a folder of more than {MAX_FOLDER_LINES} lines" +
              (f": {caught[0]}" if caught else ""))
        failures += not caught
        if failures:
            print(f"self-test: {failures} planted include(s) or folder(s) not caught")
            return 1
        print(f"self-test: ok: all {len(PLANTED)} planted upward includes caught")
        return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=pathlib.Path)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    root = args.root.resolve()
    return self_test(root) if args.self_test else check(root)


if __name__ == "__main__":
    sys.exit(main())
