#!/usr/bin/python3
"""Build the export benchmark's models at full size: torchvision's alexnet, resnet50, vgg11_bn,
vit_b_16 and swin_t on 224x224 images, traced (random weights, fixed seeds).

The zoo test (tests/zoo/make_zoo.py) uses smaller images and smaller variants to keep CI short;
the benchmark needs the models whose torch.onnx figures issue 10 quotes. Files per model are
those of tests/fixtures/make_models.py (NAME.pt, NAME.in<k>.npy, NAME.out<k>.npy, NAME.json).

Usage: /usr/bin/python3 make_bench_models.py OUT_DIR [--only NAME]... [--force]
A model whose files are newer than this script and make_models.py is skipped.
"""
import argparse
import os
import sys

import torch
import torch.nn as nn
import torchvision.models as tvm

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")
sys.path.insert(0, FIXTURES)
import make_models  # noqa: E402

SCRIPTS = [os.path.abspath(__file__), os.path.abspath(make_models.__file__),
           os.path.abspath(os.path.join(FIXTURES, "npy_io.py"))]


def image():
    return (torch.randn(1, 3, 224, 224),)


def vit_b_16():
    """torchvision zero-initializes the head; random weights give its logits a spread."""
    model = tvm.vit_b_16()
    nn.init.normal_(model.heads.head.weight, std=0.02)
    return model


# name: (seed, constructor, trace with autograd on). vit_b_16 is traced with autograd on, so the
# trace records the decomposed attention that torch.onnx 1.13 can export too (see make_zoo.py).
MODELS = {
    "alexnet_224": (301, tvm.alexnet, False),
    "resnet50_224": (302, tvm.resnet50, False),
    "vgg11_bn_224": (303, tvm.vgg11_bn, False),
    "vit_b_16_224": (304, vit_b_16, True),
    "swin_t_224": (305, tvm.swin_t, False),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--only", action="append", choices=sorted(MODELS), metavar="NAME")
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    options = parser.parse_args()
    def build(name):
        seed, make_model, grad = MODELS[name]
        make_models.write_fixture(options.out_dir, name, seed, make_model, image, head_std=0.1, grad=grad)

    make_models.build_outdated(options.only or list(MODELS), options.out_dir, SCRIPTS, build, options.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
