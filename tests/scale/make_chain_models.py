#!/usr/bin/env python3
"""Chain-model fixtures for the graph-size scaling test (tests/scale/test_graph_scaling.py).

  chain_<N>.pt   a traced TorchScript model whose exported ONNX graph has about N nodes

Each model is one small nn.Module whose forward() loops over STEPS steps; torch.jit.trace unrolls
the loop, so the saved graph is a long chain of everyday ops on a [4, 8] float tensor:

  every step       y = tanh(y * w_i + b_i)      Mul, Add, Tanh; w_i, b_i [4, 8] parameters
  every 4th step   y = y + r; r = y             Add of a residual saved four steps earlier
  every 8th step   y = y.reshape(8, 4).transpose(0, 1).reshape(4, 8)
                                                Reshape, Transpose, Reshape (shape constants)
  every 16th step  y = relu(y) - y.mean(1, keepdim=True)
                                                Relu, ReduceMean, Sub

so conversion meets parameters (initializers), constants (Reshape shapes), many auto-named
values and several op mappings. The parameters are tiny and drawn from a fixed seed: the test
measures graph size, not bytes.

w_i and b_i cycle through a pool of POOL parameters each (32 [4, 8] initializers in all, whatever
N): only the graph grows. With --distinct-params every step gets its own two parameters
(chain_<N>_pp.pt, ~N/2 initializers): that measures scaling in the parameter count, a different
axis, on which libtorch's freeze_module (ConstantPooling/CSE compare tensor constants pairwise)
is quadratic: chain_10000_pp took ~90 s in `prepare` (torch 1.13), so it is not in the default test.

Tracing one module with an unrolled loop keeps generation fast (the 50k-node model takes a few
seconds to trace and save). Cached: a size is rebuilt only when its .pt is missing or older than
this script.

Usage: make_chain_models.py OUT_DIR [--sizes 1000,10000,50000] [--force]
"""
import argparse
import os
import time

import torch

# ONNX nodes per step, averaged over a 16-step period: 3 per step, +1 every 4th (residual Add),
# +3 every 8th (Reshape, Transpose, Reshape), +3 every 16th (Relu, ReduceMean, Sub).
# Each Reshape's target shape is one Constant node (+4); the pooled parameters are initializers.
NODES_PER_PERIOD = 16 * 3 + 4 * 1 + 2 * 3 + 4 + 1 * 3
PERIOD = 16
POOL = 16


def steps_for(nodes):
    """Number of steps whose exported graph has about `nodes` ONNX nodes."""
    return max(PERIOD, round(nodes * PERIOD / NODES_PER_PERIOD))


class Chain(torch.nn.Module):
    def __init__(self, steps, pool):
        super().__init__()
        self.steps = steps
        self.w = torch.nn.ParameterList(
            torch.nn.Parameter(torch.empty(4, 8).uniform_(0.5, 1.5)) for _ in range(pool))
        self.b = torch.nn.ParameterList(
            torch.nn.Parameter(torch.empty(4, 8).uniform_(-0.2, 0.2)) for _ in range(pool))

    def forward(self, x):
        y = x
        r = x
        ws, bs = list(self.w), list(self.b)
        for i in range(self.steps):
            y = torch.tanh(y * ws[i % len(ws)] + bs[i % len(bs)])
            if i % 4 == 3:
                y = y + r
                r = y
            if i % 8 == 7:
                y = y.reshape(8, 4).transpose(0, 1).reshape(4, 8)
            if i % 16 == 15:
                y = torch.relu(y) - y.mean(1, keepdim=True)
        return y


def model_name(nodes, distinct_params=False):
    return f"chain_{nodes}_pp" if distinct_params else f"chain_{nodes}"


def build(path, nodes, distinct_params):
    torch.manual_seed(nodes)
    steps = steps_for(nodes)
    with torch.no_grad():
        model = Chain(steps, steps if distinct_params else POOL).eval()
        example = torch.randn(4, 8)
        traced = torch.jit.trace(model, (example,), check_trace=False)
    tmp = path + ".tmp"
    traced.save(tmp)
    os.replace(tmp, path)  # never leave a half-written .pt that looks up to date


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--sizes", default="1000,10000,50000",
                        help="comma-separated approximate ONNX node counts (default %(default)s)")
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    parser.add_argument("--distinct-params", action="store_true",
                        help="two parameters per step instead of a pool (chain_<N>_pp.pt)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    os.makedirs(args.out_dir, exist_ok=True)
    script_time = os.path.getmtime(os.path.abspath(__file__))
    for nodes in sizes:
        name = model_name(nodes, args.distinct_params)
        path = os.path.join(args.out_dir, f"{name}.pt")
        if not args.force and os.path.exists(path) and os.path.getmtime(path) > script_time:
            print(f"{name}: up to date")
            continue
        start = time.perf_counter()
        build(path, nodes, args.distinct_params)
        print(f"{name}: written ({steps_for(nodes)} steps, {os.path.getsize(path) / 1e6:.1f} MB, "
              f"{time.perf_counter() - start:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
