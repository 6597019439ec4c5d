#!/usr/bin/python3
"""The aten operator schemas of the PyTorch releases onnxport meets, and what changed between them.

A TorchScript file names its operators; one written by a newer PyTorch may call an operator, an
overload or an argument the build's libtorch lacks, or leave out an argument whose default differs
on that libtorch. This script keeps committed lists of schemas per release under schemas/ and
generates docs/newer-operators.md from them and from the table in
core/3_export/1_load/newer_operators.cpp.

  schemas/torch-R.txt  the `- func:` lines of release R's torchgen native_functions.yaml
  schemas/jit-R.txt    the aten schemas TorchScript knows on release R beyond that yaml (its own
                       operators: aten::dim, aten::size.int, ...), for the releases onnxport builds
                       against; written with that release's torch

Modes:
  extract --release R YAML  write schemas/torch-R.txt from a native_functions.yaml of release R
  extract-jit --release R   write schemas/jit-R.txt with the torch this Python imports (release R)
  docs                      write docs/newer-operators.md from the committed lists
  check                     exit 1 when docs/newer-operators.md is stale, or when the lists of the
                            torch installed at /usr/lib/python3/dist-packages differ from what it
                            gives (the ctest test docs.newer_operators_fresh)

Only extract-jit, and check's comparison of a jit list, import torch; PyYAML is never needed.
"""
import argparse
import collections
import fnmatch
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, os.pardir, os.pardir))
SCHEMA_DIR = os.path.join(HERE, "schemas")
DOC = os.path.join(ROOT, "docs", "newer-operators.md")
NEWER_OPERATORS_CPP = os.path.join(ROOT, "core", "3_export", "1_load", "newer_operators.cpp")
# The release that first declares each operator 1.13 lacks, for the load stage's one-line error.
RELEASE_TABLE = os.path.join(ROOT, "core", "3_export", "1_load", "operator_releases.inc")
SITE = "/usr/lib/python3/dist-packages"
YAML_IN_SITE = "torchgen/packaged/ATen/native/native_functions.yaml"
INSTALLED_YAML = os.path.join(SITE, YAML_IN_SITE)
INSTALLED_VERSION = os.path.join(SITE, "torch", "version.py")
SCRIPT = "tests/newer_torch/operator_releases.py"
PYTHON = "/usr/bin/python3"

Release = collections.namedtuple("Release", "key full where")
RELEASES = [
    Release("1.13", "1.13.1", "Debian 12's python3-torch 1.13.1+dfsg"),
    Release("2.6", "2.6.0", "Debian 13's python3-torch 2.6.0+dfsg"),
    Release("2.14", "2.14.1", "Debian unstable's python3-torch 2.14.1+dfsg"),
]
RELEASE_KEYS = [r.key for r in RELEASES]
BUILDS = ["1.13", "2.6"]  # the libtorch releases onnxport builds against (docs/architecture.md, "Releases")


def release_of(key):
    return next(r for r in RELEASES if r.key == key)


def schema_file(release):
    return os.path.join(SCHEMA_DIR, f"torch-{release}.txt")


def jit_file(release):
    return os.path.join(SCHEMA_DIR, f"jit-{release}.txt")


def relative(path):
    return os.path.relpath(path, ROOT)


# ----------------------------------------------------------------------------------------------
# The committed lists


def schemas_of_yaml(text):
    """The `aten::` schemas of a native_functions.yaml, sorted: each `- func:` line's value with its
    whitespace collapsed. The yaml writes every func on one line, unquoted; anything else is
    refused rather than guessed at."""
    schemas = set()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith("- func:"):
            continue
        value = " ".join(line[len("- func:"):].split())
        if not value or value[0] in "'\"|>" or "(" not in value or " -> " not in value:
            raise ValueError(f"line {number}: not a one-line schema: {line.strip()!r}")
        schemas.add("aten::" + value)
    if not schemas:
        raise ValueError("no `- func:` lines")
    return sorted(schemas)


def list_text(release, schemas):
    """schemas/torch-R.txt: a one-line header, then one schema a line."""
    r = release_of(release)
    return (f"# PyTorch {r.full} ({r.where}): the `- func:` schemas of {YAML_IN_SITE}, aten:: prefixed, "
            f"sorted. Written by `{PYTHON} {SCRIPT} extract --release {release} YAML`.\n"
            + "".join(s + "\n" for s in schemas))


