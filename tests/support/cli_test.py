"""What the CLI test scripts share: the onnxport under test and their scratch directory, both
from ctest's environment (ONNXPORT, ONNXPORT_TEST_TMP), and running it."""
import os
import subprocess

CLI = os.environ["ONNXPORT"]
TMP = os.environ["ONNXPORT_TEST_TMP"]


def path(*names):
    """A path in the scratch directory."""
    return os.path.join(TMP, *names)


def run(*args, ok=True, cwd=None):
    """Runs `onnxport ARGS...` (in `cwd`); with ok=True a non-zero exit fails the test with its stderr."""
    r = subprocess.run([CLI, *args], capture_output=True, text=True, cwd=cwd)
    if ok and r.returncode != 0:
        raise AssertionError(f"onnxport {' '.join(args)} failed ({r.returncode}):\n{r.stderr}")
    return r
