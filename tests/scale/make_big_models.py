#!/usr/bin/env python3
"""Big-model fixtures for the `scale` tests: TorchScript models whose parameters pass protobuf's
2 GiB limit, so that onnxport must write them with ONNX external data.

  mlp_3g   12 x Linear(8192, 8192) with tanh between: 3.2 GB of float32 parameters
  mlp_6g   24 x Linear(8192, 8192): 6.4 GB (measurement only, not built by default)

Written like tests/fixtures/make_models.py's fixtures (NAME.pt, inputs, eager outputs, NAME.json
last) and cached: a model is rebuilt only when its files are missing or older than this script.
Mind the memory: a model is generated, traced, saved and freed before the next one.
"""
import argparse
import gc
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
from make_models import is_up_to_date, write_fixture  # noqa: E402

WIDTH = 8192


class DeepMLP(torch.nn.Module):
    def __init__(self, layers, width=WIDTH):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(layers))
        with torch.no_grad():
            for layer in self.layers:  # keep activations near unit scale through the stack
                layer.weight.normal_(0.0, 1.0 / width ** 0.5)
                layer.bias.uniform_(-0.1, 0.1)

    def forward(self, x):
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x


MODELS = {
    "mlp_3g": 12,
    "mlp_6g": 24,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--only", action="append", choices=sorted(MODELS), metavar="NAME", required=True)
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    scripts = (os.path.abspath(__file__),)
    for name in args.only:
        if is_up_to_date(name, args.out_dir, scripts):
            print(f"{name}: up to date")
            continue
        layers = MODELS[name]
        with torch.no_grad():
            write_fixture(args.out_dir, name, seed=len(name) + layers, make_model=lambda: DeepMLP(layers),
                          make_args=lambda: (torch.randn(2, WIDTH),))
        gc.collect()
        print(f"{name}: written")


if __name__ == "__main__":
    main()