def jit_schemas(torch, yaml_schemas):
    """The aten schemas the imported torch's TorchScript knows whose overload is not in the yaml,
    as libtorch prints them, sorted."""
    in_yaml = set(key_of(s) for s in yaml_schemas)
    found = set(" ".join(str(s).split()) for s in torch._C._jit_get_all_schemas())
    return sorted(s for s in found if s.startswith("aten::") and key_of(s) not in in_yaml)


def jit_text(release, schemas):
    """schemas/jit-R.txt: a one-line header, then one schema a line."""
    r = release_of(release)
    return (f"# PyTorch {r.full} ({r.where}): the aten:: schemas TorchScript knows beyond torch-{release}.txt "
            f"(torch._C._jit_get_all_schemas() less the overloads of native_functions.yaml), as libtorch "
            f"prints them, sorted. Written by `{PYTHON} {SCRIPT} extract-jit --release {release}` "
            f"with that release's torch.\n" + "".join(s + "\n" for s in schemas))


def read_lines(path):
    with open(path) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def read_lists():
    return {r: read_lines(schema_file(r)) for r in RELEASE_KEYS}


def read_jit_lists():
    """build -> {overload: schema} for the builds whose jit list is committed."""
    return {b: {key_of(s): s for s in read_lines(jit_file(b))} for b in BUILDS if os.path.exists(jit_file(b))}


def key_of(schema_text):
    """`aten::name.overload` of a schema."""
    return schema_text[:schema_text.index("(")]


# ----------------------------------------------------------------------------------------------
# Parsing schemas

Argument = collections.namedtuple("Argument", "type name default kwarg_only")


class Schema:
    """One operator overload: `aten::name.overload(arguments) -> returns`."""

    def __init__(self, text):
        self.text = text
        open_at = text.index("(")
        close_at = matching_paren(text, open_at)
        self.key = text[:open_at]
        self.name, _, self.overload = self.key.partition(".")
        rest = text[close_at + 1:]
        if not rest.startswith(" -> "):
            raise ValueError(f"no ' -> ' after the arguments: {text}")
        self.returns = rest[len(" -> "):]
        self.arguments = []
        kwarg_only = False
        for piece in split_top_level(text[open_at + 1:close_at]):
            if piece == "*":
                kwarg_only = True
                continue
            m = re.fullmatch(r"(.+?)\s+(\w+)(?:=(.+))?", piece, re.S)
            if not m:
                raise ValueError(f"cannot read argument {piece!r} of {text}")
            self.arguments.append(Argument(m.group(1), m.group(2), m.group(3), kwarg_only))

    def argument(self, name):
        return next((a for a in self.arguments if a.name == name), None)

    def is_out_variant(self):
        """An out= overload: named `out` or `*_out`, or with a keyword-only argument it writes
        (`*, Tensor(a!) out`)."""
        return (self.overload == "out" or self.overload.endswith("_out")
                or any(a.kwarg_only and "!" in a.type for a in self.arguments))

    def mutates_argument(self):
        return any("!" in a.type for a in self.arguments)

    def rebuilt(self):
        """The schema written back from its parts (equals .text when it was read right)."""
        pieces, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                pieces.append("*")
                star = True
            pieces.append(f"{a.type} {a.name}" + (f"={a.default}" if a.default is not None else ""))
        return f"{self.key}({', '.join(pieces)}) -> {self.returns}"


def matching_paren(text, open_at):
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f"unbalanced parentheses: {text}")


def split_top_level(text):
    """`text` split at the commas outside brackets and string literals, each piece stripped."""
    pieces, current, depth, quote, escaped = [], [], 0, None, False
    for c in text:
        current.append(c)
        if quote:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            pieces.append("".join(current[:-1]).strip())
            current = []
    if "".join(current).strip():
        pieces.append("".join(current).strip())
    return pieces


def as_torchscript_sees(type_text):
    """A type as TorchScript matches it: `SymInt` is `int` there (c10::Argument::type() is the
    "fake" type int; SymInt is only its real_type())."""
    return re.sub(r"\bSymInt\b", "int", type_text)


def strip_alias(type_text):
    """A type without alias annotations: `Tensor(a!)` is `Tensor`, `Tensor(a -> *)[]` is `Tensor[]`."""
    return re.sub(r"\bTensor\([^()]*\)", "Tensor", type_text)


# ----------------------------------------------------------------------------------------------
# Comparing releases

NEW_OPERATOR = "new operator"
NEW_OVERLOAD = "new overload"
ADDED_WITH_DEFAULT = "argument added with default"
ADDED_WITHOUT_DEFAULT = "argument added without default"
DEFAULT_CHANGED = "default changed"
DEFAULT_ADDED = "default added"
DEFAULT_REMOVED = "default removed"
REMOVED_OR_RENAMED = "argument removed/renamed"
TYPE_CHANGED = "type changed"
ORDER_CHANGED = "order or keyword-only changed"
RETURN_CHANGED = "return changed"
ALIAS_CHANGED = "alias annotation changed"
SYMINT_ONLY = "int written SymInt"
REMOVED = "overload removed"

