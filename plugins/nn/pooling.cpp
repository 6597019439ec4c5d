// Pooling. PyTorch's ceil_mode drops a last window that would start in the right padding,
// which ONNX's ceil_mode does not; when the input's spatial sizes are static the exact output
// size is computed here and reached with extra end padding and ceil_mode=0 (this also covers
// opset 9, which has no ceil_mode). count_include_pad pads explicitly with zeros, so that the
// ceil-mode overhang is never counted, as in PyTorch.
#include <algorithm>

#include "nn.h"
#include "onnxport/helpers.h"

namespace onnxport::nn {
namespace {

using namespace helpers;

struct PoolSpec {
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceil_mode = false;
};

struct PoolPads {
  std::vector<int64_t> pads;    // ONNX order: begins, then ends
  bool onnx_ceil_mode = false;  // ceil_mode left to ONNX (spatial sizes unknown)
};

bool all_equal(const std::vector<int64_t>& v, int64_t x) {
  for (int64_t e : v)
    if (e != x) return false;
  return true;
}

// Output size per PyTorch's pooling_output_shape.
int64_t torch_pool_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  const int64_t span = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  int64_t out = (span >= 0 ? span / s : -((-span + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

PoolPads pool_pads(const Value* x, const PoolSpec& p) {
  const size_t nd = p.kernel.size();
  PoolPads out;
  out.pads = p.padding;
  out.pads.insert(out.pads.end(), p.padding.begin(), p.padding.end());
  if (!p.ceil_mode) return out;
  for (size_t i = 0; i < nd; ++i) {
    auto in = static_dim(x, static_cast<int64_t>(i) - static_cast<int64_t>(nd));
    if (!in) {
      out.onnx_ceil_mode = true;
      out.pads.resize(nd);
      out.pads.insert(out.pads.end(), p.padding.begin(), p.padding.end());
      return out;
    }
    const int64_t o = torch_pool_out(*in, p.kernel[i], p.stride[i], p.padding[i], p.dilation[i], true);
    const int64_t needed = (o - 1) * p.stride[i] + p.dilation[i] * (p.kernel[i] - 1) + 1;
    out.pads[i + nd] += std::max<int64_t>(0, needed - (*in + 2 * p.padding[i]));
  }
  return out;
}

Attrs pool_attrs(Graph& g, const TorchNode& n, const PoolSpec& p, const PoolPads& pads) {
  if (pads.onnx_ceil_mode && g.opset() < 10)
    throw ArgumentError(n.kind + " with ceil_mode=True on input of unknown spatial size needs opset 10 or later");
  if (g.opset() < 10) return {{"kernel_shape_i", p.kernel}, {"strides_i", p.stride}, {"pads_i", pads.pads}};
  return {{"kernel_shape_i", p.kernel},
          {"strides_i", p.stride},
          {"pads_i", pads.pads},
          {"ceil_mode_i", pads.onnx_ceil_mode ? 1 : 0}};
}

// PyTorch's max-pool indices count within each (n, c) plane; ONNX MaxPool's run over the whole
// tensor. A 1x1 MaxPool of the input gives every element's flat index: its first element per
// plane is the offset to subtract.
Value* plane_indices(Graph& g, Value* x, Value* flat_indices, size_t nd) {
  const std::vector<int64_t> ones(nd, 1);
  Value* all = g.op("MaxPool", {x}, {{"kernel_shape_i", ones}, {"strides_i", ones}}, 2)[1];
  std::vector<int64_t> axes, starts(nd, 0);
  for (size_t i = 0; i < nd; ++i) axes.push_back(static_cast<int64_t>(i) + 2);
  Value* offsets = slice(g, all, axes, starts, ones);
  return g.op("Sub", {flat_indices, offsets});
}

// max_pool{1,2,3}d[_with_indices](self, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False)
Symbolic max_pool(size_t nd, bool with_indices) {
  return [nd, with_indices](Graph& g, const TorchNode& n, const Args& a) {
    PoolSpec p;
    p.kernel = per_dim(a, 1, nd, 1);
    p.stride = a.is_none(2) || a.is(2).empty() ? p.kernel : per_dim(a, 2, nd, 1);
    p.padding = per_dim(a, 3, nd, 0);
    p.dilation = per_dim(a, 4, nd, 1);
    p.ceil_mode = !a.is_none(5) && a.b(5);
    if (!all_equal(p.dilation, 1) && g.opset() < 10)
      throw ArgumentError(n.kind + " with dilation needs opset 10 or later (target is opset " +
                          std::to_string(g.opset()) + ")");
    Value* x = a.tensor(0);
    const auto rank = x->rank();
    const bool unbatched = rank && *rank == static_cast<int64_t>(nd) + 1;
    Value* in = unbatched ? unsqueeze(g, x, {0}) : x;
    Attrs attrs = pool_attrs(g, n, p, pool_pads(in, p));
    if (!all_equal(p.dilation, 1)) attrs.emplace_back("dilations_i", p.dilation);
    std::vector<Value*> out = g.op("MaxPool", {in}, attrs, with_indices ? 2 : 1);
    if (with_indices) out[1] = plane_indices(g, in, out[1], nd);
    if (unbatched)
      for (Value*& v : out) v = squeeze(g, v, {0});
    return out;
  };
}

// After explicit padding ONNX's ceil_mode keeps a last window that starts in the right padding
// (the padding is input to it); PyTorch drops it. On sizes known only at run time, per axis:
// out - ((out - 1) * stride >= in + padding).
Value* drop_window_in_right_padding(Graph& g, Value* pooled, Value* unpadded, const PoolSpec& p) {
  const int64_t nd = static_cast<int64_t>(p.kernel.size());
  std::vector<Value*> ends;
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t axis = i - nd;
    Value* out = size(g, pooled, axis, true);
    Value* last_start = g.op("Mul", {g.op("Sub", {out, g.constant_ints({1})}), g.constant_ints({p.stride[i]})});
    Value* limit = g.op("Add", {size(g, unpadded, axis, true), g.constant_ints({p.padding[i]})});
    Value* keep = cast(g, g.op("Less", {last_start, limit}), DType::Int64);
    ends.push_back(g.op("Add", {g.op("Sub", {out, g.constant_ints({1})}), keep}));
    axes.push_back(axis);
  }
  return slice(g, pooled, g.constant_ints(std::vector<int64_t>(nd, 0)), concat(g, ends, 0), g.constant_ints(axes),
               g.constant_ints(std::vector<int64_t>(nd, 1)));
}

// avg_pool{1,2,3}d(self, kernel_size, stride=[], padding=0, ceil_mode=False,
//                  count_include_pad=True[, divisor_override=None])
Symbolic avg_pool(size_t nd) {
  return [nd](Graph& g, const TorchNode& n, const Args& a) {
    if (!a.is_none(6))
      throw ArgumentError(n.kind +
                          ": divisor_override has no ONNX equivalent; remove it or export the pool as sum/scale");
    PoolSpec p;
    p.kernel = per_dim(a, 1, nd, 1);
    p.stride = a.is_none(2) || a.is(2).empty() ? p.kernel : per_dim(a, 2, nd, 1);
    p.padding = per_dim(a, 3, nd, 0);
    p.dilation.assign(nd, 1);
    p.ceil_mode = !a.is_none(4) && a.b(4);
    const bool count_include_pad = a.is_none(5) || a.b(5);
    Value* x = a.tensor(0);
    return std::vector<Value*>{with_batch_dim(g, x, nd, [&](Value* in) {
      // The output size follows from the original padding, also when it is applied explicitly.
      PoolPads pads = pool_pads(in, p);
      Value* const unpadded = in;
      if (count_include_pad && !all_equal(p.padding, 0)) {
        std::vector<int64_t> explicit_pads(2, 0);
        explicit_pads.insert(explicit_pads.end(), p.padding.begin(), p.padding.end());
        explicit_pads.insert(explicit_pads.end(), 2, 0);
        explicit_pads.insert(explicit_pads.end(), p.padding.begin(), p.padding.end());
        in = pad_constant(g, in, explicit_pads);
        for (size_t i = 0; i < nd; ++i) {
          pads.pads[i] -= p.padding[i];
          pads.pads[i + nd] -= p.padding[i];
        }
      }
      Value* pooled = g.op("AveragePool", {in}, pool_attrs(g, n, p, pads));
      if (pads.onnx_ceil_mode && in != unpadded) pooled = drop_window_in_right_padding(g, pooled, unpadded, p);
      return pooled;
    })};
  };
}

// The output_size list; None entries keep the input size.
std::vector<int64_t> output_size(const Value* x, const Args& a, size_t nd) {
  std::vector<int64_t> out;
  const Value* v = a.at(1);
  if (v->is_list()) {
    for (size_t i = 0; i < v->elements().size(); ++i) {
      const Value* e = v->elements()[i];
      if (e->is_none()) {
        auto in = static_dim(x, static_cast<int64_t>(i) - static_cast<int64_t>(nd));
        if (!in) a.fail(1, "output sizes (None needs a static input size)");
        out.push_back(*in);
      } else if (auto c = e->maybe_int()) {
        out.push_back(*c);
      } else {
        a.fail(1, "constant output sizes");
      }
    }
  } else {
    out = a.is(1);
  }
  if (out.size() == 1 && nd > 1) out.assign(nd, out[0]);
  if (out.size() != nd) a.fail(1, std::to_string(nd) + " output sizes");
  return out;
}

// Adaptive pools: output 1 everywhere is a global pool; otherwise, with static input sizes
// divisible by the output sizes, a plain pool with kernel = stride = input / output.
// The kernel per spatial dim, or empty for a global pool.
std::vector<int64_t> adaptive_kernel(const TorchNode& n, Value* in, const std::vector<int64_t>& out, size_t nd) {
  if (all_equal(out, 1)) return {};
  std::vector<int64_t> kernel;
  for (size_t i = 0; i < nd; ++i) {
    auto size = static_dim(in, static_cast<int64_t>(i) - static_cast<int64_t>(nd));
    if (!size)
      throw ArgumentError(n.kind + ": output size other than 1 needs static input spatial sizes, got " +
                          in->describe() + " (ONNX has no adaptive pooling; declare those dims static)");
    if (out[i] <= 0 || *size % out[i] != 0)
      throw ArgumentError(n.kind + ": input size " + std::to_string(*size) + " of spatial dim " + std::to_string(i) +
                          " is not a multiple of output size " + std::to_string(out[i]) +
                          "; ONNX has no adaptive pooling with uneven windows");
    kernel.push_back(*size / out[i]);
  }
  return kernel;
}

Value* adaptive_pool(Graph& g, const TorchNode& n, const Args& a, size_t nd, bool is_max) {
  Value* x = a.tensor(0);
  const std::vector<int64_t> out = output_size(x, a, nd);
  return with_batch_dim(g, x, nd, [&](Value* in) {
    const std::vector<int64_t> kernel = adaptive_kernel(n, in, out, nd);
    if (kernel.empty()) return g.op(is_max ? "GlobalMaxPool" : "GlobalAveragePool", {in});
    if (all_equal(kernel, 1)) return in;  // output size == input size
    const std::vector<int64_t> pads(2 * nd, 0);
    return g.op(is_max ? "MaxPool" : "AveragePool", {in},
                {{"kernel_shape_i", kernel}, {"strides_i", kernel}, {"pads_i", pads}});
  });
}

// Values and PyTorch-style (per-plane) indices of an adaptive max pool on batched input.
std::vector<Value*> adaptive_max_with_indices(Graph& g, const TorchNode& n, Value* in, const std::vector<int64_t>& out,
                                              size_t nd) {
  const std::vector<int64_t> kernel = adaptive_kernel(n, in, out, nd);
  if (kernel.empty()) {
    // Global: ArgMax over the flattened plane is already the per-plane index.
    std::vector<int64_t> spatial;
    for (size_t i = 0; i < nd; ++i) spatial.push_back(static_cast<int64_t>(i) + 2);
    Value* flat = reshape(g, in, std::vector<int64_t>{0, 0, -1});
    Value* index = g.op("ArgMax", {flat}, {{"axis_i", 2}, {"keepdims_i", 1}});
    std::vector<int64_t> extra(spatial.begin() + 1, spatial.end());
    if (!extra.empty()) index = unsqueeze(g, index, extra);
    return {g.op("GlobalMaxPool", {in}), index};
  }
  const std::vector<int64_t> pads(2 * nd, 0);
  std::vector<Value*> r =
      g.op("MaxPool", {in}, {{"kernel_shape_i", kernel}, {"strides_i", kernel}, {"pads_i", pads}}, 2);
  r[1] = plane_indices(g, in, r[1], nd);
  return r;
}

Symbolic adaptive_avg_pool(size_t nd) {
  return [nd](Graph& g, const TorchNode& n, const Args& a) {
    return std::vector<Value*>{adaptive_pool(g, n, a, nd, false)};
  };
}

// adaptive_max_pool{1,2,3}d(self, output_size) -> (values, indices)
Symbolic adaptive_max_pool(size_t nd) {
  return [nd](Graph& g, const TorchNode& n, const Args& a) {
    if (n.num_outputs() < 2) return std::vector<Value*>{adaptive_pool(g, n, a, nd, true)};
    Value* x = a.tensor(0);
    const std::vector<int64_t> out = output_size(x, a, nd);
    const auto rank = x->rank();
    const bool unbatched = rank && *rank == static_cast<int64_t>(nd) + 1;
    std::vector<Value*> r = adaptive_max_with_indices(g, n, unbatched ? unsqueeze(g, x, {0}) : x, out, nd);
    if (unbatched)
      for (Value*& v : r) v = squeeze(g, v, {0});
    return r;
  };
}

// max_unpool2d(self, indices, output_size) / max_unpool3d(self, indices, output_size, stride,
// padding): scatter the values into zeros of (N, C, prod(output_size)) at their per-plane indices.
// output_size may be computed from sizes at run time (F.max_unpool*d without output_size).
Symbolic max_unpool(size_t nd) {
  return [nd](Graph& g, const TorchNode&, const Args& a) {
    Value* x = a.tensor(0);
    Value* idx = a.tensor(1);
    const auto rank = x->rank();
    const bool unbatched = rank && *rank == static_cast<int64_t>(nd) + 1;
    if (unbatched) {
      x = unsqueeze(g, x, {0});
      idx = unsqueeze(g, idx, {0});
    }
    Value* leading = slice(g, shape_of(g, x), {0}, {0}, {2});
    Value *plane, *out;
    if (auto c = a.at(2)->maybe_ints()) {
      if (c->size() != nd) a.fail(2, std::to_string(nd) + " output sizes");
      int64_t p = 1;
      for (int64_t o : *c) p *= o;
      plane = g.constant_ints({p});
      out = g.constant_ints(*c);
    } else {
      out = int_list(g, a.at(2));
      plane = reduce(g, "ReduceProd", out, {0}, true);
    }
    Value* zeros = g.op("Expand", {scalar_like(g, 0.0, x), concat(g, {leading, plane}, 0)});
    Value* flat_x = reshape(g, x, std::vector<int64_t>{0, 0, -1});
    Value* flat_i = reshape(g, cast(g, idx, DType::Int64), std::vector<int64_t>{0, 0, -1});
    const std::string scatter = g.opset() >= 11 ? "ScatterElements" : "Scatter";
    Value* y = g.op(scatter, {zeros, flat_i, flat_x}, {{"axis_i", 2}});
    y = reshape(g, y, concat(g, {leading, out}, 0));
    return std::vector<Value*>{unbatched ? squeeze(g, y, {0}) : y};
  };
}

// get_pool_ceil_padding(input, kernel_size, stride, padding) -> int[]: no libtorch op, but a name
// torch.onnx 1.13 registers for its pooling helper. The extra end padding per spatial dim that
// makes a floor-mode pooling produce PyTorch's ceil_mode output size, capped at kernel - 1.
Value* get_pool_ceil_padding(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const std::vector<int64_t> k = a.is(1), p = a.is(3);
  const std::vector<int64_t> s = a.is_none(2) || a.is(2).empty() ? k : a.is(2);
  const auto shape = static_shape(x);
  if (!shape || shape->size() < p.size() || k.size() != p.size() || s.size() != p.size())
    throw ArgumentError(n.kind +
                        ": needs one kernel size, stride and padding per spatial dim and the input's static "
                        "sizes, got " +
                        x->describe());
  std::vector<int64_t> extra;
  for (size_t i = 0; i < p.size(); ++i) {
    const int64_t in = (*shape)[shape->size() - p.size() + i];
    const int64_t out = torch_pool_out(in, k[i], s[i], p[i], 1, true);
    int64_t e = s[i] == 1 ? 0 : k[i] - (in + 2 * p[i] - ((out - 1) * s[i] + 1));
    if (e + 2 * p[i] >= k[i]) e = std::min(e, k[i] - 1);
    extra.push_back(e);
  }
  return g.constant_ints(extra);
}

}  // namespace

void add_pooling(Registrar& r) {
  const char* dims[] = {"1d", "2d", "3d"};
  for (size_t nd = 1; nd <= 3; ++nd) {
    const std::string suffix = dims[nd - 1];
    r.add("aten::max_pool" + suffix, 9, max_pool(nd, false));
    r.add("aten::max_pool" + suffix + "_with_indices", 9, max_pool(nd, true));
    r.add("aten::avg_pool" + suffix, 9, avg_pool(nd));
    r.add("aten::adaptive_avg_pool" + suffix, 9, adaptive_avg_pool(nd));
    r.add("aten::adaptive_max_pool" + suffix, 9, adaptive_max_pool(nd));
    if (nd >= 2) r.add("aten::max_unpool" + suffix, 9, max_unpool(nd));
  }
  r.add("aten::get_pool_ceil_padding", 9, get_pool_ceil_padding);
}

}  // namespace onnxport::nn
