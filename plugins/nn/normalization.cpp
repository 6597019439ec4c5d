// Normalization layers.
//
// aten::batch_norm's `training` flag says whether PyTorch used batch statistics (it is true for
// BatchNorm in train mode and for track_running_stats=False). Three cases:
//   - running statistics              -> BatchNormalization in inference mode
//   - batch statistics, training export (Graph::training()) -> BatchNormalization in training mode
//   - batch statistics, inference export -> the statistics are computed with ReduceMean and fed to
//     inference-mode BatchNormalization, so the graph needs no training support
#include <limits>

#include "nn.h"
#include "onnxport/helpers.h"

namespace onnxport::nn {
namespace {

using namespace helpers;

int64_t channel_count(const TorchNode& n, const Value* x, const std::vector<Value*>& params) {
  if (auto c = static_dim(x, 1)) return *c;
  for (const Value* p : params)
    if (p)
      if (auto s = static_shape(p); s && s->size() == 1) return (*s)[0];
  throw ArgumentError(n.kind + " without weight/bias/running statistics needs a static channel count (dim 1), got " +
                      x->describe());
}

// The per-channel parameter p, or a constant filled with `fill` when PyTorch passed None.
Value* param_or(Graph& g, Value* p, int64_t channels, DType dtype, double fill) {
  return p ? p : g.constant(full_tensor(dtype, {channels}, fill));
}

// Per-channel mean and biased variance over every dim but 1.
std::pair<Value*, Value*> batch_statistics(Graph& g, const TorchNode& n, Value* x) {
  const int64_t rank = rank_of(x, n.kind + " with batch statistics");
  std::vector<int64_t> axes{0};
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  Value* mean = reduce(g, "ReduceMean", x, axes, true);
  Value* centered = g.op("Sub", {x, mean});
  Value* var = reduce(g, "ReduceMean", g.op("Mul", {centered, centered}), axes, false);
  return {squeeze(g, mean, axes), var};
}

// batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled)
Value* batch_norm(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  Value *w = a.optional_tensor(1), *b = a.optional_tensor(2);
  Value *mean = a.optional_tensor(3), *var = a.optional_tensor(4);
  const bool batch_stats = a.b(5) || !mean || !var;
  const double momentum = a.is_none(6) ? 0.1 : a.f(6);
  const double eps = a.f(7);
  const DType dtype = float_dtype_of(x);
  int64_t channels = -1;
  if (!w || !b || !mean || !var) channels = channel_count(n, x, {w, b, mean, var});
  w = param_or(g, w, channels, dtype, 1.0);
  b = param_or(g, b, channels, dtype, 0.0);

  Attrs attrs{{"epsilon_f", eps}, {"momentum_f", 1.0 - momentum}};
  if (batch_stats && g.training()) {
    mean = param_or(g, mean, channels, dtype, 0.0);
    var = param_or(g, var, channels, dtype, 1.0);
    if (g.opset() >= 14) {
      attrs.emplace_back("training_mode_i", 1);
      return g.op("BatchNormalization", {x, w, b, mean, var}, attrs, 3)[0];
    }
    return g.op("BatchNormalization", {x, w, b, mean, var}, attrs, 5)[0];
  }
  if (batch_stats) std::tie(mean, var) = batch_statistics(g, n, x);
  return g.op("BatchNormalization", {x, w, b, mean, var}, attrs);
}

// instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn)
Value* instance_norm(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  Value *w = a.optional_tensor(1), *b = a.optional_tensor(2);
  Value *mean = a.optional_tensor(3), *var = a.optional_tensor(4);
  const bool use_input_stats = a.b(5);
  const double eps = a.f(7);
  const DType dtype = float_dtype_of(x);
  int64_t channels = -1;
  if (!w || !b || (!use_input_stats && (!mean || !var))) channels = channel_count(n, x, {w, b, mean, var});
  w = param_or(g, w, channels, dtype, 1.0);
  b = param_or(g, b, channels, dtype, 0.0);
  if (use_input_stats || !mean || !var) return g.op("InstanceNormalization", {x, w, b}, {{"epsilon_f", eps}});
  return g.op("BatchNormalization", {x, w, b, mean, var}, {{"epsilon_f", eps}});
}

// Opset 17's LayerNormalization over the trailing dims `shape` of x: `outputs` 1 (layer_norm) or
// 3 (native_layer_norm: with Mean and InvStdDev).
std::vector<Value*> layer_normalization(Graph& g, Value* x, const std::vector<int64_t>& shape, Value* w, Value* b,
                                        double eps, int outputs) {
  if (!w) w = g.constant(full_tensor(float_dtype_of(x), shape, 1.0));
  std::vector<Value*> in{x, w};
  if (b) in.push_back(b);
  return g.op("LayerNormalization", in, {{"axis_i", -static_cast<int64_t>(shape.size())}, {"epsilon_f", eps}}, outputs);
}

// The same over (input, normalized_shape, weight, bias, eps) arguments.
std::vector<Value*> layer_normalization(Graph& g, const Args& a, int outputs) {
  return layer_normalization(g, a.tensor(0), a.is(1), a.optional_tensor(2), a.optional_tensor(3), a.f(4), outputs);
}

// layer_norm(input, normalized_shape, weight, bias, eps, cudnn_enable)
Value* layer_norm_17(Graph& g, const TorchNode&, const Args& a) { return layer_normalization(g, a, 1)[0]; }

struct Normalized {
  Value *y, *mean, *rstd;  // mean and 1/sqrt(var + eps) keep the reduced dims
};

// (x - mean) / sqrt(var + eps) over `axes`, with the biased variance.
Normalized normalize(Graph& g, Value* x, const std::vector<int64_t>& axes, double eps) {
  Value* mean = reduce(g, "ReduceMean", x, axes, true);
  Value* centered = g.op("Sub", {x, mean});
  Value* var = reduce(g, "ReduceMean", g.op("Mul", {centered, centered}), axes, true);
  Value* rstd = g.op("Reciprocal", {g.op("Sqrt", {g.op("Add", {var, scalar_like(g, eps, x)})})});
  return {g.op("Mul", {centered, rstd}), mean, rstd};
}

std::vector<int64_t> trailing_axes(int64_t k) {
  std::vector<int64_t> axes;
  for (int64_t i = -k; i < 0; ++i) axes.push_back(i);
  return axes;
}

Value* affine(Graph& g, Value* y, Value* w, Value* b) {
  if (w) y = g.op("Mul", {y, w});
  if (b) y = g.op("Add", {y, b});
  return y;
}

// y * w + b with per-channel (dim 1) w and b broadcast over the trailing dims of a rank-`rank` y.
Value* channel_affine(Graph& g, Value* y, Value* w, Value* b, int64_t rank) {
  std::vector<int64_t> trailing;
  for (int64_t d = 1; d < rank - 1; ++d) trailing.push_back(d);
  if (w) y = g.op("Mul", {y, trailing.empty() ? w : unsqueeze(g, w, trailing)});
  if (b) y = g.op("Add", {y, trailing.empty() ? b : unsqueeze(g, b, trailing)});
  return y;
}

// Before opset 17: normalize over the trailing dims, then weight and bias.
Value* layer_norm_decomposed(Graph& g, Value* x, size_t dims, Value* w, Value* b, double eps) {
  return affine(g, normalize(g, x, trailing_axes(static_cast<int64_t>(dims)), eps).y, w, b);
}

Value* layer_norm_9(Graph& g, const TorchNode&, const Args& a) {
  return layer_norm_decomposed(g, a.tensor(0), a.is(1).size(), a.optional_tensor(2), a.optional_tensor(3), a.f(4));
}

// native_layer_norm(input, normalized_shape, weight, bias, eps) -> (out, mean, rstd)
std::vector<Value*> native_layer_norm_9(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  const auto k = static_cast<int64_t>(a.is(1).size());
  Normalized r = normalize(g, x, trailing_axes(k), a.f(4));
  return {affine(g, r.y, a.optional_tensor(2), a.optional_tensor(3)), r.mean, r.rstd};
}

// Opset 17: LayerNormalization's optional Mean and InvStdDev outputs have the same shapes.
std::vector<Value*> native_layer_norm_17(Graph& g, const TorchNode&, const Args& a) {
  return layer_normalization(g, a, 3);
}

// native_group_norm(input, weight, bias, N, C, HxW, group, eps) -> (out, mean, rstd), the
// statistics shaped (N, group).
std::vector<Value*> native_group_norm(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t groups = a.i(6);
  const int64_t rank = rank_of(x, n.kind);
  Value* grouped = reshape(g, x, std::vector<int64_t>{0, groups, -1});
  Normalized r = normalize(g, grouped, {2}, a.f(7));
  auto shape = static_shape(x);
  Value* y = shape ? reshape(g, r.y, *shape) : reshape(g, r.y, shape_of(g, x));
  y = channel_affine(g, y, a.optional_tensor(1), a.optional_tensor(2), rank);
  return {y, squeeze(g, r.mean, {2}), squeeze(g, r.rstd, {2})};
}

// _weight_norm(v, g, dim=0): g * v / ||v||, the norm over every dim but `dim` (all for -1).
Value* weight_norm(Graph& g, const TorchNode& n, const Args& a) {
  Value* v = a.tensor(0);
  Value* scale = a.tensor(1);
  const int64_t dim = a.is_none(2) ? 0 : a.i(2);
  const int64_t rank = rank_of(v, n.kind);
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < rank; ++d)
    if (dim == -1 || d != normalize_dim(dim, rank)) axes.push_back(d);
  Value* norm = g.op("Sqrt", {reduce(g, "ReduceSum", g.op("Mul", {v, v}), axes, true)});
  return g.op("Mul", {v, g.op("Div", {scale, norm})});
}

// group_norm(input, num_groups, weight, bias, eps, cudnn_enabled): InstanceNormalization over
// (N, groups, -1), then the per-channel affine transform.
Value* group_norm(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const int64_t groups = a.i(1);
  const int64_t rank = rank_of(x, n.kind);
  const DType dtype = float_dtype_of(x);
  Value* grouped = reshape(g, x, std::vector<int64_t>{0, groups, -1});
  Value* normed =
      g.op("InstanceNormalization",
           {grouped, g.constant(full_tensor(dtype, {groups}, 1.0)), g.constant(full_tensor(dtype, {groups}, 0.0))},
           {{"epsilon_f", a.f(4)}});
  auto shape = static_shape(x);
  Value* y = shape ? reshape(g, normed, *shape) : reshape(g, normed, shape_of(g, x));
  return channel_affine(g, y, a.optional_tensor(2), a.optional_tensor(3), rank);
}

// native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)
// -> (out, save_mean, save_invstd). With batch statistics the saved ones are the per-channel
// mean and 1/sqrt(biased var + eps); with running statistics PyTorch returns empty tensors.
std::vector<Value*> native_batch_norm(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  Value *w = a.optional_tensor(1), *b = a.optional_tensor(2);
  Value *mean = a.optional_tensor(3), *var = a.optional_tensor(4);
  const double eps = a.f(7);
  const DType dtype = float_dtype_of(x);
  const int64_t rank = rank_of(x, n.kind);
  if (!a.b(5) && mean && var) {
    const int64_t channels = (w && b) ? -1 : channel_count(n, x, {w, b, mean, var});
    w = param_or(g, w, channels, dtype, 1.0);
    b = param_or(g, b, channels, dtype, 0.0);
    Value* y = g.op("BatchNormalization", {x, w, b, mean, var}, {{"epsilon_f", eps}});
    Value* empty = g.constant(full_tensor(dtype, {0}, 0.0));
    return {y, empty, empty};
  }
  std::vector<int64_t> axes{0};
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  Normalized r = normalize(g, x, axes, eps);
  Value* y = channel_affine(g, r.y, w, b, rank);
  return {y, reshape(g, r.mean, std::vector<int64_t>{-1}), reshape(g, r.rstd, std::vector<int64_t>{-1})};
}

// rms_norm(input, normalized_shape, weight, eps) (PyTorch 2.4): x / sqrt(mean(x^2) + eps) over the
// trailing dims, times weight. eps None is the machine epsilon of the type PyTorch computes in:
// double's for double, float's for float, half and bfloat16.
Value* rms_norm(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  const double eps = !a.is_none(3)                          ? a.f(3)
                     : float_dtype_of(x) == DType::Double ? std::numeric_limits<double>::epsilon()
                                                          : std::numeric_limits<float>::epsilon();
  Value* mean_square = reduce(g, "ReduceMean", g.op("Mul", {x, x}), trailing_axes(static_cast<int64_t>(a.is(1).size())), true);
  Value* rms = g.op("Sqrt", {g.op("Add", {mean_square, scalar_like(g, eps, x)})});
  return affine(g, g.op("Div", {x, rms}), a.optional_tensor(2), nullptr);
}

}  // namespace

Value* layer_norm(Graph& g, Value* x, const std::vector<int64_t>& normalized_shape, Value* w, Value* b, double eps) {
  if (g.opset() >= 17) return layer_normalization(g, x, normalized_shape, w, b, eps, 1)[0];
  return layer_norm_decomposed(g, x, normalized_shape.size(), w, b, eps);
}

void add_normalization(Registrar& r) {
  r.add("aten::batch_norm", 9, batch_norm);
  r.add("aten::instance_norm", 9, instance_norm);
  r.add("aten::layer_norm", 9, layer_norm_9);
  r.add("aten::layer_norm", 17, layer_norm_17);
  r.add("aten::group_norm", 9, group_norm);
  r.add("aten::native_layer_norm", 9, native_layer_norm_9);
  r.add("aten::native_layer_norm", 17, native_layer_norm_17);
  r.add("aten::native_group_norm", 9, native_group_norm);
  r.add("aten::_weight_norm", 9, weight_norm);
  r.add("aten::native_batch_norm", 9, native_batch_norm);
  r.add("aten::rms_norm", 9, rms_norm);
}

}  // namespace onnxport::nn