# Every kind, in the order the figures list them, with what it means for a file.
KIND_MEANINGS = collections.OrderedDict([
    (NEW_OPERATOR, "no earlier release has an operator of this name in its native_functions.yaml."),
    (NEW_OVERLOAD, "the operator existed, this overload did not."),
    (ADDED_WITH_DEFAULT, "old files, which do not pass it, still match the new schema; new files that pass it "
                         "do not match the old one (TorchScript writes it when it differs from the default)."),
    (ADDED_WITHOUT_DEFAULT, "old files do not match the new schema, nor new files the old one."),
    (DEFAULT_CHANGED, "both releases have the argument with different defaults: a file that leaves it out gets "
                      "the default of the libtorch that reads it, since TorchScript does not write trailing "
                      "arguments equal to the writer's default (issue 46, item 5)."),
    (DEFAULT_ADDED, "the argument had no default: new files may leave it out, which the old schema refuses."),
    (DEFAULT_REMOVED, "old files that left the argument out no longer match."),
    (REMOVED_OR_RENAMED, "an argument of the old schema is gone, or has another name (files passing it by "
                         "keyword, as TorchScript writes keyword-only arguments, no longer match)."),
    (TYPE_CHANGED, "an argument's type, as TorchScript matches it, changed."),
    (ORDER_CHANGED, "arguments moved, or became (or stopped being) keyword-only."),
    (RETURN_CHANGED, "the returned types, their number or their names changed."),
    (ALIAS_CHANGED, "only an alias annotation changed (`Tensor` → `Tensor(b!)`): the same call, other "
                    "aliasing for the JIT's passes."),
    (SYMINT_ONLY, "`int` declared `SymInt`: the same schema to TorchScript, which matches `SymInt` as `int`."),
    (REMOVED, "the overload is gone: files of the earlier release that call it do not load."),
])


def argument_text(a):
    return f"`{a.type} {a.name}" + (f"={a.default}`" if a.default is not None else "`")


def type_change(old_type, new_type, label, changed_kind):
    """(kind, text) for two type texts that differ, or None where TorchScript sees one type (an
    `int` written `SymInt`). Only the alias annotation differing is ALIAS_CHANGED."""
    old_seen, new_seen = as_torchscript_sees(old_type), as_torchscript_sees(new_type)
    if old_seen == new_seen:
        return None
    kind = ALIAS_CHANGED if strip_alias(old_seen) == strip_alias(new_seen) else changed_kind
    return kind, f"{label}`{old_type}` → `{new_type}`"


def compare(old, new):
    """[(kind, detail)] for two schemas of one overload; empty when they are the same."""
    if old.text == new.text:
        return []
    changes = []
    old_names = [a.name for a in old.arguments]
    new_names = [a.name for a in new.arguments]
    # A renamed argument: gone from its place, which one of a new name and the same type takes.
    renamed = {}
    for index, a in enumerate(old.arguments):
        if a.name not in new_names and index < len(new.arguments):
            b = new.arguments[index]
            if (b.name not in old_names and b.kwarg_only == a.kwarg_only
                    and as_torchscript_sees(b.type) == as_torchscript_sees(a.type)):
                renamed[a.name] = b.name
    for index, a in enumerate(new.arguments):
        if a.name in old_names or a.name in renamed.values():
            continue
        kind = ADDED_WITH_DEFAULT if a.default is not None else ADDED_WITHOUT_DEFAULT
        where = "keyword-only" if a.kwarg_only else "positional"
        moved = [b.name for b in new.arguments[index + 1:] if not b.kwarg_only and b.name in old_names]
        if not a.kwarg_only and moved:
            where += ", before " + ", ".join(f"`{n}`" for n in moved)
        changes.append((kind, f"{argument_text(a)} added ({where})"))
    for a in old.arguments:
        if a.name in renamed:
            changes.append((REMOVED_OR_RENAMED, f"`{a.name}` renamed `{renamed[a.name]}`"))
        elif a.name not in new_names:
            changes.append((REMOVED_OR_RENAMED, f"{argument_text(a)} removed"))
    symint = False
    for a in old.arguments:
        b = new.argument(renamed.get(a.name, a.name))
        if b is None:
            continue
        if a.type != b.type:
            change = type_change(a.type, b.type, f"`{b.name}`: ", TYPE_CHANGED)
            if change:
                changes.append(change)
            else:
                symint = True
        if a.default != b.default:
            if a.default is None:
                changes.append((DEFAULT_ADDED, f"`{b.name}`: no default → `{b.default}`"))
            elif b.default is None:
                changes.append((DEFAULT_REMOVED, f"`{b.name}`: `{a.default}` → no default"))
            else:
                changes.append((DEFAULT_CHANGED, f"`{b.name}`: `{a.default}` → `{b.default}`"))
        if a.kwarg_only != b.kwarg_only:
            became = "became keyword-only" if b.kwarg_only else "became positional"
            changes.append((ORDER_CHANGED, f"`{b.name}` {became}"))
    kept_old = [renamed.get(n, n) for n in old_names if renamed.get(n, n) in new_names]
    kept_new = [n for n in new_names if n in kept_old]
    if kept_old != kept_new:
        changes.append((ORDER_CHANGED, "order " + ", ".join(kept_old) + " → " + ", ".join(kept_new)))
    if old.returns != new.returns:
        change = type_change(old.returns, new.returns, "returns ", RETURN_CHANGED)
        if change:
            changes.append(change)
        else:
            symint = True
    if symint:
        changes.append((SYMINT_ONLY, ("also " if changes else "") + "`int` → `SymInt`"))
    if not changes:
        raise ValueError(f"schemas differ in a way not classified:\n  {old.text}\n  {new.text}")
    return changes


