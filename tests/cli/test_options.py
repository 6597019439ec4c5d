#!/usr/bin/python3
"""Table-driven tests of the export options: every option of the core's table (listed by the
hidden `onnxport options --json`) can be set from a config file and from its flag, a flag wins
over the config file (--plugin-dir and --custom-opset add to it), and bad keys, types and values
fail with one line naming the file and key or the flag. The options an export would use are read
with `onnxport export ... --print-config`, which exports nothing.

Environment (set by ctest): ONNXPORT (the CLI), ONNXPORT_TEST_TMP (scratch directory).
"""
import json
import os
import shutil
import subprocess
import sys
import unittest
from dataclasses import dataclass, field

import onnx.defs

CLI = os.environ["ONNXPORT"]
TMP = os.environ["ONNXPORT_TEST_TMP"]
HERE = os.path.dirname(os.path.abspath(__file__))
README_CHECK = os.path.join(HERE, "readme_options.py")
README = os.path.join(HERE, "..", "..", "README.md")


# Opset 18 on a build whose ONNX stops at 17 (ONNX 1.12, Debian 12) is refused, naming the ONNX
# release it needs. This machine's Python has the ONNX the build links.
OPSET_PAST_THIS_ONNX = [] if onnx.defs.onnx_opset_version() >= 18 else [
    (["--opset", "18"], None, ["opset_version 18 needs the operator schemas of ONNX 1.13 or later",
                               "schemas end at opset 17", "export at opset 17 or below"])]


@dataclass
class Sample:
    """One option: its flag, a config value, flag arguments, and what --print-config must show."""
    flag: str
    default: object
    config: object            # the value a config file gives
    args: list                # the flag's arguments (the flag repeated for a repeatable option)
    from_config: object       # the option after the config alone
    from_flags: object        # after the flags alone
    both: object = None       # after both (default: the flags' value: a flag wins)
    config_against: object = None  # the config value for the "both" case (default: `config`)

    def __post_init__(self):
        if self.both is None:
            self.both = self.from_flags
        if self.config_against is None:
            self.config_against = self.config


def switch(flag, default):
    """A flag that sets a boolean to `not default`; against a config saying `default` it still wins."""
    return Sample(flag, default, not default, [flag], not default, not default, config_against=default)


# The expected behaviour of every option, written independently of the table.
SAMPLES = {
    "inputs": Sample("--input", [], ["x:2x3:float32", "v=v.npy"], ["--input", "a=a.npy", "--input", "b:scalar:int64"],
                     ["x:2x3:float32", "v=v.npy"], ["a=a.npy", "b:scalar:int64"]),
    "method": Sample("--method", "forward", "encode", ["--method", "infer"], "encode", "infer"),
    "submodule": Sample("--submodule", "", "_model", ["--submodule", "encoder.layers.0"], "_model",
                        "encoder.layers.0"),
    "dynamic_numbers": switch("--dynamic-numbers", False),
    "state_io": switch("--state-io", False),
    "opset_version": Sample("--opset", 17, 11, ["--opset", "13"], 11, 13),
    # The same names as the "inputs" sample gives: naming an input two ways differently is refused.
    "input_names": Sample("--input-names", [], ["x", "v"], ["--input-names", "a,b"], ["x", "v"], ["a", "b"]),
    "output_names": Sample("--output-names", [], ["y"], ["--output-names", "z,w"], ["y"], ["z", "w"]),
    # A list names its axes by position, as torch.onnx does; an unnamed flag axis after the axis.
    "dynamic_axes": Sample("--dynamic-axes", {}, {"x": [2, 0], "y": {"1": "n"}},
                           ["--dynamic-axes", "x:1=seq,2", "--dynamic-axes", "z:0=batch"],
                           {"x": {"2": "x_dynamic_axes_1", "0": "x_dynamic_axes_2"}, "y": {"1": "n"}},
                           {"x": {"1": "seq", "2": "x_dynamic_axes_3"}, "z": {"0": "batch"}}),
    "extra_outputs": Sample("--extra-outputs", [], ["layer1.0", "%h.1"],
                            ["--extra-outputs", "blocks", "--extra-outputs", "/Add_output_0"],
                            ["layer1.0", "%h.1"], ["blocks", "/Add_output_0"]),
    "plugin_dirs": Sample("--plugin-dir", [], ["/c1", "/c2"], ["--plugin-dir", "/f1", "--plugin-dir", "/f2"],
                          ["/c1", "/c2"], ["/f1", "/f2"], both=["/c1", "/c2", "/f1", "/f2"]),
    "custom_opsets": Sample("--custom-opset", {}, {"com.a": 2, "com.b": 3},
                            ["--custom-opset", "com.b=5", "--custom-opset", "com.c=1"], {"com.a": 2, "com.b": 3},
                            {"com.b": 5, "com.c": 1}, both={"com.a": 2, "com.b": 5, "com.c": 1}),
    "do_constant_folding": switch("--no-constant-folding", True),
    "optimize": Sample("--optimize", 1, 0, ["--optimize", "0"], 0, 0, config_against=1),
    "export_params": switch("--no-export-params", True),
    "keep_initializers_as_inputs": switch("--keep-initializers-as-inputs", False),
    "training": Sample("--training", "eval", "train", ["--training", "preserve"], "train", "preserve"),
    "mode": Sample("--mode", "trace", "script", ["--mode", "auto"], "script", "auto"),
    "default_dtype": Sample("--default-dtype", "float32", "float64", ["--default-dtype", "float32"], "float64",
                            "float32"),
    "check_dynamic_axes": switch("--no-dynamic-check", True),
    "drop_unused_inputs": switch("--drop-unused-inputs", False),
    "warn_unproven_dynamic_axes": switch("--warn-unproven-dynamic-axes", False),
    "ignore_unknown_dynamic_axes": switch("--ignore-unknown-dynamic-axes", False),
    "operator_export_type": Sample("--operator-export-type", "onnx", "onnx_aten",
                                   ["--operator-export-type", "onnx_fallthrough"], "onnx_aten", "onnx_fallthrough"),
    "verbose": switch("--verbose", False),
    "provenance": switch("--provenance", False),
    "check": switch("--no-check", True),
    "strict": switch("--no-strict", True),
    "seed": Sample("--seed", 0, 7, ["--seed", "42"], 7, 42),
    "threads": Sample("--threads", 1, 0, ["--threads", "2"], 0, 2),
    # --external-data [FILE]: alone it means MODEL.onnx.data (printed back as true).
    "external_data": Sample("--external-data", False, "w.bin", ["--external-data"], "w.bin", True),
}

