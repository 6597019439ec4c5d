// Pixel shuffle. From opset 11 pixel_shuffle is DepthToSpace in CRD mode (PyTorch's channel
// order); before, and for pixel_unshuffle (SpaceToDepth has the other channel order), it is
// Reshape -> Transpose -> Reshape, whose shapes are constants for static C, H, W (pixel_shuffle below
// opset 11 needs them) and computed from Shape otherwise (pixel_unshuffle).
#include "nn.h"
#include "onnxport/helpers.h"

namespace onnxport::nn {
namespace {

using namespace helpers;

struct Chw {
  int64_t c, h, w;
};

Chw static_chw(const TorchNode& n, const Value* x) {
  auto c = static_dim(x, -3), h = static_dim(x, -2), w = static_dim(x, -1);
  if (!c || !h || !w)
    throw ArgumentError(n.kind + " needs static channel/height/width sizes at this opset, got " + x->describe());
  return {*c, *h, *w};
}

void require_rank4(const TorchNode& n, const Value* x) {
  const int64_t rank = rank_of(x, n.kind);
  if (rank != 4) throw ArgumentError(n.kind + " is exported for (N, C, H, W) inputs, got " + x->describe());
}

Value* pixel_shuffle(Graph& g, const TorchNode& n, const Args& a) {
  const int64_t r = a.i(1);
  return with_batch_dim(g, a.tensor(0), 2, [&](Value* x) {
    require_rank4(n, x);
    if (g.opset() >= 11) return g.op("DepthToSpace", {x}, {{"blocksize_i", r}, {"mode_s", "CRD"}});
    const Chw s = static_chw(n, x);
    Value* blocks = reshape(g, x, std::vector<int64_t>{0, s.c / (r * r), r, r, s.h, s.w});
    Value* moved = transpose(g, blocks, {0, 1, 4, 2, 5, 3});
    return reshape(g, moved, std::vector<int64_t>{0, s.c / (r * r), s.h * r, s.w * r});
  });
}

// pixel_unshuffle of an x whose C, H, W are known only at run time: the same Reshape -> Transpose
// -> Reshape with the shapes computed from Shape(x).
Value* run_time_pixel_unshuffle(Graph& g, Value* x, int64_t r) {
  Value* factor = g.constant_ints({r});
  Value* c = size(g, x, 1, /*as_1d=*/true);
  Value* h = g.op("Div", {size(g, x, 2, true), factor});
  Value* w = g.op("Div", {size(g, x, 3, true), factor});
  Value* keep_batch = g.constant_ints({0});
  Value* blocks = reshape(g, x, concat(g, {keep_batch, c, h, factor, w, factor}, 0));
  Value* moved = transpose(g, blocks, {0, 1, 3, 5, 2, 4});
  return reshape(g, moved, concat(g, {keep_batch, g.op("Mul", {c, g.constant_ints({r * r})}), h, w}, 0));
}

Value* pixel_unshuffle(Graph& g, const TorchNode& n, const Args& a) {
  const int64_t r = a.i(1);
  return with_batch_dim(g, a.tensor(0), 2, [&](Value* x) {
    require_rank4(n, x);
    if (!static_dim(x, -3) || !static_dim(x, -2) || !static_dim(x, -1)) return run_time_pixel_unshuffle(g, x, r);
    const Chw s = static_chw(n, x);
    Value* blocks = reshape(g, x, std::vector<int64_t>{0, s.c, s.h / r, r, s.w / r, r});
    Value* moved = transpose(g, blocks, {0, 1, 3, 5, 2, 4});
    return reshape(g, moved, std::vector<int64_t>{0, s.c * r * r, s.h / r, s.w / r});
  });
}

// channel_shuffle(self, groups): (N, g, C/g, *) -> swap the two channel factors -> (N, C, *).
Value* channel_shuffle(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t groups = a.i(1);
  const int64_t rank = rank_of(x, n.kind);
  auto c = static_dim(x, 1);
  if (!c) throw ArgumentError(n.kind + " needs a static channel count (dim 1), got " + x->describe());
  if (groups <= 0 || *c % groups != 0) a.fail(1, "a group count dividing the " + std::to_string(*c) + " channels");
  Value* split = reshape(g, x, std::vector<int64_t>{0, groups, *c / groups, -1});
  Value* swapped = transpose(g, split, {0, 2, 1, 3});
  auto shape = static_shape(x);
  if (shape) return reshape(g, swapped, *shape);
  if (rank < 3) return reshape(g, swapped, std::vector<int64_t>{0, -1});
  return reshape(g, swapped, shape_of(g, x));
}

}  // namespace

void add_shuffle(Registrar& r) {
  r.add("aten::pixel_shuffle", 9, pixel_shuffle);
  r.add("aten::pixel_unshuffle", 9, pixel_unshuffle);
  r.add("aten::channel_shuffle", 9, channel_shuffle);
  r.add("aten::native_channel_shuffle", 9, channel_shuffle);
}

}  // namespace onnxport::nn