# One row: an overload at the release where it appeared, changed or went. old: the schema of the
# release compared with (None for a new overload); new: this release's (None for a removal).
Entry = collections.namedtuple("Entry", "key release kinds changes old new")


def entries(lists):
    """The rows, and {release: {overload: Schema}}. Each release is compared with the latest
    earlier release that has the overload; a removal is reported at the first release without it."""
    by_release = {r: {s.key: s for s in map(Schema, lists[r])} for r in RELEASE_KEYS}
    names = {r: set(s.name for s in by_release[r].values()) for r in RELEASE_KEYS}
    rows = []
    for key in sorted(set().union(*by_release.values())):
        last = None
        for index, r in enumerate(RELEASE_KEYS):
            schema = by_release[r].get(key)
            if schema is not None and last is None and index > 0:
                existed = any(schema.name in names[e] for e in RELEASE_KEYS[:index])
                rows.append(Entry(key, r, [NEW_OVERLOAD if existed else NEW_OPERATOR], [], None, schema))
            elif schema is not None and last is not None:
                changes = compare(last, schema)
                if changes:
                    rows.append(Entry(key, r, unique(k for k, _ in changes), changes, last, schema))
            elif schema is None and index > 0 and key in by_release[RELEASE_KEYS[index - 1]]:
                rows.append(Entry(key, r, [REMOVED], [], last, None))
            if schema is not None:
                last = schema
    return rows, by_release


def unique(items):
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


GROUP_BACKWARD = "backward operators (`*_backward*`)"
GROUP_FOREACH = "`_foreach_*` operators"
GROUP_OUT = "out= overloads (`.out`, `.*_out`, keyword-only `Tensor(a!)` arguments)"
GROUP_INPLACE = "in-place operators (`name_` with a `Tensor(a!)` argument)"
GROUP_SYMINT = "changed only by `int` → `SymInt`"
GROUPS = [GROUP_BACKWARD, GROUP_FOREACH, GROUP_OUT, GROUP_INPLACE, GROUP_SYMINT]


def group_of(entry):
    """The summary group of a row kept out of the main tables, or None for a main-table row."""
    schema = entry.new or entry.old
    name = schema.name[len("aten::"):]
    if fnmatch.fnmatch(name, "*_backward*"):
        return GROUP_BACKWARD
    if name.startswith("_foreach_"):
        return GROUP_FOREACH
    if schema.is_out_variant():
        return GROUP_OUT
    if name.endswith("_") and schema.mutates_argument():
        return GROUP_INPLACE
    if entry.kinds == [SYMINT_ONLY]:
        return GROUP_SYMINT
    return None


# ----------------------------------------------------------------------------------------------
# onnxport's registrations and the builds


