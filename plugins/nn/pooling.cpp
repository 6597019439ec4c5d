// Pooling. PyTorch's ceil_mode drops a last window that would start in the right padding,
// which ONNX's ceil_mode does not; when the input's spatial sizes are static the exact output
// size is computed here and reached with extra end padding and ceil_mode=0 (this also covers
// opset 9, which has no ceil_mode). count_include_pad is AveragePool's own attribute where every
// window lies within the padding (no ceil_mode); with ceil_mode it pads explicitly with zeros, so
// that the overhang past the padding is never counted, as in PyTorch. Adaptive pools with uneven
// windows are computed per spatial dim from constant window tables (see adaptive_dims).
#include <algorithm>
#include <cstring>
#include <optional>

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
      const bool pads_counted = count_include_pad && !all_equal(p.padding, 0);
      if (pads_counted && p.ceil_mode) {
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
      Attrs attrs = pool_attrs(g, n, p, pads);
      // Without ceil_mode every window lies within the padding: the divisor is the whole kernel in
      // PyTorch and in ONNX alike, as torch.onnx 2.x writes it.
      if (pads_counted && !p.ceil_mode) attrs.emplace_back("count_include_pad_i", int64_t{1});
      Value* pooled = g.op("AveragePool", {in}, attrs);
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
  for (int64_t o : out)
    if (o <= 0) a.fail(1, "positive output sizes, got " + std::to_string(o));
  return out;
}

// Adaptive pools. Output 1 everywhere is a global pool, for any input size. Otherwise the input's
// spatial sizes must be static. A dim whose size is a multiple of its output size has equal,
// disjoint windows (kernel = stride = size / output): one AveragePool/MaxPool covers all such
// dims. On the other dims PyTorch's windows are uneven and may overlap: output i of `out` reads
// [floor(i * in / out), ceil((i + 1) * in / out)); those dims are pooled one at a time.
struct AdaptiveDims {
  std::vector<int64_t> in, out;

  bool even(size_t i) const { return in[i] % out[i] == 0; }
  bool all_even() const {
    for (size_t i = 0; i < in.size(); ++i)
      if (!even(i)) return false;
    return true;
  }
  // The kernel of the pool over the even dims (1 on the others); empty when it would pool nothing.
  std::vector<int64_t> even_kernel() const {
    std::vector<int64_t> k;
    for (size_t i = 0; i < in.size(); ++i) k.push_back(even(i) ? in[i] / out[i] : 1);
    return all_equal(k, 1) ? std::vector<int64_t>{} : k;
  }
};

// The input's static spatial sizes and the output sizes; nullopt for a global pool.
std::optional<AdaptiveDims> adaptive_dims(const TorchNode& n, Value* in, const std::vector<int64_t>& out, size_t nd) {
  if (all_equal(out, 1)) return std::nullopt;
  AdaptiveDims d{{}, out};
  for (size_t i = 0; i < nd; ++i) {
    auto size = static_dim(in, static_cast<int64_t>(i) - static_cast<int64_t>(nd));
    if (!size)
      throw ArgumentError(n.kind + ": output size other than 1 needs static input spatial sizes, got " +
                          in->describe() + " (ONNX has no adaptive pooling; declare those dims static)");
    d.in.push_back(*size);
  }
  return d;
}

struct Window {
  int64_t start, end;
};

std::vector<Window> adaptive_windows(int64_t in, int64_t out) {
  std::vector<Window> w;
  for (int64_t i = 0; i < out; ++i) w.push_back({i * in / out, ((i + 1) * in + out - 1) / out});
  return w;
}

int64_t widest(const std::vector<Window>& windows) {
  int64_t k = 0;
  for (const Window& w : windows) k = std::max(k, w.end - w.start);
  return k;
}

Value* pool_even(Graph& g, Value* in, const std::vector<int64_t>& kernel, bool is_max) {
  const std::vector<int64_t> pads(2 * kernel.size(), 0);
  return g.op(is_max ? "MaxPool" : "AveragePool", {in},
              {{"kernel_shape_i", kernel}, {"strides_i", kernel}, {"pads_i", pads}});
}

