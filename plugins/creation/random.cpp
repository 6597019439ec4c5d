// Random sampling through ONNX's RandomUniform/RandomNormal(+Like) and Multinomial. The
// runtime's generator replaces torch's: a torch.Generator argument is refused, and the exported
// model draws different (equally distributed) numbers than PyTorch.
#include <limits>

#include "creation.h"
#include "onnxport/helpers.h"
#include "onnxport/sdk.h"

namespace onnxport::creation {
namespace {

using namespace helpers;

void refuse_generator(const TorchNode& n, const Args& a) {
  if (auto i = arg_index(n, "generator"); i && !a.is_none(*i))
    throw ArgumentError(n.kind +
                        ": a torch.Generator cannot be exported; ONNX random ops use the runtime's own "
                        "generator (drop the generator argument)");
}

// The dtype ONNX's random ops draw in (float16/float/double); other floats are cast afterwards.
DType draw_dtype(DType dtype) { return dtype == DType::Float16 || dtype == DType::Double ? dtype : DType::Float; }

DType floating_result(const TorchNode& n, const Args& a, DType fallback, std::optional<size_t> pos) {
  const DType dtype = result_dtype(n, a, fallback, pos);
  if (!is_floating(dtype))
    throw ArgumentError(n.kind + " samples floating point values; dtype " + dtype_name(dtype) + " is not");
  return dtype;
}

// Samples of `shape` (a TorchScript int list): the fixed-shape op when the sizes are constants,
// else the Like op over a ConstantOfShape.
Value* draw(Graph& g, const std::string& op, Value* shape, DType dtype, Attrs attrs) {
  attrs.emplace_back("dtype_i", static_cast<int64_t>(draw_dtype(dtype)));
  Value* out;
  if (auto sizes = shape->maybe_ints()) {
    attrs.emplace_back("shape_i", *sizes);
    out = g.op(op, {}, attrs);
  } else {
    out = g.op(op + "Like", {filled(g, int_list(g, shape), 0.0, DType::Float)}, attrs);
  }
  return cast(g, out, dtype);
}

Value* draw_like(Graph& g, const std::string& op, Value* like, DType dtype, Attrs attrs) {
  attrs.emplace_back("dtype_i", static_cast<int64_t>(draw_dtype(dtype)));
  return cast(g, g.op(op + "Like", {like}, attrs), dtype);
}

// aten::rand/randn(size, *[, generator][, names], dtype, layout, device, pin_memory).
Symbolic sample(const std::string& op) {
  return [op](Graph& g, const TorchNode& n, const Args& a) -> std::vector<Value*> {
    refuse_generator(n, a);
    const DType dtype = floating_result(n, a, DType::Float, 1);
    return {draw(g, op, a.at(0), dtype, {})};
  };
}

// aten::rand_like/randn_like(self, *, dtype, layout, device, pin_memory, memory_format).
Symbolic sample_like(const std::string& op) {
  return [op](Graph& g, const TorchNode& n, const Args& a) -> std::vector<Value*> {
    Value* self = a.tensor(0);
    const DType dtype = floating_result(n, a, dtype_of(self), 1);
    return {draw_like(g, op, self, dtype, {})};
  };
}

// floor(u * (high - low) + low) with u uniform in [0, 1), drawn in double.
Value* integers_from_uniform(Graph& g, Value* u, Value* low, Value* high, DType dtype) {
  Value* lo = cast(g, to_scalar(g, low), DType::Double);
  Value* span = g.op("Sub", {cast(g, to_scalar(g, high), DType::Double), lo});
  Value* x = g.op("Floor", {g.op("Add", {g.op("Mul", {u, span}), lo})});
  return cast(g, x, dtype);
}

// aten::randint(high, size, ...), randint.low(low, high, size, ...) and their generator forms.
Value* randint(Graph& g, const TorchNode& n, const Args& a) {
  refuse_generator(n, a);
  const bool has_low = arg_index(n, "low", a.size() >= 7 ? std::optional<size_t>(0) : std::nullopt).has_value();
  const size_t high = has_low ? 1 : 0;
  const DType dtype = result_dtype(n, a, DType::Int64, high + 2);
  Value* u = draw(g, "RandomUniform", a.at(high + 1), DType::Double, {});
  return integers_from_uniform(g, u, has_low ? a.at(0) : g.constant_int(0), a.at(high), dtype);
}

// aten::randint_like(self, high, *, dtype, ...) and randint_like.low_dtype(self, low, high, ...).
Value* randint_like(Graph& g, const TorchNode& n, const Args& a) {
  Value* self = a.tensor(0);
  const bool has_low = arg_index(n, "low", a.size() >= 8 ? std::optional<size_t>(1) : std::nullopt).has_value();
  const size_t high = has_low ? 2 : 1;
  const DType dtype = result_dtype(n, a, dtype_of(self), high + 1);
  Value* u = draw_like(g, "RandomUniform", self, DType::Double, {});
  return integers_from_uniform(g, u, has_low ? a.at(1) : g.constant_int(0), a.at(high), dtype);
}

bool is_number(const Value* v) { return v->is_scalar() || constant_number(v).has_value(); }

// aten::normal: mean and std are each a number or a tensor (normal.float_float also takes a
// size). The result is mean + std * z, with z standard normal of the broadcast shape.
Value* normal(Graph& g, const TorchNode& n, const Args& a) {
  refuse_generator(n, a);
  Value* mean = a.at(0);
  Value* std = a.at(1);
  const DType dtype = floating_result(n, a, DType::Float, 4);
  Value* z;
  if (is_number(mean) && is_number(std)) {
    auto m = constant_number(mean), s = constant_number(std);
    if (m && s) return draw(g, "RandomNormal", a.at(2), dtype, {{"mean_f", *m}, {"scale_f", *s}});
    z = draw(g, "RandomNormal", a.at(2), dtype, {});
  } else {
    Value* like = is_number(mean) ? std : is_number(std) ? mean : g.op("Add", {mean, std});
    z = draw_like(g, "RandomNormal", like, dtype, {});
  }
  Value* scaled = g.op("Mul", {z, cast(g, std, dtype)});
  return g.op("Add", {scaled, cast(g, mean, dtype)});
}

// aten::normal_(self, mean=0, std=1) / uniform_(self, from=0, to=1): self's shape and dtype.
Value* normal_(Graph& g, const TorchNode& n, const Args& a) {
  refuse_generator(n, a);
  Value* self = a.tensor(0);
  const double mean = a.is_none(1) ? 0.0 : a.f(1), std = a.is_none(2) ? 1.0 : a.f(2);
  return draw_like(g, "RandomNormal", self, floating_result(n, a, dtype_of(self), {}),
                   {{"mean_f", mean}, {"scale_f", std}});
}

Value* uniform_(Graph& g, const TorchNode& n, const Args& a) {
  refuse_generator(n, a);
  Value* self = a.tensor(0);
  const double low = a.is_none(1) ? 0.0 : a.f(1), high = a.is_none(2) ? 1.0 : a.f(2);
  return draw_like(g, "RandomUniform", self, floating_result(n, a, dtype_of(self), {}),
                   {{"low_f", low}, {"high_f", high}});
}

// aten::bernoulli(self) draws with probabilities self; bernoulli.p(self, p), bernoulli_.float
// and bernoulli_.Tensor with probability p (a number or a tensor broadcast to self). The result
// has self's shape and dtype: 1 where a uniform draw falls below the probability.
Value* bernoulli(Graph& g, const TorchNode& n, const Args& a) {
  refuse_generator(n, a);
  Value* self = a.tensor(0);
  const auto p_index = arg_index(n, "p", a.size() == 3 ? std::optional<size_t>(1) : std::nullopt);
  Value* p = p_index ? (a.is_none(*p_index) ? g.constant_float(0.5f) : a.at(*p_index)) : self;
  const DType dtype = result_dtype(n, a, dtype_of(self));
  const DType draw_in = is_floating(dtype_of(p)) ? draw_dtype(dtype_of(p)) : DType::Double;
  Value* u = draw_like(g, "RandomUniform", self, draw_in, {});
  return cast(g, g.op("Less", {u, cast(g, p, draw_in)}), dtype);
}

// aten::multinomial(self, num_samples, replacement=False): self holds non-negative weights per
// row (1-d or 2-d). With replacement (or one sample) ONNX's Multinomial draws from log weights;
// without, the Gumbel top-k trick does: the k largest log(w) + Gumbel noise are a sample of k
// distinct categories with the same distribution as drawing one by one.
Value* multinomial(Graph& g, const TorchNode& n, const Args& a) {
  refuse_generator(n, a);
  Value* self = a.tensor(0);
  const int64_t samples = a.i(1);
  const bool replacement = !a.is_none(2) && a.b(2);
  const int64_t rank = rank_of(self, n.kind + " input");
  if (rank != 1 && rank != 2)
    throw ArgumentError(n.kind + ": the weights must be 1-d or 2-d, got rank " + std::to_string(rank));
  Value* w = cast(g, self, DType::Float);
  if (rank == 1) w = unsqueeze(g, w, {0});
  Value* log_w = g.op("Log", {w});
  Value* out;
  if (replacement || samples == 1) {
    out = g.op("Multinomial", {log_w}, {{"sample_size_i", samples}, {"dtype_i", static_cast<int64_t>(DType::Int64)}});
  } else {
    // Gumbel noise -log(-log(u)); u is kept off 0 so that the noise stays finite.
    Value* u = g.op("RandomUniformLike", {log_w},
                    {{"low_f", static_cast<double>(std::numeric_limits<float>::min())}, {"high_f", 1.0}});
    Value* gumbel = g.op("Neg", {g.op("Log", {g.op("Neg", {g.op("Log", {u})})})});
    Value* keys = g.op("Add", {log_w, gumbel});
    if (g.opset() >= 10)
      out = g.op("TopK", {keys, g.constant_ints({samples})}, {{"axis_i", -1}}, 2)[1];
    else
      out = g.op("TopK", {keys}, {{"k_i", samples}, {"axis_i", -1}}, 2)[1];
  }
  return rank == 1 ? squeeze(g, out, {0}) : out;
}

// aten::_standard_gamma(alpha): ONNX has no gamma sampler, so this draws Gamma(alpha + 1) with
// the Wilson-Hilferty cube of a normal (mean and variance within about 1% for shape >= 1) and
// boosts it to Gamma(alpha) by U^(1/alpha). A distributional stand-in, like every random op
// here: the draws differ from torch's, the distribution matches closely.
Value* standard_gamma(Graph& g, const TorchNode&, const Args& a) {
  Value* alpha = a.tensor(0);
  const DType dtype = dtype_of(alpha);
  auto scalar = [&](double v) { return scalar_like(g, v, alpha); };
  Value* shape = g.op("Add", {alpha, scalar(1.0)});
  Value* z = draw_like(g, "RandomNormal", alpha, dtype, {});
  Value* u = draw_like(g, "RandomUniform", alpha, dtype, {{"low_f", 1e-12}, {"high_f", 1.0}});
  Value* ninth = g.op("Div", {scalar(1.0 / 9.0), shape});
  Value* root = g.op("Add", {g.op("Sub", {scalar(1.0), ninth}), g.op("Mul", {z, g.op("Sqrt", {ninth})})});
  Value* cube = g.op("Mul", {g.op("Mul", {root, root}), root});
  Value* boosted = g.op("Mul", {shape, g.op("Relu", {cube})});
  Value* shrink = g.op("Pow", {u, g.op("Div", {scalar(1.0), alpha})});
  return g.op("Mul", {boosted, shrink});
}

// aten::_sample_dirichlet(alpha): gamma draws normalised along the last dim.
Value* sample_dirichlet(Graph& g, const TorchNode& n, const Args& a) {
  Value* gamma = standard_gamma(g, n, a);
  const int64_t last = rank_of(a.tensor(0), n.kind) - 1;
  return g.op("Div", {gamma, reduce(g, "ReduceSum", gamma, {last}, true)});
}

}  // namespace

void add_random(Registrar& r) {
  r.add("aten::_standard_gamma", 9, standard_gamma);
  r.add("aten::_sample_dirichlet", 9, sample_dirichlet);
  r.add("aten::rand", 9, sample("RandomUniform"));
  r.add("aten::randn", 9, sample("RandomNormal"));
  r.add("aten::rand_like", 9, sample_like("RandomUniform"));
  r.add("aten::randn_like", 9, sample_like("RandomNormal"));
  r.add("aten::randint", 9, randint);
  r.add("aten::randint_like", 9, randint_like);
  r.add("aten::normal", 9, normal);
  r.add("aten::normal_", 9, normal_);
  r.add("aten::uniform_", 9, uniform_);
  helpers::add_with_inplace(r, "aten::bernoulli", 9, bernoulli);
  r.add("aten::multinomial", 9, multinomial);
}

}  // namespace onnxport::creation