def registered_schemas(path=NEWER_OPERATORS_CPP):
    """{overload: schema} of newer_operators()'s table: its C++ string literals, adjacent ones
    joined, that read as a schema."""
    with open(path) as f:
        source = f.read()
    body = source[source.index("table = {", source.index("newer_operators()")):]
    body = body[:body.index("\n  };")]
    literal = r'"(?:[^"\\\n]|\\.)*"'
    # Comments out (they may hold quotes), string literals kept.
    body = re.sub(literal + r"|//[^\n]*", lambda m: m.group(0) if m.group(0).startswith('"') else "", body)
    found = {}
    for run in re.finditer(r"(?:" + literal + r"\s*)+", body):
        text = "".join(piece[1:-1] for piece in re.findall(literal, run.group(0)))
        text = " ".join(bytes(text, "utf-8").decode("unicode_escape").split())
        if re.match(r"\w+::[\w.]+\(.*\) -> ", text):
            found[key_of(text)] = text
    return found


def on_build(key, schema, build, by_release, jit, registered):
    """What a file calling `schema` meets on `build`, in the order onnxport's load stage asks
    (register_newer_operators): the dispatcher, TorchScript's own operators, then onnxport's table."""
    seen = as_torchscript_sees(schema.text)
    known = by_release[build].get(key)
    if known is not None:
        return "known" if as_torchscript_sees(known.text) == seen else "known, other schema"
    if build in jit and key in jit[build]:
        own = "known (TorchScript's own)"
        return own if as_torchscript_sees(jit[build][key]) == seen else own + ", other schema"
    if key in registered:
        return "**registered**" if registered[key] == schema.text else "**registered differently**"
    if build in jit:
        return f"not known to libtorch {build}"
    return f"not in {build}'s native_functions.yaml"


# ----------------------------------------------------------------------------------------------
# The page


def code(text):
    return "`" + text.replace("|", "\\|") + "`"


def cell(text):
    return text.replace("|", "\\|")


def sort_key(entry):
    name = entry.key[len("aten::"):]
    return (name.lstrip("_").lower(), name, RELEASE_KEYS.index(entry.release))


def schema_tail(schema):
    """A schema without `aten::name.overload` (the row names it)."""
    return schema.text[schema.text.index("("):]