// Averages over the uneven windows of spatial dim `dim` (of nd): a MatMul with the out x in matrix
// A whose row i is 1/|window i| on window i. The last dim is x @ A^T, the one before it A @ x
// (MatMul broadcasts over the leading dims), the first of three A @ x reshaped to (N, C, in, rest)
// and back. `sizes` are x's spatial sizes; sizes[dim] becomes out.
Value* average_uneven(Graph& g, Value* x, size_t dim, size_t nd, std::vector<int64_t>& sizes, int64_t out) {
  const int64_t in = sizes[dim];
  DType d = dtype_of(x);
  if (d == DType::Undefined) d = DType::Float;
  const bool last = dim + 1 == nd;
  const size_t width = Tensor::scalar_of(d, 0.0).nbytes();
  std::vector<uint8_t> bytes(static_cast<size_t>(in * out) * width, 0);  // zero bits: 0 in every float dtype
  const std::vector<Window> windows = adaptive_windows(in, out);
  for (int64_t i = 0; i < out; ++i) {
    const Window& w = windows[static_cast<size_t>(i)];
    const Tensor share = Tensor::scalar_of(d, 1.0 / static_cast<double>(w.end - w.start));
    for (int64_t j = w.start; j < w.end; ++j)
      std::memcpy(bytes.data() + static_cast<size_t>(last ? j * out + i : i * in + j) * width, share.data(), width);
  }
  Value* matrix =
      g.constant(Tensor(d, last ? std::vector<int64_t>{in, out} : std::vector<int64_t>{out, in}, std::move(bytes)));
  sizes[dim] = out;
  if (last) return g.op("MatMul", {x, matrix});
  if (dim + 2 == nd) return g.op("MatMul", {matrix, x});
  std::vector<int64_t> back{0, 0};
  back.insert(back.end(), sizes.begin() + static_cast<std::ptrdiff_t>(dim), sizes.end());
  return reshape(g, g.op("MatMul", {matrix, reshape(g, x, std::vector<int64_t>{0, 0, in, -1})}), back);
}

// Maxima over the uneven windows of spatial dim `dim`: Gather each window's positions as an
// (out, widest) block in place of the dim (a narrower window repeats its last position, which max
// ignores), then ReduceMax the block's second axis away.
Value* max_uneven(Graph& g, Value* x, size_t dim, int64_t in, int64_t out) {
  const std::vector<Window> windows = adaptive_windows(in, out);
  const int64_t k = widest(windows);
  std::vector<int64_t> table;
  for (const Window& w : windows)
    for (int64_t j = 0; j < k; ++j) table.push_back(std::min(w.start + j, w.end - 1));
  const int64_t axis = static_cast<int64_t>(dim) + 2;
  Value* blocks = g.op("Gather", {x, g.constant(Tensor::ints(table, {out, k}))}, {{"axis_i", axis}});
  return reduce(g, "ReduceMax", blocks, {axis + 1}, false);
}

