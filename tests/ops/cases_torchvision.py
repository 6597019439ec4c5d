"""Rows for the torchvision pack: torchvision's custom ops (torchvision::nms, roi_align,
roi_pool, ps_roi_align, ps_roi_pool). Importing torchvision registers the ops for tracing in Python; the
export process loads torchvision's kernel library itself (see export_cases.cpp)."""
import torchvision
from torchvision.ops import nms, ps_roi_align, ps_roi_pool, roi_align, roi_pool

from op_cases import *


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
