#!/usr/bin/env python3
"""Fixtures for the scripted text-model suite (issue 49 item 3): torchtext's RoBERTa and T5 and its
list transforms, torch.jit.script-ed with random weights (fixed seeds), small configurations.

For each case NAME: NAME.pt, its tensor inputs and the scripted module's outputs as .npy files, and
NAME.json (the manifest tests/integration/ort_compare.js reads; a case with several input sizes has
one manifest per size). OUT_DIR/cases.json (written last) lists the cases with the CLI arguments
each export takes and, for dict outputs, the output names the ONNX file must carry.

Debian 12's python3-torchtext ships its C++ extension as empty libraries, so `import torchtext`
fails; the models and the list transforms used here are Python and TorchScript only, so the
extension's two modules are stood in for by empty ones. Without torchtext at all (Debian 13 has no
package) cases.json says so and the suite is skipped.

usage: make_text_models.py OUT_DIR
"""
import json
import os
import sys
import types
from typing import Dict, List

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
from npy_io import save_arrays, write_atomically  # noqa: E402


def import_torchtext():
    try:
        import torchtext  # noqa: F401
    except ImportError as e:
        if "torchtext" not in str(e) and "_torchtext" not in str(e) and "PyInit" not in str(e):
            raise
        for name in [m for m in sys.modules if m.startswith("torchtext")]:
            del sys.modules[name]
        sys.modules["torchtext._extension"] = types.ModuleType("torchtext._extension")

        class EmptyExtension(types.ModuleType):  # the tokenizers' and vocab's classes, never used here
            def __getattr__(self, name):
                return type(name, (), {})

        sys.modules["torchtext._torchtext"] = EmptyExtension("torchtext._torchtext")
        import torchtext  # noqa: F401
    import torchtext.transforms
    import torchtext.models
    import torchtext.models.roberta.modules
    import torchtext.prototype.models.t5.model
    return torchtext


def flatten(out):
    if isinstance(out, dict):
        return [t for v in out.values() for t in flatten(v)]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flatten(o)]
    return [out]


def flat_names(out, prefix=""):
    if isinstance(out, dict):
        return [n for k, v in out.items() for n in flat_names(v, f"{prefix}{k}")]
    if isinstance(out, (tuple, list)):
        return [n for i, o in enumerate(out) for n in flat_names(o, f"{prefix}.{i}")]
    return [prefix]


def tokens(seed, batch, length, pad_from=None, vocab=100):
    g = torch.Generator().manual_seed(seed)
    t = torch.randint(2, vocab, (batch, length), generator=g)
    for row, start in enumerate(pad_from or []):  # right padding with padding index 1, as batches are
        t[row, start:] = 1
    return t


class PaddedBatch(torch.nn.Module):
    """Three token sequences of their own lengths padded into a batch and classified: the list a
    text pipeline hands its model."""

    def __init__(self, classifier):
        super().__init__()
        self.classifier = classifier

    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        batch = torch.nn.utils.rnn.pad_sequence([a, b, c], batch_first=True, padding_value=1.0)
        return self.classifier(batch)