def generate_doc(lists, jit, registered):
    rows, by_release = entries(lists)
    main = sorted((e for e in rows if group_of(e) is None), key=sort_key)
    rest = sorted((e for e in rows if group_of(e) is not None), key=sort_key)
    later = RELEASE_KEYS[1:]
    lines = []
    w = lines.append

    def builds(e, schema):
        return " | ".join(on_build(e.key, schema, b, by_release, jit, registered) for b in BUILDS)

    builds_header = " | ".join(f"on the {b} build" for b in BUILDS)
    builds_rule = "---|" * len(BUILDS)

    w("# Operators of newer PyTorch releases")
    w("")
    w(f"<!-- Generated by `{PYTHON} {SCRIPT} docs` from tests/newer_torch/schemas/ and")
    w("     core/3_export/1_load/newer_operators.cpp; do not edit. The ctest test")
    w("     docs.newer_operators_fresh fails when this page is stale. -->")
    w("")
    w("A TorchScript file calls its operators by name, picks an overload by the arguments it passes, and "
      "leaves out trailing arguments equal to their defaults. A file written by a newer PyTorch than the "
      "libtorch that loads it may therefore call an operator or overload that libtorch lacks, pass an "
      "argument it does not declare, or rely on a default it declares differently. This page lists the "
      "aten operator overloads in which PyTorch " + ", ".join(r.full for r in RELEASES[:-1])
      + f" and {RELEASES[-1].full} differ, "
      "and what onnxport's builds (on libtorch " + " and ".join(release_of(b).full for b in BUILDS)
      + ") make of each.")
    w("")
    w("It is generated by `" + f"{PYTHON} {SCRIPT} docs" + "` from committed lists: "
      "`tests/newer_torch/schemas/torch-<release>.txt`, the `- func:` lines of each release's "
      "`native_functions.yaml` (`" + SCRIPT + " extract --release <release> <yaml>`), and "
      "`jit-<release>.txt`, the aten operators TorchScript defines itself beyond that file (`aten::dim`, "
      "`aten::size.int`, ...; `extract-jit`, run with that release's torch). Rows compare "
      "`native_functions.yaml` only: each release against the latest earlier one that has the overload. "
      "An overload that is new and changes again later has a row for each. Argument types are compared as "
      "TorchScript matches them, where `SymInt` is `int`; defaults by their text in the schema.")
    w("")
    w("*On the 1.13 build* and *on the 2.6 build* say what a file calling the row's schema meets on that "
      "build, checked in the order onnxport's load stage checks (`register_newer_operators`): "
      "**known**: the build's libtorch has the overload with this schema, `SymInt` read as `int` "
      "(*known, other schema*: with its own, different one); *known (TorchScript's own)*: TorchScript "
      "defines it outside "
      "`native_functions.yaml`; **registered**: libtorch lacks it and onnxport registers exactly this "
      "schema, with a kernel, before loading the file (the table in "
      "`core/3_export/1_load/newer_operators.cpp`); **registered differently**: onnxport registers the "
      "overload with another schema; *not known to libtorch X*: a file calling it does not load on that "
      "build (onnxport says so in one line).")
    missing = [b for b in BUILDS if b not in jit]
    if missing:
        w("")
        for b in missing:
            w(f"No `schemas/jit-{b}.txt` is committed yet: on the {b} build an overload missing from "
              f"{b}'s `native_functions.yaml` reads *not in {b}'s native_functions.yaml*, and TorchScript may "
              f"still define it itself (`aten::dim` is TorchScript's own on 1.13). Write the list with "
              f"`{PYTHON} {SCRIPT} extract-jit --release {b}` where that release's torch is installed, then "
              "regenerate this page.")
    w("")
    w("Backward and `_foreach_` operators, out= overloads, in-place operators and changes of `int` into "
      "`SymInt` are only counted (last section). Rows are sorted by operator name, leading "
      "underscores ignored.")
    w("")

    w("## Figures")
    w("")
    sizes = ", ".join(f"{release_of(r).full}: {len(lists[r])}" for r in RELEASE_KEYS)
    w(f"Overloads in `native_functions.yaml`: {sizes}"
      + ". Rows by kind and by the release they come from; a row may have several kinds. *Tables*: "
      "the tables below; *counted*: the last section.")
    w("")
    w("| kind | " + " | ".join(f"{r}: tables | {r}: counted" for r in later) + " |")
    w("|---|" + "---:|---:|" * len(later))
    for kind in KIND_MEANINGS:
        counts = []
        for r in later:
            counts.append(sum(1 for e in main if e.release == r and kind in e.kinds))
            counts.append(sum(1 for e in rest if e.release == r and kind in e.kinds))
        if any(counts):
            w(f"| {kind} | " + " | ".join(str(c) for c in counts) + " |")
    totals = []
    for r in later:
        totals.append(sum(1 for e in main if e.release == r))
        totals.append(sum(1 for e in rest if e.release == r))
    w("| **rows** | " + " | ".join(f"**{c}**" for c in totals) + " |")
    w("")
    w("What each kind means for a file:")
    w("")
    for kind, meaning in KIND_MEANINGS.items():
        w(f"- *{kind}*: {meaning}")
    w("")

    changed_defaults = [e for e in main + rest if DEFAULT_CHANGED in e.kinds]
    added_defaults = [e for e in main + rest if DEFAULT_ADDED in e.kinds]
    w("## Changed defaults")
    w("")
    w("A file that leaves such an argument out gets the default of the libtorch that runs it, not the "
      "one of the PyTorch that wrote it: it loads, and may compute something else (issue 46, item 5).")
    w("")
    if changed_defaults:
        w(f"| overload | release | change | {builds_header} |")
        w(f"|---|---|---|{builds_rule}")
        for e in sorted(changed_defaults, key=sort_key):
            detail = "; ".join(d for k, d in e.changes if k == DEFAULT_CHANGED)
            w(f"| {code(e.key)} | {e.release} | {cell(detail)} | {builds(e, e.new)} |")
    else:
        w("None: no argument that two of these releases declare has a different default in the later one. "
          f"{len(added_defaults)} rows give a default to an argument that had none (*default added*, in "
          "*Changed schemas*): new files may leave it out, which the older libtorch refuses at load "
          "rather than reading differently.")
    w("")

    for title, kind, note in (
            ("New operators", NEW_OPERATOR,
             "No earlier release's `native_functions.yaml` has an operator of this name."),
            ("New overloads", NEW_OVERLOAD, "The operator existed; this overload did not.")):
        w(f"## {title}")
        w("")
        w(note)
        w("")
        selected = [e for e in main if kind in e.kinds]
        if not selected:
            w("None.")
            w("")
            continue
        w(f"| overload | release | {builds_header} | schema |")
        w(f"|---|---|{builds_rule}---|")
        for e in selected:
            w(f"| {code(e.key)} | {e.release} | {builds(e, e.new)} | {code(schema_tail(e.new))} |")
        w("")

    w("## Changed schemas")
    w("")
    w("The overload is in the earlier release with another schema; *changes* are against that "
      "release's schema, and the build columns are for the row's release's schema.")
    w("")
    w(f"| overload | release | kinds | changes | {builds_header} |")
    w(f"|---|---|---|---|{builds_rule}")
    for e in main:
        if e.old is not None and e.new is not None:
            w(f"| {code(e.key)} | {e.release} | {', '.join(e.kinds)} | "
              f"{cell('; '.join(d for _, d in e.changes))} | {builds(e, e.new)} |")
    w("")

    w("## Removed overloads")
    w("")
    w("Gone from the row's release: a file of an earlier release that calls one does not load on it. The "
      "build columns are for the last schema.")
    w("")
    selected = [e for e in main if REMOVED in e.kinds]
    if selected:
        w(f"| overload | removed in | {builds_header} | last schema |")
        w(f"|---|---|{builds_rule}---|")
        for e in selected:
            w(f"| {code(e.key)} | {e.release} | {builds(e, e.old)} | {code(schema_tail(e.old))} |")
    else:
        w("None.")
    w("")

    w("## Counted only")
    w("")
    w("Backward operators, `_foreach_` operators and out= overloads are not what a model's forward "
      "code calls; a change of `int` into `SymInt` is the same schema to TorchScript. In-place "
      "operators do occur in TorchScript files (`aten::relu_`, `aten::add_` in traced graphs), so "
      "their rows are named below the counts. A row is counted in the first group that fits, in this "
      "order.")
    w("")
    w("| group | kind | " + " | ".join(later) + " |")
    w("|---|---|" + "---:|" * len(later))
    for group in GROUPS:
        members = [e for e in rest if group_of(e) == group]
        for kind in KIND_MEANINGS:
            counts = [sum(1 for e in members if e.release == r and kind in e.kinds) for r in later]
            if any(counts):
                w(f"| {group} | {kind} | " + " | ".join(str(c) for c in counts) + " |")
    w("")
    inplace = [e for e in rest if group_of(e) == GROUP_INPLACE]
    if inplace:
        w("In-place rows: " + "; ".join(f"{code(e.key)} ({e.release}, {', '.join(e.kinds)})" for e in inplace) + ".")
        w("")
    return "\n".join(lines).rstrip("\n") + "\n"


