#!/usr/bin/python3
"""torch.export programs onnxport cannot export fail in one line — what, the file, what to do — with
exit 1 and no output file: a higher-order operator (torch.cond), a schema version it does not know,
an operator libtorch does not define, a compressed or truncated archive, a missing tensor file, the
wrong number of inputs. The damaged archives are edits of two_outputs.pt2 (PyTorch 2.6's layout).

Usage: test_program_errors.py [unittest options] FIXTURE_DIR  (tests/programs/make_programs.py's)
Environment (set by ctest): ONNXPORT (the CLI), ONNXPORT_TEST_TMP (scratch directory).
"""
import json
import os
import sys
import unittest
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "support"))
from cli_test import path, run  # noqa: E402

FIXTURES = sys.argv.pop()
PROGRAM = "serialized_exported_program.json"


def edited(name, change, compression=zipfile.ZIP_STORED, drop=()):
    """two_outputs.pt2 with its program JSON passed through `change`, entries in `drop` left out."""
    target = path(name)
    with zipfile.ZipFile(os.path.join(FIXTURES, "two_outputs.pt2")) as source, \
            zipfile.ZipFile(target, "w", compression) as out:
        for item in source.infolist():
            if item.filename in drop:
                continue
            data = source.read(item.filename)
            if item.filename == PROGRAM:
                data = json.dumps(change(json.loads(data))).encode()
            out.writestr(item.filename, data)
    return target


def same(program):
    return program


class ProgramErrors(unittest.TestCase):
    def refused(self, model, *words, args=()):
        out = path(os.path.basename(model) + ".onnx")
        if os.path.exists(out):
            os.remove(out)
        r = run("export", model, "-o", out, *args, ok=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        for word in words:
            self.assertIn(word, r.stderr)
        self.assertIn(model, r.stderr)
        self.assertFalse(os.path.exists(out), "a failed export left its output file")
        return r.stderr

    def test_exports_when_intact(self):
        # the edits below start from a file that exports
        out = path("intact.onnx")
        run("export", edited("intact.pt2", same), "-o", out)
        self.assertTrue(os.path.getsize(out) > 0)

    def test_higher_order_operator(self):
        self.refused(os.path.join(FIXTURES, "refused", "cond.pt2"), "higher-order operator cond")

    def test_unknown_schema_version(self):
        def version_9(program):
            program["schema_version"] = {"major": 9, "minor": 1}
            return program
        self.refused(edited("version9.pt2", version_9), "schema version 9.1", "schema version 8.x")

    def test_operator_libtorch_lacks(self):
        def renamed(program):
            for node in program["graph_module"]["graph"]["nodes"]:
                if node["target"] == "torch.ops.aten.relu.default":
                    node["target"] = "torch.ops.aten.relu_from_the_future.default"
            return program
        self.refused(edited("future_op.pt2", renamed), "aten::relu_from_the_future", "does not define",
                     "--load-op-library")

    def test_compressed_entry(self):
        self.refused(edited("deflated.pt2", same, zipfile.ZIP_DEFLATED), "is compressed")

    def test_truncated_archive(self):
        with open(os.path.join(FIXTURES, "two_outputs.pt2"), "rb") as f:
            data = f.read()
        truncated = path("truncated.pt2")
        with open(truncated, "wb") as f:
            f.write(data[: len(data) // 2])
        self.refused(truncated, "not a readable zip archive")

    def test_missing_weights(self):
        self.refused(edited("no_weights.pt2", same, drop=("serialized_state_dict.pt",)),
                     "no entry 'serialized_state_dict.pt'")

    def test_wrong_number_of_inputs(self):
        self.refused(os.path.join(FIXTURES, "two_outputs.pt2"), "the program takes 2 inputs; 1 example inputs were given",
                     args=("--input", "x:2x4"))


if __name__ == "__main__":
    if not os.path.exists(os.path.join(FIXTURES, "two_outputs.pt2")):
        print(f"SKIP: no programs in {FIXTURES}: programs.fixtures writes them where the Debian 13 root exists")
        sys.exit(77)
    os.makedirs(path(), exist_ok=True)
    unittest.main()
