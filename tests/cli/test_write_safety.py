#!/usr/bin/python3
"""Crash-proof writes: an export killed (SIGKILL) at any moment leaves the output directory as it
was (no partial model, no stray temporary, an existing output untouched); exports racing to the
same output end with one complete model (and its matching external data file).

Environment: ONNXPORT (the CLI), ONNXPORT_TEST_TMP (a scratch directory).
"""
import os
import shutil
import signal
import subprocess
import time
import unittest

import torch

CLI = os.environ["ONNXPORT"]
TMP = os.path.join(os.environ["ONNXPORT_TEST_TMP"], "write_safety")


def export_command(model, out, *extra):
    return [CLI, "export", model, "-o", out, "--input", "x:2x2048:float32", *extra]


class WriteSafetyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        shutil.rmtree(TMP, ignore_errors=True)
        os.makedirs(TMP)
        # 6 x Linear(2048, 2048): 100 MB of parameters, so writing takes a noticeable share of
        # an export and the kills below land in every stage, writing included. Two models of
        # the same layout with different weights race in the concurrency test.
        cls.models = []
        for seed in (0, 1):
            torch.manual_seed(seed)
            layers = [torch.nn.Linear(2048, 2048) for _ in range(6)]
            model = torch.nn.Sequential(*[m for layer in layers for m in (layer, torch.nn.Tanh())]).eval()
            cls.models.append(os.path.join(TMP, f"stack{seed}.pt"))
            torch.jit.trace(model, torch.randn(2, 2048)).save(cls.models[-1])
        cls.model = cls.models[0]

    @classmethod
    def tearDownClass(cls):
        # The models are made again by every run; a failing test's output directory stays, for
        # inspection (a passing test removes its own: 100 MB models, 578 MB in all otherwise).
        for model in cls.models:
            os.remove(model)

    def output_dir(self, name):
        d = os.path.join(TMP, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d

    def check_complete(self, out):
        r = subprocess.run([CLI, "check", out], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_killed_export_leaves_the_directory_as_it_was(self):
        d = self.output_dir("killed")
        out = os.path.join(d, "model.onnx")
        start = time.monotonic()
        subprocess.run(export_command(self.model, out), check=True, capture_output=True)
        whole = time.monotonic() - start
        with open(out, "rb") as f:
            complete = f.read()
        with open(out, "wb") as f:
            f.write(b"the previous export")
        kills = 0
        for k in range(1, 16):  # kill moments spread over a whole export's duration
            p = subprocess.Popen(export_command(self.model, out), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            time.sleep(whole * k / 16)
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                kills += 1
            p.wait()
            self.assertEqual(sorted(os.listdir(d)), ["model.onnx"], f"kill at {k}/16 of {whole:.2f} s")
            with open(out, "rb") as f:
                content = f.read()
            # Killed before its file was put in place: the old file; after (or not killed): the
            # complete export. Never anything in between.
            self.assertIn(content, (b"the previous export", complete), f"kill at {k}/16")
            if content == complete:
                with open(out, "wb") as f:
                    f.write(b"the previous export")
        # Under load the exports' durations vary; a third of them killed mid-run is enough to
        # have landed in every stage, writing included.
        self.assertGreaterEqual(kills, 5, "too few exports were still running when killed")
        shutil.rmtree(d)

    def test_a_stale_temporary_of_a_killed_process_is_removed_by_the_next_export(self):
        d = self.output_dir("stale")
        out = os.path.join(d, "model.onnx")
        dead = subprocess.Popen(["true"])
        dead.wait()
        stale = os.path.join(d, f".model.onnx.onnxport-tmp-{dead.pid}")
        with open(stale, "wb") as f:
            f.write(b"partial")
        subprocess.run(export_command(self.model, out), check=True, capture_output=True)
        self.assertEqual(sorted(os.listdir(d)), ["model.onnx"])
        shutil.rmtree(d)

    def test_concurrent_exports_to_one_output_end_with_one_complete_model(self):
        def contents(d):
            out = {}
            for name in sorted(os.listdir(d)):
                with open(os.path.join(d, name), "rb") as f:
                    out[name] = f.read()
            return out

        for extra in ((), ("--external-data",)):
            with self.subTest(extra=extra):
                alone = []  # each model's files, exported on its own
                for k, model in enumerate(self.models):
                    d = self.output_dir(f"alone{k}")
                    subprocess.run(export_command(model, os.path.join(d, "model.onnx"), *extra), check=True,
                                   capture_output=True)
                    alone.append(contents(d))
                self.assertNotEqual(alone[0], alone[1])
                d = self.output_dir("concurrent")
                out = os.path.join(d, "model.onnx")
                for _ in range(3):
                    runs = [subprocess.Popen(export_command(model, out, *extra), stdout=subprocess.DEVNULL,
                                             stderr=subprocess.PIPE) for model in self.models]
                    for p in runs:
                        _, err = p.communicate()
                        self.assertEqual(p.returncode, 0, err)
                    # One export's files, whole: never a mix of the two, never a stray temporary.
                    self.assertIn(contents(d), alone)
                    self.check_complete(out)
                for name in ("alone0", "alone1", "concurrent"):
                    shutil.rmtree(os.path.join(TMP, name))


if __name__ == "__main__":
    unittest.main()