// Per-plane indices of an adaptive max pool with uneven windows, on batched input (the values come
// from pool_static: when the indices are not used, only those nodes remain). Row w of the constant
// T lists window w's positions in the flattened plane in row-major order, padded to the widest
// window by repeating positions (each repeat comes after its original). ArgMax over
// Gather(plane, T)'s window axis picks the first of equal values, so T[w, ArgMax], read as
// Gather(T flattened, w * widest + ArgMax), is the first maximum in row-major order, as PyTorch's.
Value* max_uneven_indices(Graph& g, Value* in, const AdaptiveDims& d) {
  const size_t nd = d.in.size();
  std::vector<std::vector<Window>> windows;
  std::vector<int64_t> widths, plane_strides(nd, 1);
  int64_t n_windows = 1, width = 1;
  for (size_t i = 0; i < nd; ++i) {
    windows.push_back(adaptive_windows(d.in[i], d.out[i]));
    widths.push_back(widest(windows.back()));
    n_windows *= d.out[i];
    width *= widths.back();
  }
  for (size_t i = nd - 1; i > 0; --i) plane_strides[i - 1] = plane_strides[i] * d.in[i];
  std::vector<int64_t> table, base;
  table.reserve(static_cast<size_t>(n_windows * width));
  for (int64_t w = 0; w < n_windows; ++w) {
    std::vector<size_t> o(nd);  // window w's index per dim (row-major)
    for (int64_t r = w, i = static_cast<int64_t>(nd) - 1; i >= 0; r /= d.out[static_cast<size_t>(i)], --i)
      o[static_cast<size_t>(i)] = static_cast<size_t>(r % d.out[static_cast<size_t>(i)]);
    for (int64_t j = 0; j < width; ++j) {
      int64_t pos = 0;
      for (int64_t r = j, i = static_cast<int64_t>(nd) - 1; i >= 0; r /= widths[static_cast<size_t>(i)], --i) {
        const size_t u = static_cast<size_t>(i);
        const Window& win = windows[u][o[u]];
        pos += std::min(win.start + r % widths[u], win.end - 1) * plane_strides[u];
      }
      table.push_back(pos);
    }
    base.push_back(w * width);
  }
  std::vector<int64_t> out_shape{0, 0};
  out_shape.insert(out_shape.end(), d.out.begin(), d.out.end());

  Value* positions = g.constant(Tensor::ints(table, {n_windows * width}));
  Value* plane = reshape(g, in, std::vector<int64_t>{0, 0, -1});
  Value* blocks = reshape(g, g.op("Gather", {plane, positions}, {{"axis_i", 2}}),
                          std::vector<int64_t>{0, 0, n_windows, width});
  Value* arg = g.op("ArgMax", {blocks}, {{"axis_i", 3}, {"keepdims_i", 0}});
  Value* index = g.op("Gather", {positions, g.op("Add", {arg, g.constant(Tensor::ints(base, {n_windows}))})}, {{"axis_i", 0}});
  return reshape(g, index, out_shape);
}

// A static-size adaptive pool of batched input: one pool over the even dims, then each uneven dim.
Value* pool_static(Graph& g, Value* in, const AdaptiveDims& d, bool is_max) {
  const size_t nd = d.in.size();
  Value* y = in;  // output size == input size: x itself
  const std::vector<int64_t> kernel = d.even_kernel();
  if (!kernel.empty()) y = pool_even(g, y, kernel, is_max);
  std::vector<int64_t> sizes = d.in;
  for (size_t i = 0; i < nd; ++i)
    if (d.even(i)) sizes[i] = d.out[i];
  for (size_t i = nd; i-- > 0;) {
    if (d.even(i)) continue;
    y = is_max ? max_uneven(g, y, i, d.in[i], d.out[i]) : average_uneven(g, y, i, nd, sizes, d.out[i]);
  }
  return y;
}

Value* adaptive_pool(Graph& g, const TorchNode& n, const Args& a, size_t nd, bool is_max) {
  Value* x = a.tensor(0);
  const std::vector<int64_t> out = output_size(x, a, nd);
  return with_batch_dim(g, x, nd, [&](Value* in) {
    const auto d = adaptive_dims(n, in, out, nd);
    return d ? pool_static(g, in, *d, is_max) : g.op(is_max ? "GlobalMaxPool" : "GlobalAveragePool", {in});
  });
}

// Values and PyTorch-style (per-plane) indices of an adaptive max pool on batched input.
std::vector<Value*> adaptive_max_with_indices(Graph& g, const TorchNode& n, Value* in, const std::vector<int64_t>& out,
                                              size_t nd) {
  const auto d = adaptive_dims(n, in, out, nd);
  if (!d) {
    // Global: ArgMax over the flattened plane is already the per-plane index.
    std::vector<int64_t> spatial;
    for (size_t i = 0; i < nd; ++i) spatial.push_back(static_cast<int64_t>(i) + 2);
    Value* flat = reshape(g, in, std::vector<int64_t>{0, 0, -1});
    Value* index = g.op("ArgMax", {flat}, {{"axis_i", 2}, {"keepdims_i", 1}});
    std::vector<int64_t> extra(spatial.begin() + 1, spatial.end());
    if (!extra.empty()) index = unsqueeze(g, index, extra);
    return {g.op("GlobalMaxPool", {in}), index};
  }
  if (!d->all_even()) return {pool_static(g, in, *d, true), max_uneven_indices(g, in, *d)};
  std::vector<int64_t> kernel;
  for (size_t i = 0; i < nd; ++i) kernel.push_back(d->in[i] / d->out[i]);
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