# ----------------------------------------------------------------------------------------------
# Modes


def major_minor(version):
    m = re.match(r"(\d+)\.(\d+)", version or "")
    return f"{m.group(1)}.{m.group(2)}" if m else None


def version_in_site(site):
    """torch.__version__ from SITE/torch/version.py, without importing torch; None without one."""
    try:
        with open(os.path.join(site, "torch", "version.py")) as f:
            m = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", f.read(), re.M)
    except OSError:
        return None
    return m.group(1) if m else None


def site_of(yaml_path):
    site = os.path.abspath(yaml_path)
    for _ in YAML_IN_SITE.split("/"):
        site = os.path.dirname(site)
    return site


def extract(release, yaml_path):
    found = major_minor(version_in_site(site_of(yaml_path)))
    if found is not None and found != release:
        print(f"{yaml_path} is torch {found}'s, not {release}'s", file=sys.stderr)
        return 1
    with open(yaml_path) as f:
        schemas = schemas_of_yaml(f.read())
    os.makedirs(SCHEMA_DIR, exist_ok=True)
    with open(schema_file(release), "w") as f:
        f.write(list_text(release, schemas))
    print(f"wrote {relative(schema_file(release))} ({len(schemas)} schemas)")
    return 0


def extract_jit(release):
    import torch
    if major_minor(torch.__version__) != release:
        print(f"this Python's torch is {torch.__version__}, not {release}", file=sys.stderr)
        return 1
    schemas = jit_schemas(torch, read_lines(schema_file(release)))
    with open(jit_file(release), "w") as f:
        f.write(jit_text(release, schemas))
    print(f"wrote {relative(jit_file(release))} ({len(schemas)} schemas, torch {torch.__version__})")
    return 0


def operator_name(schema):
    """"aten::name" of "aten::name.overload(...) -> ..."."""
    head = schema.split("(", 1)[0]
    return head.split(".", 1)[0]


def generate_release_table(lists):
    """operator_releases.inc: {"aten::name", "RELEASE", "EARLIER"} for each operator name that a release
    after 1.13 declares first (EARLIER: the release compared before it, which does not declare it)."""
    seen = set(operator_name(s) for s in lists[RELEASE_KEYS[0]])
    rows = []
    for earlier, release in zip(RELEASE_KEYS, RELEASE_KEYS[1:]):
        names = sorted(set(operator_name(s) for s in lists[release]) - seen)
        rows += [f'{{"{name}", "{release}", "{earlier}"}},' for name in names]
        seen.update(names)
    return (f"// Generated by `{PYTHON} {SCRIPT} docs` from tests/newer_torch/schemas/; do not edit. The ctest\n"
            f"// test docs.newer_operators_fresh fails when it is stale. Each aten operator that PyTorch "
            f"{release_of(RELEASE_KEYS[0]).full} does\n// not declare, with the first compared release "
            f"({', '.join(release_of(k).full for k in RELEASE_KEYS[1:])}) that does and the one before it.\n"
            + "".join(row + "\n" for row in rows))


