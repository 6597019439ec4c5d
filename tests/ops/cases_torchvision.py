"""Rows for the torchvision pack: torchvision's custom ops (torchvision::nms, roi_align,
roi_pool, ps_roi_align, ps_roi_pool, deform_conv2d). Importing torchvision registers the ops for tracing in Python; the
export process loads torchvision's kernel library itself (see export_cases.cpp)."""
import torchvision
from torchvision.ops import DeformConv2d, nms, ps_roi_align, ps_roi_pool, roi_align, roi_pool

import torch
from op_framework import Input, With, case, f32


def boxes(n, extent=6.0, min_size=2.0, max_size=8.0):
    """n boxes (x1, y1, x2, y2) inside [0, extent + max_size): crowded, so many overlap."""
    def draw(s, g):
        corner = extent * torch.rand(n, 2, generator=g, dtype=torch.float64)
        size = min_size + (max_size - min_size) * torch.rand(n, 2, generator=g, dtype=torch.float64)
        return torch.cat([corner, corner + size], 1)
    return Input((n, 4), torch.float32, draw)


def scores(n):
    """Distinct scores in [0, 1) (ties would make the kept order implementation-defined)."""
    return Input((n,), torch.float32, lambda s, g: torch.randperm(n, generator=g).double() / n
                 + 0.5 / n * torch.rand(n, generator=g, dtype=torch.float64))


def rois(k, batch, height, width, scale, min_size=1.0):
    """k rows (batch index, x1, y1, x2, y2) in image coordinates (feature map / scale); boxes are
    at least min_size feature pixels and may reach 1.5 px past the map's right/bottom edge."""
    def draw(s, g):
        index = torch.randint(0, batch, (k, 1), generator=g).double()
        limit = torch.tensor([width, height], dtype=torch.float64)
        corner = (limit - min_size) * torch.rand(k, 2, generator=g, dtype=torch.float64)
        size = min_size + (limit - corner - min_size + 1.5) * torch.rand(k, 2, generator=g, dtype=torch.float64)
        return torch.cat([index, corner / scale, (corner + size) / scale], 1)
    return Input((k, 5), torch.float32, draw)


NMS_FAILS = {9: "supported from opset 10"}

# ---- nms: kept indices (int64, by descending score) compared exactly

case("tv_nms", ["torchvision::nms"], [boxes(24), scores(24)],
     lambda b, s: (nms(b, s, 0.5), nms(b, s, 0.2), nms(b, s, 0.35), nms(b, s, 0.65)), since=10, fails=NMS_FAILS)
# 0.0 suppresses any overlap at all; 1.0 keeps every box, so the result is the score order.
case("tv_nms_extremes", ["torchvision::nms"], [boxes(12), scores(12)],
     lambda b, s: (nms(b, s, 0.0), nms(b, s, 1.0)), since=10)
case("tv_nms_dynamic", ["torchvision::nms"], [boxes(16), scores(16)], lambda b, s: nms(b, s, 0.4) + 0,
     since=10, dynamic={0: [0], 1: [0]})
case("tv_nms_float64", ["torchvision::nms"], [boxes(10), scores(10)],
     lambda b, s: nms(b.double(), s.double(), 0.3), since=10)

# ---- roi_align: RoiAlign; aligned=True is a half-pixel offset before opset 16, a mode from 16

FEATURES = f32(2, 3, 10, 12)
case("tv_roi_align", ["torchvision::roi_align"], [FEATURES, rois(6, 2, 10, 12, 1.0)],
     lambda x, r: roi_align(x, r, (3, 3), 1.0, 2, aligned=False), since=10, fails=NMS_FAILS)
case("tv_roi_align_adaptive_scaled", ["torchvision::roi_align"], [FEATURES, rois(6, 2, 10, 12, 0.5)],
     lambda x, r: (roi_align(x, r, (2, 4), 0.5, -1, aligned=False), roi_align(x, r, 3, 0.5, 0)), since=10)
case("tv_roi_align_aligned", ["torchvision::roi_align"], [FEATURES, rois(6, 2, 10, 12, 0.5)],
     lambda x, r: roi_align(x, r, (3, 2), 0.5, 2, aligned=True), since=10)
case("tv_roi_align_aligned_adaptive", ["torchvision::roi_align"], [FEATURES, rois(5, 2, 10, 12, 0.25)],
     lambda x, r: roi_align(x, r, (4, 3), 0.25, 0, aligned=True), since=10)
case("tv_roi_align_dynamic", ["torchvision::roi_align"], [FEATURES, rois(4, 2, 10, 12, 1.0)],
     lambda x, r: roi_align(x, r, 2, 1.0, 2, aligned=True), since=10, dynamic={0: [0, 2, 3], 1: [0]})

# ---- roi_pool: MaxRoiPool

case("tv_roi_pool", ["torchvision::roi_pool"], [FEATURES, rois(6, 2, 10, 12, 1.0)],
     lambda x, r: roi_pool(x, r, (3, 2), 1.0))
