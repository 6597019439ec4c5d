"""Stand-in for the onnxruntime Python package, which Debian does not ship: what
torch.onnx.verification and PyTorch's ONNX tests use (InferenceSession, SessionOptions,
set_seed), run by onnxruntime-node in one long-lived node process (../ort_server.js).

Environment: DROPIN_NODE (node executable, default "node"), DROPIN_WORK (where models given as
bytes are written for node to load, default the temp dir), DROPIN_ORT_THREADS (default 1).
"""
import base64
import json
import os
import subprocess
import tempfile

import numpy as np

_SERVER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ort_server.js")
_process = None
_released = []  # (process, session id) dropped by the garbage collector, released before the next load


class OrtError(RuntimeError):
    pass


def _request(**request):
    global _process
    if _process is None or _process.poll() is not None:
        _process = subprocess.Popen([os.environ.get("DROPIN_NODE", "node"), _SERVER],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    _process.stdin.write(json.dumps(request) + "\n")
    _process.stdin.flush()
    line = _process.stdout.readline()
    if not line:
        raise OrtError(f"onnxruntime-node exited with status {_process.wait()}")
    reply = json.loads(line)
    if "error" in reply:
        raise OrtError(reply["error"])
    return reply


def _encode(value):
    array = np.asarray(value)
    return {"dtype": array.dtype.name, "dims": list(array.shape), "data": base64.b64encode(array.tobytes()).decode()}


def _decode(tensor):
    data = np.frombuffer(base64.b64decode(tensor["data"]), dtype=np.dtype(tensor["dtype"]))
    return data.reshape(tensor["dims"]).copy()


def set_seed(seed):
    """onnxruntime-node has no seed to set; random ops are not compared by value."""


# The feed check of the onnxruntime Python package the running PyTorch's tests were written
# against: 1.13's tests expect the count check of its days ("Model requires N inputs. Input Feed
# contains M": test_all_optional_default_tensor_script), 2.x's the later one, which names the
# missing inputs and lets optional-typed ones be left out (test_mixed_optional_default_tensor_script).
_TORCH_MAJOR = int(__import__("torch").__version__.split(".")[0])


def _optional_inputs(path_or_bytes):
    import onnx
    model = (onnx.load(os.fspath(path_or_bytes), load_external_data=False)
             if isinstance(path_or_bytes, (str, os.PathLike)) else onnx.load_model_from_string(path_or_bytes))
    return {i.name for i in model.graph.input if i.type.HasField("optional_type")}


def _check_feed(inputs, optional, feed):
    if _TORCH_MAJOR < 2:
        if len(feed) < len(inputs):
            raise ValueError(f"Model requires {len(inputs)} inputs. Input Feed contains {len(feed)}")
        return
    missing = [i.name for i in inputs if i.name not in feed and i.name not in optional]
    if missing:
        raise ValueError(f"Required inputs ({missing}) are missing from input feed ({list(feed)}).")


class SessionOptions:
    log_severity_level = 2


class NodeArg:
    def __init__(self, name):
        self.name = name


class InferenceSession:
    def __init__(self, path_or_bytes, sess_options=None, providers=None, **_):
        while _released:
            process, session = _released.pop()
            if process is _process and process.poll() is None:  # a new process has new ids
                _request(op="release", session=session)
        threads = int(os.environ.get("DROPIN_ORT_THREADS", "1"))
        if isinstance(path_or_bytes, (str, os.PathLike)):
            reply = _request(op="load", path=os.fspath(path_or_bytes), threads=threads)
        else:
            with tempfile.NamedTemporaryFile(suffix=".onnx", dir=os.environ.get("DROPIN_WORK")) as f:
                f.write(path_or_bytes)
                f.flush()
                reply = _request(op="load", path=f.name, threads=threads)
        self._process, self._session = _process, reply["session"]
        self._inputs = [NodeArg(n) for n in reply["inputs"]]
        self._optional_inputs = _optional_inputs(path_or_bytes) if _TORCH_MAJOR >= 2 else set()
        self._outputs = [NodeArg(n) for n in reply["outputs"]]

    def get_inputs(self):
        return self._inputs

    def get_outputs(self):
        return self._outputs

    def run(self, output_names, input_feed, run_options=None):
        _check_feed(self._inputs, self._optional_inputs, input_feed)
        if self._process.poll() is not None:
            raise OrtError(f"onnxruntime-node exited with status {self._process.returncode} since the session was made")
        reply = _request(op="run", session=self._session,
                         feeds={name: _encode(value) for name, value in input_feed.items()})
        outputs = [_decode(t) for t in reply["outputs"]]  # a graph may output one value twice
        if not output_names:
            return outputs
        by_name = dict(zip((o.name for o in self._outputs), outputs))
        return [by_name[n] for n in output_names]

    def __del__(self):
        if hasattr(self, "_session"):
            _released.append((self._process, self._session))
