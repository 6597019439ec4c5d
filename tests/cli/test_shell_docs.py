#!/usr/bin/python3
"""The bash completion script and the man page are generated from the CLI's definition: every
sub-command and every flag `--help` shows is in them, completion offers what a user expects at
each point, and the man page renders without warnings.

Environment (set by ctest): ONNXPORT (the CLI), ONNXPORT_COMPLETION and ONNXPORT_MAN_PAGE (the
files the build generated), ONNXPORT_TEST_TMP (scratch directory).
"""
import os
import re
import shutil
import subprocess
import unittest

CLI = os.environ["ONNXPORT"]
COMPLETION = os.environ["ONNXPORT_COMPLETION"]
MAN_PAGE = os.environ["ONNXPORT_MAN_PAGE"]
TMP = os.environ["ONNXPORT_TEST_TMP"]
COMMANDS = ["export", "ops", "plugins", "inspect", "check", "options", "run", "verify", "completion", "man"]


def flags_in_help(command):
    out = subprocess.run([CLI, command, "--help"], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", out))


def complete(*words):
    """What the script completes for `onnxport WORDS...` (the last word being typed)."""
    script = (f"source {COMPLETION}\nCOMP_WORDS=(onnxport {' '.join(repr(w) if w else repr('') for w in words)})\n"
              f"COMP_CWORD={len(words)}\n_onnxport\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n")
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=TMP)
    if r.returncode != 0:
        raise AssertionError(r.stderr)
    return [line for line in r.stdout.splitlines() if line]


class ShellDocsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        shutil.rmtree(TMP, ignore_errors=True)
        os.makedirs(TMP)
        for name in ("model.pt", "model.onnx", "notes.txt"):
            open(os.path.join(TMP, name), "w").close()
        os.makedirs(os.path.join(TMP, "packs"))

    def test_the_build_installs_what_the_cli_prints(self):
        for command, path in ((["completion", "bash"], COMPLETION), (["man"], MAN_PAGE)):
            printed = subprocess.run([CLI, *command], capture_output=True, text=True, check=True).stdout
            with open(path) as fh:
                self.assertEqual(fh.read(), printed, path)

    def test_every_command_and_flag_is_completed(self):
        self.assertEqual(set(complete("")), set(COMMANDS) | {"--help", "--version"})
        for command in COMMANDS:
            with self.subTest(command=command):
                self.assertEqual(set(complete(command, "--")), flags_in_help(command))

    def test_completion_at_each_point(self):
        self.assertEqual(complete("ex"), ["export"])
        self.assertEqual(complete("export", "--opt"), ["--optimize"])
        self.assertEqual(complete("export", "--extra"), ["--extra-outputs"])
        self.assertEqual(complete("export", "--mode", ""), ["trace", "script", "auto"])
        self.assertEqual(complete("export", "--training", "p"), ["preserve"])
        self.assertEqual(sorted(complete("export", "mo")), ["model.onnx", "model.pt"])
        self.assertEqual(complete("export", "--plugin-dir", "p"), ["packs"])
        self.assertEqual(complete("export", "--opset", ""), [])  # a number: nothing to offer
        self.assertEqual(complete("run", "--in"), ["--input"])
        self.assertEqual(complete("completion", "--he"), ["--help"])

    def test_man_page_lists_every_flag_and_renders_cleanly(self):
        with open(MAN_PAGE) as fh:
            page = fh.read()
        self.assertTrue(page.startswith(".TH ONNXPORT 1"))
        for command in COMMANDS:
            self.assertIn(f'.SS "onnxport {command}"', page)
            for flag in flags_in_help(command):
                self.assertIn(flag.replace("-", "\\-"), page, f"{command} {flag}")
        r = subprocess.run(["man", "--warnings", "-E", "UTF-8", "-l", MAN_PAGE], capture_output=True, text=True,
                           env={**os.environ, "MANWIDTH": "100"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "", "man reports problems in the page")
        rendered = re.sub(".\x08", "", r.stdout).replace("\u2010", "-")  # bold/underline overstrikes
        self.assertIn("--extra-outputs SPEC", rendered)
        self.assertIn("onnxport - export TorchScript models to ONNX", rendered)

    def test_version_and_exit_codes(self):
        r = subprocess.run([CLI, "--version"], capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertRegex(r.stdout, r"^onnxport \d+\.\d+\.\d+\n$")
        usage_errors = ([], ["export"], ["export", "model.pt", "--no-such-flag"], ["run"], ["check", "a", "b"])
        for argv in usage_errors:
            with self.subTest(argv=argv):
                r = subprocess.run([CLI, *argv], capture_output=True, text=True, cwd=TMP)
                self.assertEqual(r.returncode, 2, r.stderr)
        # A command the user got right that fails on its input: 1, one line.
        r = subprocess.run([CLI, "inspect", "notes.txt"], capture_output=True, text=True, cwd=TMP)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        with open(MAN_PAGE) as fh:
            page = fh.read()
        status = page[page.index(".SH EXIT STATUS"):page.index(".SH SEE ALSO")]
        for code, gist in (("0", "did what was asked"), ("1", "is at fault"), ("2", "command line is wrong"),
                           ("3", "onnxport bug")):
            self.assertRegex(status, rf"\.TP\n{code}\n[^\n]*{gist}")


if __name__ == "__main__":
    unittest.main()