case("tv_roi_pool_scaled", ["torchvision::roi_pool"], [FEATURES, rois(6, 2, 10, 12, 0.5)],
     lambda x, r: roi_pool(x, r, 2, 0.5))

# ---- ps_roi_align: RoiAlign over all channels, then the position-sensitive diagonal

case("tv_ps_roi_align", ["torchvision::ps_roi_align"], [f32(2, 12, 9, 10), rois(5, 2, 9, 10, 1.0)],
     lambda x, r: ps_roi_align(x, r, (2, 3), 1.0, 2), since=10, fails=NMS_FAILS)
case("tv_ps_roi_align_adaptive", ["torchvision::ps_roi_align"], [f32(1, 8, 9, 10), rois(4, 1, 9, 10, 0.5)],
     lambda x, r: ps_roi_align(x, r, 2, 0.5, 0), since=10, dynamic={1: [0]})

# ---- ps_roi_pool: bin masks + MatMul (average over integer bins), then the same diagonal

case("tv_ps_roi_pool", ["torchvision::ps_roi_pool"], [f32(2, 12, 9, 10), rois(6, 2, 9, 10, 1.0)],
     lambda x, r: ps_roi_pool(x, r, (2, 3), 1.0), since=11, fails={9: "supported from opset 11"})
case("tv_ps_roi_pool_scaled", ["torchvision::ps_roi_pool"], [f32(1, 8, 9, 10), rois(5, 1, 9, 10, 0.3)],
     lambda x, r: ps_roi_pool(x, r, 2, 0.3), since=11, dynamic={0: [2, 3], 1: [0]})

# ---- deform_conv2d: GridSample (opset 16) samples every kernel tap at its offset position, a 1x1
# (grouped) Conv applies the weight. Offsets of up to +-3 px send samples across the border.

def out_size(size, kernel, stride=1, padding=0, dilation=1):
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def offsets(n, offset_groups, kh, kw, ho, wo, reach=3.0):
    return f32(n, 2 * offset_groups * kh * kw, ho, wo, low=-reach, high=reach)


def masks(n, offset_groups, kh, kw, ho, wo):
    return f32(n, offset_groups * kh * kw, ho, wo, low=0.0, high=1.0)


def deform(in_channels, out_channels, kernel, with_mask, **kw):
    """A DeformConv2d module; forward(x, offset[, mask])."""
    def build():
        conv = DeformConv2d(in_channels, out_channels, kernel, **kw)
        return With((lambda self, x, o, m: self.conv(x, o, m)) if with_mask else
                    (lambda self, x, o: self.conv(x, o)), conv=conv)
    return build


DEFORM_FAILS = {13: "supported from opset 16"}
HO, WO = out_size(7, 3, padding=1), out_size(8, 3, padding=1)
case("tv_deform_conv2d", ["torchvision::deform_conv2d"], [f32(2, 4, 7, 8), offsets(2, 1, 3, 3, HO, WO)],
     module=deform(4, 6, 3, False, padding=1), since=16, fails=DEFORM_FAILS)
case("tv_deform_conv2d_mask_offset_groups", ["torchvision::deform_conv2d"],
     [f32(2, 4, 7, 8), offsets(2, 2, 3, 3, HO, WO), masks(2, 2, 3, 3, HO, WO)],
     module=deform(4, 5, 3, True, padding=1), since=16)
HO2, WO2 = out_size(9, 3, stride=2), out_size(8, 3, stride=2)
case("tv_deform_conv2d_groups_stride", ["torchvision::deform_conv2d"],
     [f32(1, 6, 9, 8), offsets(1, 2, 3, 3, HO2, WO2), masks(1, 2, 3, 3, HO2, WO2)],
     module=deform(6, 4, 3, True, stride=2, groups=2, bias=False), since=16)
case("tv_deform_conv2d_groups_one_offset_group", ["torchvision::deform_conv2d"],
     [f32(2, 4, 6, 6), offsets(2, 1, 2, 2, 5, 5)], module=deform(4, 6, 2, False, groups=2), since=16)
HO3, WO3 = out_size(8, 3, padding=2, dilation=2), out_size(9, 2, padding=1, dilation=2)
case("tv_deform_conv2d_dilation_padding", ["torchvision::deform_conv2d"],
     [f32(1, 3, 8, 9), offsets(1, 1, 3, 2, HO3, WO3), masks(1, 1, 3, 2, HO3, WO3)],
     module=deform(3, 4, (3, 2), True, padding=(2, 1), dilation=2), since=16)
case("tv_deform_conv2d_dynamic", ["torchvision::deform_conv2d"],
     [f32(2, 4, 7, 8), offsets(2, 2, 3, 3, HO, WO), masks(2, 2, 3, 3, HO, WO)],
     module=deform(4, 3, 3, True, padding=1), since=16, dynamic={0: [0, 2, 3], 1: [0, 2, 3], 2: [0, 2, 3]})
