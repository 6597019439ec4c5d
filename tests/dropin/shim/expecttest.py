"""Stand-in for expecttest (not packaged by Debian), which torch.testing._internal.common_utils
imports. The inline checks compare only (no EXPECTTEST_ACCEPT rewriting of the test file):
assertExpectedInline passes when `actual` is `expect`, or `expect` followed by a C++ stack trace
("\\nException raised from ..."), as expecttest's does; test_utility_funs.py's
test_bad_symbolic_registration uses assertExpectedRaisesInline."""
import unittest

ACCEPT = False


class TestCase(unittest.TestCase):
    longMessage = True

    def assertExpectedInline(self, actual, expect, skip=0):
        self.assertIsInstance(actual, str)
        head, tail = actual[:len(expect)], actual[len(expect):]
        self.assertMultiLineEqual(expect, head if tail.startswith("\nException raised from") else actual)

    def assertExpectedRaisesInline(self, exc_type, callable, expect, *args, **kwargs):
        try:
            callable(*args, **kwargs)
        except exc_type as e:
            self.assertExpectedInline(str(e), expect, skip=1)
            return
        self.fail(msg="Did not raise when expected to")
