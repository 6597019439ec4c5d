#!/usr/bin/python3
"""The CLI allocates with jemalloc in every library of its process (docs/architecture.md
"Memory"): the dynamic loader's own record of symbol bindings shows every malloc-family symbol,
in libtorch, libstdc++, libc and the rest, bound to libjemalloc, none to glibc's malloc, while
`onnxport ops` has every op pack loaded. Registered only when the build links jemalloc.

Environment (set by ctest): ONNXPORT (the CLI).
"""
import os
import re
import subprocess
import unittest

CLI = os.environ["ONNXPORT"]
ALLOCATION_FUNCTIONS = {"malloc", "free", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign"}
# glibc's loader writes one line per symbol binding when LD_DEBUG=bindings:
#   binding file /lib/libfoo.so [0] to /lib/libbar.so [0]: normal symbol `malloc' [GLIBC_2.2.5]
BINDING = re.compile(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: \w+ symbol `([^']+)'")


def is_jemalloc(provider):
    return os.path.basename(provider).startswith("libjemalloc.so")


def allocation_bindings():
    """(binder, provider, symbol) for every malloc-family binding while `onnxport ops` runs."""
    run = subprocess.run([CLI, "ops"], capture_output=True, text=True, env=dict(os.environ, LD_DEBUG="bindings"))
    if run.returncode != 0:
        raise AssertionError(f"onnxport ops failed:\n{run.stderr[-2000:]}")
    bindings = [m.groups() for m in BINDING.finditer(run.stderr)]
    if not bindings:
        raise AssertionError("LD_DEBUG=bindings printed no bindings: cannot check the allocator")
    return bindings


class AllocatorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bindings = allocation_bindings()
        cls.allocation = [b for b in cls.bindings if b[2] in ALLOCATION_FUNCTIONS]

    def test_op_packs_were_loaded(self):
        packs = {os.path.basename(binder) for binder, _, _ in self.bindings if "/onnxport/packs/" in binder}
        self.assertGreaterEqual(len(packs), 5, f"op packs seen binding symbols: {sorted(packs)}")

    def test_every_allocation_function_resolves_to_jemalloc(self):
        elsewhere = sorted({(os.path.basename(binder), os.path.basename(provider), symbol)
                            for binder, provider, symbol in self.allocation
                            if not is_jemalloc(provider)})
        self.assertEqual(elsewhere, [], "malloc-family symbols bound outside jemalloc")

    def test_the_libraries_that_allocate_most_use_jemalloc(self):
        binders = {os.path.basename(binder).split(".so")[0]
                   for binder, provider, symbol in self.allocation
                   if symbol in ("malloc", "free") and is_jemalloc(provider)}
        for library in ("libtorch_cpu", "libc10", "libstdc++", "libc"):
            self.assertIn(library, binders, f"{library} has no malloc/free binding to jemalloc")


if __name__ == "__main__":
    unittest.main()