class PadFloats(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.nn.utils.rnn.pad_sequence([a, b], padding_value=-2.5)


class DictReads(torch.nn.Module):
    """A dict read by constant keys inside the graph and another one returned."""

    def forward(self, x: torch.Tensor) -> Dict[str, torch.Tensor]:
        d = {"a": x + 1, "b": x * 2}
        y = d["a"] * d.get("b", x)
        if "c" in d:
            y = y + 100
        return {"y": y, "count": torch.full([1], len(d)), "b": d["b"]}


class DictWritten(torch.nn.Module):
    """A dict written after it is built: its reads must see the write, so it is not resolved by key
    (and the export refuses the dict rather than give the value before the write)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = {"a": x + 1}
        d["a"] = x * 3
        return d["a"]


class ListPipeline(torch.nn.Module):
    """torchtext's list transforms on a batch of token-id lists, as its text pipelines chain them."""

    def __init__(self, T):
        super().__init__()
        self.transform = T.Sequential(T.Truncate(6), T.AddToken(0, begin=True), T.AddToken(2, begin=False),
                                      T.ToTensor(padding_value=1))

    def forward(self, ids: List[List[int]]) -> torch.Tensor:
        out = self.transform(ids)
        assert isinstance(out, torch.Tensor)
        return out


def cases(torchtext):
    T = torchtext.transforms
    roberta = torchtext.models
    modules = torchtext.models.roberta.modules
    t5 = torchtext.prototype.models.t5.model
    conf = roberta.RobertaEncoderConf(vocab_size=100, embedding_dim=32, ffn_dimension=64, num_attention_heads=4,
                                      num_encoder_layers=2, max_seq_len=40)
    encoder_args = dict(vocab_size=100, embedding_dim=32, padding_idx=1, max_seq_len=40, num_encoder_layers=2,
                        num_attention_heads=4, ffn_dimension=64)

    def t5_model(**kw):
        c = dict(embedding_dim=32, qkv_dim=8, num_attention_heads=4, num_encoder_layers=2, num_decoder_layers=2,
                 ffn_dimension=64, vocab_size=100, max_seq_len=40)
        c.update(kw)
        return t5.T5Model(t5.T5Conf(**c))

    tok = tokens(1, 2, 12, pad_from=[12, 8])
    return {
        # name: (module, [input sets: first is the export's], CLI arguments beyond the inputs)
        "roberta_encoder": (roberta.RobertaModel(conf), [(tok,)], []),
        "roberta_encoder_script": (roberta.RobertaModel(conf), [(tok,)], ["--mode", "script"]),
        "roberta_classifier": (roberta.RobertaModel(conf, head=roberta.RobertaClassificationHead(3, 32)), [(tok,)],
                               ["--mode", "auto"]),
        "roberta_dynamic": (roberta.RobertaModel(conf), [(tok,), (tokens(2, 3, 9, pad_from=[9, 9, 4]),)],
                            ["--mode", "script", "--dynamic-axes", "tokens:0=batch,1=seq"]),
        "roberta_all_layers": (modules.TransformerEncoder(**encoder_args, return_all_layers=True), [(tok,)],
                               ["--mode", "auto"]),
        "t5_encoder": (t5_model(encoder_only=True), [(tok,)], ["--mode", "auto"]),
        "t5_encoder_decoder": (t5_model(linear_head=True), [(tok,)], ["--mode", "auto"]),
        "t5_with_decoder_tokens": (t5_model(), [(tok, tokens(3, 2, 5))], ["--mode", "script"]),
        "padded_batch": (PaddedBatch(roberta.RobertaModel(conf, head=roberta.RobertaClassificationHead(3, 32))),
                         [(tokens(4, 1, 7)[0], tokens(5, 1, 11)[0], tokens(6, 1, 4)[0])], []),
        "padded_batch_dynamic": (PaddedBatch(roberta.RobertaModel(conf)),
                                 [(tokens(4, 1, 7)[0], tokens(5, 1, 11)[0], tokens(6, 1, 4)[0]),
                                  (tokens(7, 1, 3)[0], tokens(8, 1, 5)[0], tokens(9, 1, 9)[0])],
                                 ["--mode", "script", "--dynamic-axes", "a:0=la", "--dynamic-axes", "b:0=lb",
                                  "--dynamic-axes", "c:0=lc"]),
        "pad_sequence_floats": (PadFloats(), [(torch.randn(3, 4), torch.randn(5, 4))], []),
        "dict_reads": (DictReads(), [(torch.randn(2, 3),)], []),
        "dict_written": (DictWritten(), [(torch.randn(2, 3),)], ["--mode", "script"]),
        "list_pipeline": (ListPipeline(T), [([[5, 6, 7, 8, 9, 10, 11, 12], [3, 4]],)], []),
        "to_tensor": (T.ToTensor(padding_value=1), [([[5, 6, 7], [3], [8, 9]],)], []),
        "pad_transform": (T.PadTransform(16, 1), [(tok,)], []),
    }


def cli_input(name, value):
    if isinstance(value, torch.Tensor):
        return None
    assert isinstance(value, list)
    inner = ",".join("[" + ",".join(f"int={v}" for v in row) + "]" for row in value)
    return f"{name}:[{inner}]"


def build(name, module, input_sets, args, out_dir):
    torch.manual_seed(sum(map(ord, name)))
    scripted = torch.jit.script(module.eval())
    scripted.save(os.path.join(out_dir, f"{name}.pt"))
    arg_names = [a.name for a in scripted.forward.schema.arguments[1:]]
    manifests, output_names = [], None
    for k, inputs in enumerate(input_sets):
        with torch.no_grad():
            out = scripted(*inputs)
        if output_names is None and isinstance(out, dict):
            output_names = flat_names(out)
        tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
        entries = save_arrays(out_dir, f"{name}.set{k}.in", tensors)
        for e, arg in zip(entries, [n for n, t in zip(arg_names, inputs) if isinstance(t, torch.Tensor)]):
            e["name"] = arg
        manifest = {"model": f"{name}.pt", "inputs": entries,
                    "outputs": save_arrays(out_dir, f"{name}.set{k}.out", flatten(out))}
        write_atomically(os.path.join(out_dir, f"{name}.set{k}.json"), json.dumps(manifest, indent=1) + "\n")
        manifests.append(f"{name}.set{k}.json")
    cli = []
    first = input_sets[0]
    tensor_files = iter(json.load(open(os.path.join(out_dir, manifests[0])))["inputs"])
    for arg, value in zip(arg_names, first):
        spec = cli_input(arg, value)
        cli += ["--input", spec if spec else f"{arg}={next(tensor_files)['file']}"]
    return {"name": name, "model": f"{name}.pt", "manifests": manifests, "cli": cli + args,
            "output_names": output_names}


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    try:
        torchtext = import_torchtext()
    except ImportError as e:
        write_atomically(os.path.join(out_dir, "cases.json"), json.dumps({"skipped": f"no torchtext: {e}"}) + "\n")
        print(f"torchtext is not installed ({e}): no text-model fixtures")
        return 0
    built = [build(name, *case, out_dir) for name, case in cases(torchtext).items()]
    write_atomically(os.path.join(out_dir, "cases.json"), json.dumps(built, indent=1) + "\n")
    print(f"{len(built)} scripted text-model fixtures (torchtext {torchtext.__version__}) in {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