def write_docs():
    text = generate_doc(read_lists(), read_jit_lists(), registered_schemas())
    with open(DOC, "w") as f:
        f.write(text)
    print(f"wrote {relative(DOC)} ({text.count(chr(10))} lines)")
    table = generate_release_table(read_lists())
    with open(RELEASE_TABLE, "w") as f:
        f.write(table)
    print(f"wrote {relative(RELEASE_TABLE)} ({table.count(chr(10)) - 3} operators)")
    return 0


def read_or_none(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def check():
    failures = []
    fresh = generate_doc(read_lists(), read_jit_lists(), registered_schemas())
    if read_or_none(DOC) == fresh:
        print(f"{relative(DOC)} is up to date ({fresh.count(chr(10))} lines from schemas/ and newer_operators.cpp)")
    else:
        failures.append(f"FAIL: {relative(DOC)} is stale; regenerate it with `{PYTHON} {SCRIPT} docs`")
    if read_or_none(RELEASE_TABLE) == generate_release_table(read_lists()):
        print(f"{relative(RELEASE_TABLE)} is up to date")
    else:
        failures.append(f"FAIL: {relative(RELEASE_TABLE)} is stale; regenerate it with `{PYTHON} {SCRIPT} docs`")

    version = version_in_site(SITE)
    release = major_minor(version)
    if not os.path.exists(INSTALLED_YAML) or release is None:
        print(f"no torch with {INSTALLED_YAML} installed: no list compared")
    elif release not in RELEASE_KEYS:
        print(f"the installed torch {version} is none of {', '.join(RELEASE_KEYS)}: no list compared")
    else:
        with open(INSTALLED_YAML) as f:
            yaml_schemas = schemas_of_yaml(f.read())
        listed = relative(schema_file(release))
        if read_or_none(schema_file(release)) == list_text(release, yaml_schemas):
            print(f"{listed} equals the installed torch {version}'s {INSTALLED_YAML} ({len(yaml_schemas)} schemas)")
        else:
            failures.append(f"FAIL: {listed} differs from the installed torch {version}'s {INSTALLED_YAML}; "
                            f"rewrite it with `{PYTHON} {SCRIPT} extract --release {release} {INSTALLED_YAML}`")
        if os.path.exists(jit_file(release)):
            listed = relative(jit_file(release))
            try:
                import torch
            except Exception as e:  # an unimportable torch is not this test's failure
                print(f"{listed} not compared: importing torch failed ({type(e).__name__}: {e})")
            else:
                expected = jit_text(release, jit_schemas(torch, yaml_schemas))
                if read_or_none(jit_file(release)) == expected:
                    print(f"{listed} equals what the installed torch {version}'s TorchScript knows "
                          f"beyond its yaml ({expected.count(chr(10)) - 1} schemas)")
                else:
                    failures.append(f"FAIL: {listed} differs from the installed torch {version}'s TorchScript "
                                    f"operators; rewrite it with `{PYTHON} {SCRIPT} extract-jit --release {release}`")
        elif release in BUILDS:
            print(f"no {relative(jit_file(release))} to compare (write it with "
                  f"`{PYTHON} {SCRIPT} extract-jit --release {release}`)")
    for line in failures:
        print(line)
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    p = modes.add_parser("extract", help="write schemas/torch-RELEASE.txt from a native_functions.yaml")
    p.add_argument("--release", required=True, choices=RELEASE_KEYS)
    p.add_argument("yaml")
    p = modes.add_parser("extract-jit", help="write schemas/jit-RELEASE.txt with this Python's torch")
    p.add_argument("--release", required=True, choices=BUILDS)
    modes.add_parser("docs", help="write docs/newer-operators.md and core/3_export/1_load/operator_releases.inc")
    modes.add_parser("check", help="fail when the page or the installed release's lists are stale")
    options = parser.parse_args()
    if options.mode == "extract":
        return extract(options.release, options.yaml)
    if options.mode == "extract-jit":
        return extract_jit(options.release)
    if options.mode == "docs":
        return write_docs()
    return check()


if __name__ == "__main__":
    sys.exit(main())
