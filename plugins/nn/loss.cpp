// Loss functions. The reduction argument is PyTorch's enum: 0 none, 1 mean, 2 sum.
// nll_loss* and cross_entropy_loss use NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss
// (opset 12); the elementwise losses are plain arithmetic at every opset.
#include <cmath>

#include "nn.h"
#include "onnxport/helpers.h"

namespace onnxport::nn {
namespace {

using namespace helpers;

Value* scalar(Graph& g, double v, const Value* like) { return scalar_like(g, v, like); }

// a == b for float tensors: Equal takes floats only from opset 11.
Value* equals(Graph& g, Value* a, Value* b) {
  if (g.opset() >= 11 || !is_floating(dtype_of(a))) return g.op("Equal", {a, b});
  return g.op("Not", {g.op("Or", {g.op("Less", {a, b}), g.op("Greater", {a, b})})});
}

// An unbatched (C) input with a 0-d target gets a batch dim for the ONNX ops, removed again for
// reduction='none'.
template <class Build>
Value* with_class_batch(Graph& g, Value* x, Value*& target, const std::string& reduction, Build build) {
  if (x->rank() != std::optional<int64_t>(1)) return build(x);
  target = unsqueeze(g, target, {0});
  Value* y = build(unsqueeze(g, x, {0}));
  return reduction == "none" ? squeeze(g, y, {0}) : y;
}

// nll_loss{,2d,_nd}(self, target, weight, reduction, ignore_index)
Value* nll_loss(Graph& g, const TorchNode&, const Args& a) {
  Value* target = a.tensor(1);
  Value* weight = a.optional_tensor(2);
  const std::string reduction = reduction_name(a, 3);
  const int64_t ignore = a.is_none(4) ? -100 : a.i(4);
  return with_class_batch(g, a.tensor(0), target, reduction, [&](Value* x) {
    std::vector<Value*> in{x, cast(g, target, DType::Int64)};
    if (weight) in.push_back(weight);
    return g.op("NegativeLogLikelihoodLoss", in, {{"reduction_s", reduction}, {"ignore_index_i", ignore}});
  });
}

// log_softmax over the class dim (1).
Value* log_softmax_classes(Graph& g, Value* x) {
  const auto rank = x->rank();
  if (g.opset() >= 13 || rank == std::optional<int64_t>(2)) return g.op("LogSoftmax", {x}, {{"axis_i", 1}});
  // Before opset 13 LogSoftmax flattens at the axis: move the class dim last and back.
  const int64_t r = rank_of(x, "cross_entropy_loss");
  std::vector<int64_t> perm{0};
  for (int64_t d = 2; d < r; ++d) perm.push_back(d);
  perm.push_back(1);
  std::vector<int64_t> back(r);
  for (int64_t i = 0; i < r; ++i) back[perm[i]] = i;
  return transpose(g, g.op("LogSoftmax", {transpose(g, x, perm)}, {{"axis_i", r - 1}}), back);
}

// The class weights broadcast against (N, C, d1, ...).
Value* class_weights_like(Graph& g, Value* weight, const Value* x) {
  std::vector<int64_t> trailing;
  for (int64_t d = 1; d < rank_of(x, "cross_entropy_loss") - 1; ++d) trailing.push_back(d);
  return trailing.empty() ? weight : unsqueeze(g, weight, trailing);
}

// Class-index targets with label smoothing ε over C classes, as PyTorch computes it:
// (1 - ε) * nll_loss(log_softmax(x)) + ε / C * smooth, where smooth is -sum_c(w_c * logp_c) per
// element, zero where the target is ignored, and under 'mean' divided by the element count
// (no weights) or by the summed weights of the targets that are not ignored.
Value* cross_entropy_smoothed(Graph& g, Value* x, Value* target, Value* weight, const std::string& reduction,
                              int64_t ignore, double smoothing, int64_t classes) {
  Value* logp = log_softmax_classes(g, x);
  target = cast(g, target, DType::Int64);
  std::vector<Value*> nll_in{logp, target};
  if (weight) nll_in.push_back(weight);
  Value* nll = g.op("NegativeLogLikelihoodLoss", nll_in, {{"reduction_s", reduction}, {"ignore_index_i", ignore}});
  Value* terms = weight ? g.op("Mul", {logp, class_weights_like(g, weight, x)}) : logp;
  Value* kept = g.op("Not", {g.op("Equal", {target, g.constant_int(ignore)})});
  Value* smooth = g.op("Where", {kept, g.op("Neg", {reduce(g, "ReduceSum", terms, {1}, false)}), scalar(g, 0.0, x)});
  if (reduction == "mean" && weight) {
    Value* safe_target = g.op("Where", {kept, target, g.constant_int(0)});
    Value* target_weights = g.op("Where", {kept, gather(g, weight, safe_target, 0), scalar(g, 0.0, x)});
    smooth =
        g.op("Div", {reduce(g, "ReduceSum", smooth, {}, false), reduce(g, "ReduceSum", target_weights, {}, false)});
  } else {
    smooth = reduce_loss(g, smooth, reduction);
  }
  return g.op("Add", {g.op("Mul", {nll, scalar(g, 1.0 - smoothing, x)}),
                      g.op("Mul", {smooth, scalar(g, smoothing / static_cast<double>(classes), x)})});
}

// Class probabilities as target: -sum_c(weight_c * target_c * log_softmax(x)_c), label smoothing
// mixing in the uniform distribution; 'mean' averages over the batch (and extra) dims.
Value* cross_entropy_probs(Graph& g, Value* x, Value* target, Value* weight, const std::string& reduction,
                           double smoothing, int64_t classes) {
  if (smoothing > 0.0)
    target = g.op("Add", {g.op("Mul", {target, scalar(g, 1.0 - smoothing, x)}),
                          scalar(g, smoothing / static_cast<double>(classes), x)});
  Value* logp = log_softmax_classes(g, x);
  Value* terms = g.op("Mul", {target, logp});
  if (weight) terms = g.op("Mul", {terms, class_weights_like(g, weight, x)});
  Value* loss = g.op("Neg", {reduce(g, "ReduceSum", terms, {1}, false)});
  return reduce_loss(g, loss, reduction);
}

// cross_entropy_loss(self, target, weight, reduction, ignore_index, label_smoothing)
Value* cross_entropy(Graph& g, const TorchNode& n, const Args& a) {
  Value* target = a.tensor(1);
  Value* weight = a.optional_tensor(2);
  const std::string reduction = reduction_name(a, 3);
  const int64_t ignore = a.is_none(4) ? -100 : a.i(4);
  const double smoothing = a.size() > 5 && !a.is_none(5) ? a.f(5) : 0.0;
  Value* input = a.tensor(0);
  if (is_floating(dtype_of(target))) {
    const bool unbatched = input->rank() == std::optional<int64_t>(1);
    Value* x = unbatched ? unsqueeze(g, input, {0}) : input;
    Value* t = unbatched ? unsqueeze(g, target, {0}) : target;
    auto classes = static_dim(x, 1);
    if (smoothing > 0.0 && !classes)
      throw ArgumentError(n.kind + ": label smoothing needs a static class count (dim 1), got " + x->describe());
    Value* y = cross_entropy_probs(g, x, t, weight, reduction, smoothing, classes.value_or(1));
    return unbatched && reduction == "none" ? squeeze(g, y, {0}) : y;
  }
  if (smoothing > 0.0) {
    return with_class_batch(g, input, target, reduction, [&](Value* x) {
      auto classes = static_dim(x, 1);
      if (!classes)
        throw ArgumentError(n.kind + ": label smoothing needs a static class count (dim 1), got " + x->describe());
      return cross_entropy_smoothed(g, x, target, weight, reduction, ignore, smoothing, *classes);
    });
  }
  return with_class_batch(g, input, target, reduction, [&](Value* x) {
    std::vector<Value*> in{x, cast(g, target, DType::Int64)};
    if (weight) in.push_back(weight);
    return g.op("SoftmaxCrossEntropyLoss", in, {{"reduction_s", reduction}, {"ignore_index_i", ignore}});
  });
}

// binary_cross_entropy_with_logits(self, target, weight, pos_weight, reduction):
// (1 - t) * x + (1 + (pw - 1) * t) * (log(1 + exp(-|x|)) + max(-x, 0)), the stable form.
Value* bce_with_logits(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  Value* t = a.tensor(1);
  // Integer weights (torch.tensor([3])) are promoted to x's dtype, as torch computes them.
  Value* weight = a.optional_tensor(2) ? cast(g, a.optional_tensor(2), x->dtype()) : nullptr;
  Value* pos_weight = a.optional_tensor(3) ? cast(g, a.optional_tensor(3), x->dtype()) : nullptr;
  Value* one = scalar(g, 1.0, x);
  Value* softplus_neg =
      g.op("Add", {g.op("Softplus", {g.op("Neg", {g.op("Abs", {x})})}), g.op("Relu", {g.op("Neg", {x})})});
  Value* log_weight = one;
  if (pos_weight) log_weight = g.op("Add", {one, g.op("Mul", {g.op("Sub", {pos_weight, one}), t})});
  Value* loss = g.op("Add", {g.op("Mul", {g.op("Sub", {one, t}), x}), g.op("Mul", {log_weight, softplus_neg})});
  if (weight) loss = g.op("Mul", {loss, weight});
  return reduce_loss(g, loss, reduction_name(a, 4));
}

// binary_cross_entropy(self, target, weight, reduction): logs are clamped at -100 as in PyTorch.
Value* bce(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  Value* t = a.tensor(1);
  Value* weight = a.optional_tensor(2);
  Value* one = scalar(g, 1.0, x);
  Value* floor = scalar(g, -100.0, x);
  Value* log_x = g.op("Max", {g.op("Log", {x}), floor});
  Value* log_1mx = g.op("Max", {g.op("Log", {g.op("Sub", {one, x})}), floor});
  Value* loss = g.op("Neg", {g.op("Add", {g.op("Mul", {t, log_x}), g.op("Mul", {g.op("Sub", {one, t}), log_1mx})})});
  if (weight) loss = g.op("Mul", {loss, weight});
  return reduce_loss(g, loss, reduction_name(a, 3));
}

// kl_div(self, target, reduction, log_target): target * (log(target) - self), 0 where target == 0.
Value* kl_div(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  Value* t = a.tensor(1);
  const bool log_target = a.size() > 3 && !a.is_none(3) && a.b(3);
  Value* loss;
  if (log_target) {
    loss = g.op("Mul", {g.op("Exp", {t}), g.op("Sub", {t, x})});
  } else {
    Value* zero = scalar(g, 0.0, t);
    Value* xlogy = g.op("Where", {g.op("Greater", {t, zero}), g.op("Mul", {t, g.op("Log", {t})}), zero});
    loss = g.op("Sub", {xlogy, g.op("Mul", {t, x})});
  }
  return reduce_loss(g, loss, reduction_name(a, 2));
}

// mse_loss(self, target, reduction)
Value* mse_loss(Graph& g, const TorchNode&, const Args& a) {
  Value* d = g.op("Sub", {a.tensor(0), a.tensor(1)});
  return reduce_loss(g, g.op("Mul", {d, d}), reduction_name(a, 2));
}

// l1_loss(self, target, reduction)
Value* l1_loss(Graph& g, const TorchNode&, const Args& a) {
  return reduce_loss(g, g.op("Abs", {g.op("Sub", {a.tensor(0), a.tensor(1)})}), reduction_name(a, 2));
}

// |d| < c ? 0.5 * d^2 * q : (|d| - 0.5 * c) * r  with (q, r) = (1/beta, 1) for smooth_l1
// and (1, delta) for huber.
Value* piecewise_quadratic(Graph& g, Value* x, Value* target, double c, double q, double r) {
  Value* d = g.op("Sub", {x, target});
  Value* ad = g.op("Abs", {d});
  Value* quad = g.op("Mul", {g.op("Mul", {d, d}), scalar(g, 0.5 * q, x)});
  Value* lin = g.op("Mul", {g.op("Sub", {ad, scalar(g, 0.5 * c, x)}), scalar(g, r, x)});
  return g.op("Where", {g.op("Less", {ad, scalar(g, c, x)}), quad, lin});
}

// smooth_l1_loss(self, target, reduction, beta=1.0)
Value* smooth_l1_loss(Graph& g, const TorchNode&, const Args& a) {
  const double beta = a.size() > 3 && !a.is_none(3) ? a.f(3) : 1.0;
  Value* x = a.tensor(0);
  Value* loss = beta == 0.0 ? g.op("Abs", {g.op("Sub", {x, a.tensor(1)})})
                            : piecewise_quadratic(g, x, a.tensor(1), beta, 1.0 / beta, 1.0);
  return reduce_loss(g, loss, reduction_name(a, 2));
}

// huber_loss(self, target, reduction, delta=1.0)
Value* huber_loss(Graph& g, const TorchNode&, const Args& a) {
  const double delta = a.size() > 3 && !a.is_none(3) ? a.f(3) : 1.0;
  Value* loss = piecewise_quadratic(g, a.tensor(0), a.tensor(1), delta, 1.0, delta);
  return reduce_loss(g, loss, reduction_name(a, 2));
}

// soft_margin_loss(self, target, reduction): log(1 + exp(-y * x))
Value* soft_margin_loss(Graph& g, const TorchNode&, const Args& a) {
  Value* z = g.op("Neg", {g.op("Mul", {a.tensor(1), a.tensor(0)})});
  return reduce_loss(g, g.op("Softplus", {z}), reduction_name(a, 2));
}

// margin_ranking_loss(x1, x2, target, margin, reduction): max(0, -y * (x1 - x2) + margin)
Value* margin_ranking_loss(Graph& g, const TorchNode&, const Args& a) {
  Value* x1 = a.tensor(0);
  Value* diff = g.op("Mul", {g.op("Neg", {a.tensor(2)}), g.op("Sub", {x1, a.tensor(1)})});
  Value* loss = g.op("Relu", {g.op("Add", {diff, scalar(g, a.f(3), x1)})});
  return reduce_loss(g, loss, reduction_name(a, 4));
}

// hinge_embedding_loss(self, target, margin, reduction):
// (target != 1 ? max(0, margin - x) : 0) + (target != -1 ? x : 0)
Value* hinge_embedding_loss(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  Value* t = a.tensor(1);
  Value* zero = scalar(g, 0.0, x);
  Value* not_pos = g.op("Not", {equals(g, t, scalar(g, 1.0, t))});
  Value* not_neg = g.op("Not", {equals(g, t, scalar(g, -1.0, t))});
  Value* margin = g.op("Relu", {g.op("Sub", {scalar(g, a.f(2), x), x})});
  Value* loss = g.op("Add", {g.op("Where", {not_pos, margin, zero}), g.op("Where", {not_neg, x, zero})});
  return reduce_loss(g, loss, reduction_name(a, 3));
}

// poisson_nll_loss(input, target, log_input, full, eps, reduction)
Value* poisson_nll_loss(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  Value* t = a.tensor(1);
  Value* loss = a.b(2) ? g.op("Sub", {g.op("Exp", {x}), g.op("Mul", {t, x})})
                       : g.op("Sub", {x, g.op("Mul", {t, g.op("Log", {g.op("Add", {x, scalar(g, a.f(4), x)})})})});
  if (a.b(3)) {
    // Stirling's approximation of log(target!), only where target > 1.
    Value* stirling =
        g.op("Add", {g.op("Sub", {g.op("Mul", {t, g.op("Log", {t})}), t}),
                     g.op("Mul", {scalar(g, 0.5, x), g.op("Log", {g.op("Mul", {scalar(g, 2 * M_PI, x), t})})})});
    loss = g.op("Add", {loss, g.op("Where", {g.op("Greater", {t, scalar(g, 1.0, t)}), stirling, scalar(g, 0.0, x)})});
  }
  return reduce_loss(g, loss, reduction_name(a, 5));
}

// The p-norm over the last dim.
Value* p_norm_last(Graph& g, Value* d, double p, bool keepdim) {
  if (p == 2.0) return reduce(g, "ReduceL2", d, {-1}, keepdim);
  if (p == 1.0) return reduce(g, "ReduceL1", d, {-1}, keepdim);
  Value* powered = g.op("Pow", {g.op("Abs", {d}), scalar(g, p, d)});
  return g.op("Pow", {reduce(g, "ReduceSum", powered, {-1}, keepdim), scalar(g, 1.0 / p, d)});
}

// ||x1 - x2 + eps||_p over the last dim, PyTorch's pairwise_distance.
Value* distance(Graph& g, Value* x1, Value* x2, double p, double eps) {
  return p_norm_last(g, g.op("Add", {g.op("Sub", {x1, x2}), scalar(g, eps, x1)}), p, false);
}

// cosine_embedding_loss(x1, x2, target, margin, reduction)
Value* cosine_embedding_loss(Graph& g, const TorchNode&, const Args& a) {
  Value* x1 = a.tensor(0);
  Value* x2 = a.tensor(1);
  Value* t = a.tensor(2);
  Value* tiny = scalar(g, 1e-12, x1);
  Value* dot = reduce(g, "ReduceSum", g.op("Mul", {x1, x2}), {-1}, false);
  Value* m1 = g.op("Add", {reduce(g, "ReduceSum", g.op("Mul", {x1, x1}), {-1}, false), tiny});
  Value* m2 = g.op("Add", {reduce(g, "ReduceSum", g.op("Mul", {x2, x2}), {-1}, false), tiny});
  Value* cos = g.op("Div", {dot, g.op("Sqrt", {g.op("Mul", {m1, m2})})});
  Value* zero = scalar(g, 0.0, x1);
  Value* pos = g.op("Where", {equals(g, t, scalar(g, 1.0, t)), g.op("Sub", {scalar(g, 1.0, x1), cos}), zero});
  Value* neg = g.op(
      "Where", {equals(g, t, scalar(g, -1.0, t)), g.op("Relu", {g.op("Sub", {cos, scalar(g, a.f(3), x1)})}), zero});
  return reduce_loss(g, g.op("Add", {pos, neg}), reduction_name(a, 4));
}

// triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction)
Value* triplet_margin_loss(Graph& g, const TorchNode&, const Args& a) {
  Value *anchor = a.tensor(0), *positive = a.tensor(1), *negative = a.tensor(2);
  const double p = a.f(4), eps = a.f(5);
  Value* d_pos = distance(g, anchor, positive, p, eps);
  Value* d_neg = distance(g, anchor, negative, p, eps);
  if (a.b(6)) d_neg = g.op("Min", {d_neg, distance(g, positive, negative, p, eps)});
  Value* loss = g.op("Relu", {g.op("Add", {g.op("Sub", {d_pos, d_neg}), scalar(g, a.f(3), anchor)})});
  return reduce_loss(g, loss, reduction_name(a, 7));
}

}  // namespace

void add_loss(Registrar& r) {
  for (const char* op : {"aten::nll_loss", "aten::nll_loss2d", "aten::nll_loss_nd"}) r.add(op, 12, nll_loss);
  r.add("aten::cross_entropy_loss", 12, cross_entropy);
  r.add("aten::binary_cross_entropy_with_logits", 9, bce_with_logits);
  r.add("aten::binary_cross_entropy", 9, bce);
  r.add("aten::kl_div", 9, kl_div);
  r.add("aten::mse_loss", 9, mse_loss);
  r.add("aten::l1_loss", 9, l1_loss);
  r.add("aten::smooth_l1_loss", 9, smooth_l1_loss);
  r.add("aten::huber_loss", 9, huber_loss);
  r.add("aten::soft_margin_loss", 9, soft_margin_loss);
  r.add("aten::margin_ranking_loss", 9, margin_ranking_loss);
  r.add("aten::hinge_embedding_loss", 9, hinge_embedding_loss);
  r.add("aten::poisson_nll_loss", 9, poisson_nll_loss);
  r.add("aten::cosine_embedding_loss", 9, cosine_embedding_loss);
  r.add("aten::triplet_margin_loss", 9, triplet_margin_loss);
}

}  // namespace onnxport::nn
