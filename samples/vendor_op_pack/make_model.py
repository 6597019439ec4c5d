#!/usr/bin/python3
"""Builds a TorchScript model that uses vendor::fancy: make_model.py LIBVENDOR_OPS OUTDIR."""
import os
import sys

import numpy as np
import torch

torch.ops.load_library(sys.argv[1])
out = sys.argv[2]


class VendorModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x):
        # FancyOp's result feeds another op, so the written model lists its type in value_info.
        return torch.ops.vendor.fancy(self.proj(x), 0.5) * 2.0


torch.manual_seed(0)
x = torch.randn(2, 8)
model = VendorModel().eval()
torch.jit.trace(model, x).save(os.path.join(out, "vendor_model.pt"))
np.save(os.path.join(out, "vendor_model.in0.npy"), x.numpy())
