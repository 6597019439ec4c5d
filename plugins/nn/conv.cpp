// Convolutions. After tracing, nn.ConvNd shows up as aten::_convolution (with a transposed
// flag); scripted code and F.conv2d give aten::conv2d & co. All become Conv / ConvTranspose.
#include <limits>
#include <optional>

#include "nn.h"
#include "onnxport/helpers.h"

namespace onnxport::nn {
namespace {

using namespace helpers;

struct ConvSpec {
  std::vector<int64_t> stride, padding, dilation, output_padding;
  std::vector<int64_t> end_padding;  // when set: the pads at each dim's end (otherwise `padding`)
  std::string padding_mode;  // "" (explicit padding), "same" or "valid" (conv*.padding overloads)
  int64_t groups = 1;
  bool transposed = false;
};

// Spatial dims from the weight (out, in/groups, *kernel), else from the input.
size_t spatial_dims(const TorchNode& n, const Value* x, const Value* w) {
  if (auto s = static_shape(w); s && s->size() >= 3) return s->size() - 2;
  if (auto r = w->rank(); r && *r >= 3) return static_cast<size_t>(*r - 2);
  if (auto r = x->rank(); r && *r >= 3) return static_cast<size_t>(*r - 2);
  throw ArgumentError(n.kind + ": cannot tell the number of spatial dims: weight " + w->describe() + ", input " +
                      x->describe() + " have unknown ranks");
}

// PyTorch's padding='same': total d*(k-1) per dim, the odd element at the end.
std::vector<int64_t> same_pads(const TorchNode& n, const Value* w, const std::vector<int64_t>& dilation) {
  auto shape = static_shape(w);
  if (!shape)
    throw ArgumentError(n.kind + " with padding='same' needs the weight's static shape, got " + w->describe());
  const size_t nd = dilation.size();
  std::vector<int64_t> pads(2 * nd);
  for (size_t i = 0; i < nd; ++i) {
    const int64_t total = dilation[i] * ((*shape)[i + 2] - 1);
    pads[i] = total / 2;
    pads[i + nd] = total - total / 2;
  }
  return pads;
}

// The channels dim of a convolution's input or output: 1, or 0 for an unbatched one.
std::optional<int64_t> channels(const TensorType& t, size_t nd) {
  const auto rank = t.rank();
  if (!rank || *rank < static_cast<int64_t>(nd) + 1) return std::nullopt;
  const Dim& d = (*t.shape)[static_cast<size_t>(*rank - static_cast<int64_t>(nd) - 1)];
  return d.is_static() ? std::optional<int64_t>(d.value) : std::nullopt;
}

// `groups` (argument i). ONNX's Conv/ConvTranspose take it as an attribute, fixed when exporting: a
// constant (also a size the export folded, like compute_deltas' groups=specgram.shape[1] of a static
// shape), or a value computed in script that the static shapes determine, since torch requires
// in_channels == groups * weight.size(1) (out_channels for a transposed convolution, read from the
// recorded output type). Otherwise the export stops: ONNX has no group count known only at run time.
int64_t groups_of(const TorchNode& n, const Args& a, size_t i, const Value* x, const Value* w, size_t nd,
                  bool transposed) {
  if (a.is_none(i)) return 1;
  if (auto c = a.at(i)->maybe_int()) return *c;
  std::optional<int64_t> per_group = static_dim(w, 1);
  std::optional<int64_t> total = transposed ? (n.output_types.empty() ? std::nullopt : channels(n.output_types[0], nd))
                                            : channels(x->type(), nd);
  if (per_group && total && *per_group > 0 && *total % *per_group == 0) return *total / *per_group;
  throw ArgumentError(n.kind + ": groups is computed at run time (" + a.at(i)->describe() + ") and the static shapes" +
                      " do not determine it (input " + x->describe() + ", weight " + w->describe() +
                      "); ONNX " + (transposed ? "ConvTranspose" : "Conv") +
                      "'s group is an attribute fixed when exporting: give the tensors static channel sizes or " +
                      "make groups a constant");
}

Value* convolution(Graph& g, const TorchNode& n, Value* x, Value* w, Value* b, const ConvSpec& spec) {
  const size_t nd = spec.stride.size();
  std::vector<int64_t> pads;
  if (spec.padding_mode == "same") {
    pads = same_pads(n, w, spec.dilation);
  } else if (spec.padding_mode == "valid") {
    pads.assign(2 * nd, 0);
  } else if (spec.padding_mode.empty()) {
    pads = spec.padding;
    const auto& end = spec.end_padding.empty() ? spec.padding : spec.end_padding;
    pads.insert(pads.end(), end.begin(), end.end());
  } else {
    throw ArgumentError(n.kind + ": padding='" + spec.padding_mode + "' is not one of 'same', 'valid'");
  }
  Attrs attrs{{"strides_i", spec.stride}, {"pads_i", pads}, {"dilations_i", spec.dilation}, {"group_i", spec.groups}};
  if (auto shape = static_shape(w); shape && shape->size() == nd + 2)
    attrs.emplace_back("kernel_shape_i", std::vector<int64_t>(shape->begin() + 2, shape->end()));
  bool has_output_padding = false;
  for (int64_t p : spec.output_padding) has_output_padding = has_output_padding || p != 0;
  if (spec.transposed && has_output_padding) attrs.emplace_back("output_padding_i", spec.output_padding);
  std::vector<Value*> weights{w};
  if (b) weights.push_back(b);
  const std::string op = spec.transposed ? "ConvTranspose" : "Conv";
  return with_batch_dim(g, x, nd, [&](Value* in) {
    std::vector<Value*> inputs{in};
    inputs.insert(inputs.end(), weights.begin(), weights.end());
    return g.op(op, inputs, attrs);
  });
}

// aten::_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
//                    groups, benchmark, deterministic, cudnn_enabled[, allow_tf32])
Value* underscore_convolution(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  Value* w = a.tensor(1);
  const size_t nd = spatial_dims(n, x, w);
  ConvSpec spec;
  spec.stride = per_dim(a, 3, nd, 1);
  spec.padding = per_dim(a, 4, nd, 0);
  spec.dilation = per_dim(a, 5, nd, 1);
  spec.transposed = a.b(6);
  spec.output_padding = per_dim(a, 7, nd, 0);
  spec.groups = groups_of(n, a, 8, x, w, nd, spec.transposed);
  return convolution(g, n, x, w, a.optional_tensor(2), spec);
}

// aten::conv{1,2,3}d(input, weight, bias, stride, padding (ints or 'same'/'valid'), dilation, groups)
Value* conv_nd(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  Value* w = a.tensor(1);
  const size_t nd = spatial_dims(n, x, w);
  ConvSpec spec;
  spec.stride = per_dim(a, 3, nd, 1);
  if (!a.is_none(4) && a.at(4)->maybe_string())
    spec.padding_mode = a.s(4);
  else
    spec.padding = per_dim(a, 4, nd, 0);
  spec.dilation = per_dim(a, 5, nd, 1);
  spec.groups = groups_of(n, a, 6, x, w, nd, false);
  return convolution(g, n, x, w, a.optional_tensor(2), spec);
}

// An output_padding computed at run time (ConvTranspose called with output_size on an input
// whose spatial size is dynamic): ONNX's is an attribute. The end is left uncropped and padded by
// stride - 1, the most torch allows when dilation <= stride; positions past the full convolution
// hold only the bias, as in torch. Then each spatial dim is sliced to its length: the computed
// one minus (stride - 1) - padding + output_padding.
Value* conv_transpose_runtime_output_padding(Graph& g, const TorchNode& n, const Args& a, Value* x, Value* w,
                                             ConvSpec spec) {
  const size_t nd = spec.stride.size();
  std::vector<int64_t> trim(nd);
  for (size_t i = 0; i < nd; ++i) {
    if (spec.dilation[i] > spec.stride[i])
      throw ArgumentError(n.kind + ": an output_padding computed at run time (output_size with a dynamic spatial "
                          "size) needs dilation <= stride; give the input a static spatial size");
    spec.output_padding.push_back(spec.stride[i] - 1);
    trim[i] = spec.stride[i] - 1 + spec.padding[i];
  }
  spec.end_padding.assign(nd, 0);
  Value* full = convolution(g, n, x, w, a.optional_tensor(2), spec);
  const auto count = static_cast<int64_t>(nd);
  Value* lengths = slice(g, shape_of(g, full), {0}, {-count}, {std::numeric_limits<int64_t>::max()});
  Value* ends = g.op("Add", {g.op("Sub", {lengths, g.constant_ints(trim)}),
                             cast(g, int_list(g, a.at(5)), DType::Int64)});
  std::vector<int64_t> axes;
  for (int64_t i = -count; i < 0; ++i) axes.push_back(i);
  return slice(g, full, g.constant_ints(std::vector<int64_t>(nd, 0)), ends, g.constant_ints(axes), nullptr);
}

// aten::conv_transpose{1,2,3}d(input, weight, bias, stride, padding, output_padding, groups, dilation)
Value* conv_transpose_nd(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  Value* w = a.tensor(1);
  const size_t nd = spatial_dims(n, x, w);
  ConvSpec spec;
  spec.transposed = true;
  spec.stride = per_dim(a, 3, nd, 1);
  spec.padding = per_dim(a, 4, nd, 0);
  spec.groups = groups_of(n, a, 6, x, w, nd, true);
  spec.dilation = per_dim(a, 7, nd, 1);
  if (!a.is_none(5) && !a.at(5)->maybe_ints()) return conv_transpose_runtime_output_padding(g, n, a, x, w, spec);
  spec.output_padding = per_dim(a, 5, nd, 0);
  return convolution(g, n, x, w, a.optional_tensor(2), spec);
}

// conv_tbc(input (T, B, Cin), weight (k, Cin, Cout), bias (Cout), pad): a 1-d convolution over
// time with time-major layout.
Value* conv_tbc(Graph& g, const TorchNode&, const Args& a) {
  Value* x = transpose(g, a.tensor(0), {1, 2, 0});
  Value* w = transpose(g, a.tensor(1), {2, 1, 0});
  const int64_t pad = a.is_none(3) ? 0 : a.i(3);
  Value* y = g.op("Conv", {x, w, a.tensor(2)}, {{"pads_i", {pad, pad}}});
  return transpose(g, y, {2, 0, 1});
}

// im2col(self, kernel_size, dilation, padding, stride) -> (N, C * kh * kw, L): one strided Slice
// per kernel offset (its end counted from the back, so sizes may be dynamic), stacked after C.
Value* im2col(Graph& g, const TorchNode& n, const Args& a) {
  const std::vector<int64_t> k = per_dim(a, 1, 2, 1), d = per_dim(a, 2, 2, 1), p = per_dim(a, 3, 2, 0),
                             s = per_dim(a, 4, 2, 1);
  return with_batch_dim(g, a.tensor(0), 2, [&](Value* x) {
    if (x->rank() != std::optional<int64_t>(4))
      throw ArgumentError(n.kind + " takes (N, C, H, W) or (C, H, W) input, got " + x->describe());
    if (p[0] || p[1]) x = pad_constant(g, x, {0, 0, p[0], p[1], 0, 0, p[0], p[1]});
    std::vector<Value*> patches;
    for (int64_t i = 0; i < k[0]; ++i) {
      for (int64_t j = 0; j < k[1]; ++j) {
        const int64_t end_h = (k[0] - 1 - i) * d[0], end_w = (k[1] - 1 - j) * d[1];
        Value* patch = slice(g, x, {2, 3}, {i * d[0], j * d[1]},
                             {end_h ? -end_h : INT64_MAX, end_w ? -end_w : INT64_MAX}, {s[0], s[1]});
        patches.push_back(unsqueeze(g, patch, {2}));
      }
    }
    Value* stacked = reshape(g, concat(g, patches, 2), std::vector<int64_t>{0, 0, 0, -1});  // (N, C, K, L)
    Value* shape = shape_of(g, stacked);
    Value* target =
        concat(g, {slice(g, shape, {0}, {0}, {1}), g.constant_ints({-1}), slice(g, shape, {0}, {3}, {4})}, 0);
    return reshape(g, stacked, target);
  });
}

// col2im(self, output_size, kernel_size, dilation, padding, stride): nn.Fold, the inverse of
// im2col, summing overlapping blocks: ONNX's Col2Im (opset 18) on (N, C * kh * kw, L), or on
// (C * kh * kw, L) with a batch dim added.
Value* col2im(Graph& g, const TorchNode& n, const Args& a) {
  const std::vector<int64_t> out = per_dim(a, 1, 2, 0), k = per_dim(a, 2, 2, 1), d = per_dim(a, 3, 2, 1),
                             p = per_dim(a, 4, 2, 0), s = per_dim(a, 5, 2, 1);
  // Columns have one dim past the channels, L: with_batch_dim adds N to a rank-2 input.
  return with_batch_dim(g, a.tensor(0), 1, [&](Value* x) {
    if (x->rank() != std::optional<int64_t>(3))
      throw ArgumentError(n.kind + " takes (N, C * kh * kw, L) or (C * kh * kw, L) input, got " + x->describe());
    return g.op("Col2Im", {x, g.constant_ints(out), g.constant_ints(k)},
                {{"dilations_i", d}, {"pads_i", {p[0], p[1], p[0], p[1]}}, {"strides_i", s}});
  });
}

}  // namespace

void add_conv(Registrar& r) {
  r.add("aten::_convolution", 9, underscore_convolution);
  r.add("aten::convolution", 9, underscore_convolution);
  r.add("aten::conv_tbc", 9, conv_tbc);
  r.add("aten::im2col", 10, im2col);
  r.add("aten::col2im", 18, col2im);
  r.add("aten::_convolution_mode", 9, conv_nd);
  for (const char* op : {"aten::conv1d", "aten::conv2d", "aten::conv3d"}) r.add(op, 9, conv_nd);
  for (const char* op : {"aten::conv_transpose1d", "aten::conv_transpose2d", "aten::conv_transpose3d"})
    r.add(op, 9, conv_transpose_nd);
}

}  // namespace onnxport::nn
