"""Stand-in for expecttest (not packaged by Debian), which torch.testing._internal.common_utils
imports. PyTorch's ONNX Runtime tests use none of its expect-file checks."""
import unittest

ACCEPT = False


class TestCase(unittest.TestCase):
    pass
