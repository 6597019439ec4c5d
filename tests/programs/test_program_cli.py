#!/usr/bin/python3
"""What a TorchScript export offers works on a program: names given on the command line replace the
program's, --extra-outputs takes the program's node names and module paths, external data, another
opset, the report and --verbose's description of the symbolic dims. And programs onnxport cannot
export fail in one line — what, the file, what to do — with
exit 1 and no output file: a higher-order operator (torch.cond), a schema version it does not know,
an operator libtorch does not define, a compressed or truncated archive, a missing tensor file, the
wrong number of inputs. The damaged archives are edits of two_outputs.pt2 (PyTorch 2.6's layout).

Usage: test_program_cli.py [unittest options] FIXTURE_DIR  (tests/programs/make_programs.py's)
Environment (set by ctest): ONNXPORT (the CLI), ONNXPORT_TEST_TMP (scratch directory).
"""
import json
import os
import shutil
import subprocess
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


def relu_renamed(target):
    """A change for `edited`: the program's relu node calls `target` instead."""
    def change(program):
        for node in program["graph_module"]["graph"]["nodes"]:
            if node["target"] == "torch.ops.aten.relu.default":
                node["target"] = target
        return program
    return change


def onnx_io(onnx_file):
    """(input names, output names, the first input's first dim_param) of an ONNX file, read with
    /usr/bin/python3's onnx."""
    code = ("import onnx, sys, json; g = onnx.load(sys.argv[1], load_external_data=False).graph; "
            "print(json.dumps([[i.name for i in g.input], [o.name for o in g.output], "
            "g.input[0].type.tensor_type.shape.dim[0].dim_param]))")
    r = subprocess.run(["/usr/bin/python3", "-c", code, onnx_file], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


class ProgramOptions(unittest.TestCase):
    def test_names_given_replace_the_programs(self):
        out = path("named.onnx")
        run("export", os.path.join(FIXTURES, "two_outputs.pt2"), "-o", out, "--input-names", "a,b",
            "--output-names", "p,q")
        self.assertEqual(onnx_io(out)[:2], [["a", "b"], ["p", "q"]])

    def test_extra_outputs_by_node_name_and_module_path(self):
        out = path("extra.onnx")
        run("export", os.path.join(FIXTURES, "conv_block_dynamic_batch.pt2"), "-o", out,
            "--extra-outputs", "conv2d", "--extra-outputs", "bn")
        inputs, outputs, batch = onnx_io(out)
        self.assertEqual(outputs, ["softmax", "conv2d", "bn"])
        self.assertEqual((inputs, batch), (["x"], "s0"))

    def test_a_torchscript_file_named_pt2_is_read_as_torchscript(self):
        named = path("traced_named.pt2")
        shutil.copy(os.path.join(FIXTURES, "two_outputs.traced.pt"), named)
        r = run("export", named, "-o", path("traced_named.onnx"), "--input", "x:2x4", "--input", "y:2x3")
        self.assertIn("trace mode", r.stdout)

    def test_external_data_opset_report_and_verbose(self):
        out, report = path("external.onnx"), path("external.json")
        r = run("export", os.path.join(FIXTURES, "resnet18_dynamic_batch.pt2"), "-o", out, "--external-data",
                "--opset", "11", "--report", report, "--verbose")
        self.assertTrue(os.path.getsize(out + ".data") > 40 * 2**20, "the weights are not in the .data file")
        self.assertLess(os.path.getsize(out), 2**20)
        self.assertIn("mode: torch.export program, schema 8.", r.stdout)
        self.assertIn("symbolic dims s0 in 1..512", r.stdout)
        with open(report) as f:
            written = json.load(f)
        self.assertEqual(written["mode"], "program")
        self.assertEqual(written["graph"]["opset"], 11)


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
        self.refused(edited("map.pt2", relu_renamed("torch.ops.higher_order.map_impl")),  # torch.map's operator
                     "higher-order operator map_impl")

    def test_unknown_schema_version(self):
        def version_9(program):
            program["schema_version"] = {"major": 9, "minor": 1}
            return program
        self.refused(edited("version9.pt2", version_9), "schema version 9.1", "schema version 8.x")

    def test_operator_libtorch_lacks(self):
        self.refused(edited("future_op.pt2", relu_renamed("torch.ops.aten.relu_from_the_future.default")), "aten::relu_from_the_future", "does not define",
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