# A value of the wrong JSON type for a key whose sample config value has this type.
WRONG_TYPE = {bool: "true", int: "13", str: 7, list: "x", dict: ["x"]}


def run(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True)


def write_config(name, content):
    """A config file holding `content`: JSON of a Python value, or a string as it is."""
    file = os.path.join(TMP, name)
    with open(file, "w") as f:
        f.write(content if isinstance(content, str) else json.dumps(content))
    return file


class OptionsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        shutil.rmtree(TMP, ignore_errors=True)
        os.makedirs(TMP)
        r = run("options", "--json")
        assert r.returncode == 0, r.stderr
        cls.all_options = json.loads(r.stdout)
        cls.table = {o["key"]: o for o in cls.all_options if o["key"]}

    def effective(self, *args, config=None):
        """The options `onnxport export` would use with these flags and config file."""
        command = ["export", "model.pt", "-o", os.path.join(TMP, "out.onnx"), *args, "--print-config"]
        if config is not None:
            command += ["--config", write_config("options.json", config)]
        r = run(*command)
        self.assertEqual(r.returncode, 0, f"onnxport {' '.join(command)}:\n{r.stderr}")
        return json.loads(r.stdout)

    def assertFailsInOneLine(self, r, *fragments):
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        for fragment in fragments:
            self.assertIn(fragment, r.stderr)

    def assertOnlyChanged(self, options, key, expected):
        self.assertEqual(options[key], expected, key)
        others = {k: v for k, v in options.items() if k != key}
        self.assertEqual(others, {k: s.default for k, s in SAMPLES.items() if k != key}, f"setting {key}")

    # -- the table and this test agree ---------------------------------------------------------
    def test_every_table_option_has_a_sample_and_its_flag(self):
        self.assertEqual(sorted(self.table), sorted(SAMPLES), "options in the table vs. SAMPLES here")
        for key, sample in SAMPLES.items():
            self.assertEqual(self.table[key]["flag"], sample.flag, key)

    def test_defaults(self):
        self.assertEqual(self.effective(), {k: s.default for k, s in SAMPLES.items()})
        for key, sample in SAMPLES.items():
            self.assertEqual(self.table[key]["default"], sample.default, key)

    # -- every option from a config file, from its flag, and both -------------------------------
    def test_config_file_sets_each_option(self):
        for key, sample in SAMPLES.items():
            with self.subTest(key=key):
                self.assertOnlyChanged(self.effective(config={key: sample.config}), key, sample.from_config)

    def test_flag_sets_each_option(self):
        for key, sample in SAMPLES.items():
            with self.subTest(key=key):
                self.assertOnlyChanged(self.effective(*sample.args), key, sample.from_flags)

    def test_flag_wins_over_config_file(self):
        for key, sample in SAMPLES.items():
            with self.subTest(key=key):
                options = self.effective(*sample.args, config={key: sample.config_against})
                self.assertOnlyChanged(options, key, sample.both)

    def test_print_config_reads_back_to_the_same_options(self):
        everything = self.effective(config={k: s.config for k, s in SAMPLES.items()})
        self.assertEqual(everything, {k: s.from_config for k, s in SAMPLES.items()})
        self.assertEqual(self.effective(config=everything), everything)

    # -- errors ---------------------------------------------------------------------------------
    def test_unknown_key_names_file_and_key(self):
        cfg = write_config("unknown.json", {"opset_version": 13, "opset": 11})
        r = run("export", "model.pt", "-o", "out.onnx", "--config", cfg)
        self.assertFailsInOneLine(r, f"config file '{cfg}'", "unknown key 'opset'", "did you mean 'opset_version'")

    def test_wrong_type_for_each_key_names_file_and_key(self):
        for key, sample in SAMPLES.items():
            with self.subTest(key=key):
                cfg = write_config("wrong.json", {key: WRONG_TYPE[type(sample.config)]})
                r = run("export", "model.pt", "-o", "out.onnx", "--config", cfg)
                self.assertFailsInOneLine(r, f"config file '{cfg}': key '{key}' has the wrong type")

    def test_bad_values_name_the_flag_or_the_key(self):
        cases = [
            (["--opset", "thirteen"], None, ["--opset 'thirteen': expected a whole number"]),
            (["--opset", "5"], None, ["opset_version 5 is out of range"]),
            (["--opset", "23"], None, ["opset_version 23 is out of range", "onnxport exports opsets 7 to"]),
            *OPSET_PAST_THIS_ONNX,
            (["--seed", "-1"], None, ["--seed '-1'"]),
            (["--threads", "-1"], None, ["threads -1 is negative", "0 for libtorch's own setting"]),
            (["--custom-opset", "com.a=x"], None, ["--custom-opset 'com.a=x': bad version 'x'"]),
            (["--custom-opset", "com.a"], None, ["expected DOMAIN=VERSION"]),
            (["--dynamic-axes", "x:a=batch"], None, ["--dynamic-axes 'x:a=batch': bad axis 'a=batch'"]),
            (["--input", "x:2xA"], None, ["bad dimension 'A'"]),
            (["--mode", "fast"], None, ["mode must be trace, script or auto"]),
            (["--default-dtype", "float16"], None, ["default_dtype must be float32 or float64, got 'float16'"]),
            (["--extra-outputs", ""], None, ["--extra-outputs: an empty name"]),
            (["--extra-outputs", "a", "--extra-outputs", "a"], None, ["--extra-outputs 'a' is given twice"]),
            ([], {"extra_outputs": "layer1"}, ["key 'extra_outputs' has the wrong type"]),
            ([], {"training": "fast"}, ["key 'training': training must be eval, preserve or train"]),
            ([], {"inputs": ["x:2xA"]}, ["key 'inputs'", "bad dimension 'A'"]),
            ([], {"dynamic_axes": {"x": {"first": "batch"}}}, ["key 'dynamic_axes' has the wrong type"]),
            ([], {"seed": -1}, ["key 'seed' has the wrong type"]),
            ([], "[1, 2]", ["must hold a JSON object"]),
            ([], "{\"opset_version\": ", ["is not valid JSON"]),
        ]
        for args, config, fragments in cases:
            with self.subTest(args=args, config=config):
                command = ["export", "model.pt", "-o", "out.onnx", *args, "--print-config"]
                if config is not None:
                    command += ["--config", write_config("bad.json", config)]
                self.assertFailsInOneLine(run(*command), *fragments)

    def test_missing_config_file(self):
        r = run("export", "model.pt", "-o", "out.onnx", "--config", os.path.join(TMP, "nowhere.json"))
        self.assertFailsInOneLine(r, "cannot be opened", "nowhere.json")

    def test_load_op_library_is_loaded_before_exporting(self):
        r = run("export", "model.pt", "-o", "out.onnx", "--input", "x:1", "--load-op-library", "/nowhere/libops.so")
        self.assertFailsInOneLine(r, "cannot load op library '/nowhere/libops.so'")

    # -- help and README come from the table ----------------------------------------------------
    def test_help_shows_every_flag_with_its_config_key(self):
        r = run("export", "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        text = " ".join(r.stdout.split())
        for option in self.all_options:
            self.assertIn(option["flag"], text)
            self.assertIn(" ".join(option["help"].split()), text)
            if option["key"]:
                self.assertIn(f"config key: {option['key']}", text)

    def test_readme_check_fails_when_a_section_is_stale_or_missing(self):
        with open(README) as f:
            readme = f.read()
        stale = os.path.join(TMP, "README.stale.md")
        with open(stale, "w") as f:
            f.write(readme.replace("| `--opset N` |", "| `--opset-version N` |"))
        missing = os.path.join(TMP, "README.missing.md")
        with open(missing, "w") as f:
            f.write(readme.replace("<!-- END config-keys -->", ""))

        def check(file, *extra):
            return subprocess.run([sys.executable, README_CHECK, CLI, "--readme", file, *extra],
                                  capture_output=True, text=True)

        with open(stale) as f:
            self.assertIn("--opset-version", f.read(), "the README must list --opset for this test")
        r = check(stale)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("section 'export-options' is stale", r.stdout)
        r = check(missing)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("no section 'config-keys'", r.stdout)
        self.assertEqual(check(stale, "--write").returncode, 0)
        r = check(stale)
        self.assertEqual(r.returncode, 0, r.stdout)


if __name__ == "__main__":
    unittest.main()
