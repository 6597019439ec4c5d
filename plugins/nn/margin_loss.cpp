// Multi-class margin losses: multi_margin_loss (one target class per sample) and
// multilabel_margin_loss (target classes listed per sample, ended by the first -1). Both compare
// every target class's score with every other class's score and average over the classes.
#include "nn.h"
#include "onnxport/helpers.h"

namespace onnxport::nn {
namespace {

using namespace helpers;

// 0, 1, ..., C-1 for the class dim of a (N, C) input, shaped [1, C].
Value* class_indices(Graph& g, int64_t classes) {
  std::vector<int64_t> all(static_cast<size_t>(classes));
  for (int64_t c = 0; c < classes; ++c) all[static_cast<size_t>(c)] = c;
  return unsqueeze(g, g.constant_ints(all), {0});
}

int64_t static_classes(const TorchNode& n, Value* x) {
  auto classes = static_dim(x, 1);
  if (!classes) throw ArgumentError(n.kind + ": needs a static class count (dim 1), got " + x->describe());
  return *classes;
}

// The loss per sample of a (N, C) input; unbatched (C) input is given a batch dim first.
template <class PerSample>
Value* per_sample_loss(Graph& g, const TorchNode& n, Value* x, Value* target, const std::string& reduction,
                       size_t target_rank_batched, PerSample build) {
  const bool unbatched = x->rank() == std::optional<int64_t>(1);
  if (unbatched) {
    x = unsqueeze(g, x, {0});
    target = target->rank() == std::optional<int64_t>(target_rank_batched) ? target : unsqueeze(g, target, {0});
  }
  Value* loss = build(x, cast(g, target, DType::Int64), static_classes(n, x));
  if (unbatched && reduction == "none") loss = squeeze(g, loss, {0});
  return reduce_loss(g, loss, reduction);
}

// multi_margin_loss(self, target, p=1, margin=1, weight=None, reduction=mean):
// sum over j != y of w_y * max(0, margin - x_y + x_j)^p, divided by C.
Value* multi_margin(Graph& g, const TorchNode& n, const Args& a) {
  const int64_t p = a.size() > 2 && !a.is_none(2) ? a.i(2) : 1;
  if (p != 1 && p != 2) a.fail(2, "p = 1 or 2");
  const double margin = a.size() > 3 && !a.is_none(3) ? a.f(3) : 1.0;
  Value* weight = a.size() > 4 ? a.optional_tensor(4) : nullptr;
  return per_sample_loss(
      g, n, a.tensor(0), a.tensor(1), reduction_name(a, 5), 1, [&](Value* x, Value* target, int64_t classes) {
        Value* y = unsqueeze(g, target, {1});  // [N, 1]
        Value* x_y = g.op("GatherElements", {x, y}, {{"axis_i", 1}});
        Value* terms = g.op("Relu", {g.op("Add", {g.op("Sub", {scalar_like(g, margin, x), x_y}), x})});
        if (p == 2) terms = g.op("Mul", {terms, terms});
        if (weight) terms = g.op("Mul", {terms, gather(g, weight, y, 0)});
        Value* is_target = g.op("Equal", {class_indices(g, classes), y});
        terms = g.op("Where", {is_target, scalar_like(g, 0.0, x), terms});
        return g.op("Div",
                    {reduce(g, "ReduceSum", terms, {1}, false), scalar_like(g, static_cast<double>(classes), x)});
      });
}

// multilabel_margin_loss(self, target, reduction): for the target classes j (target's entries
// before its first -1) and the other classes k: sum of max(0, 1 - (x_j - x_k)), divided by C.
Value* multilabel_margin(Graph& g, const TorchNode& n, const Args& a) {
  return per_sample_loss(
      g, n, a.tensor(0), a.tensor(1), reduction_name(a, 2), 2, [&](Value* x, Value* target, int64_t classes) {
        Value* ended = cast(g, g.op("Equal", {target, g.constant_int(-1)}), DType::Int64);
        Value* listed = g.op("Equal", {g.op("CumSum", {ended, g.constant_int(1)}), g.constant_int(0)});  // [N, T]
        Value* safe = g.op("Where", {listed, target, g.constant_int(0)});
        // [N, T, C]: class c is the t-th listed target.
        Value* hits =
            g.op("And", {g.op("Equal", {unsqueeze(g, safe, {2}), unsqueeze(g, class_indices(g, classes), {0})}),
                         unsqueeze(g, listed, {2})});
        Value* is_target = cast(g, reduce(g, "ReduceMax", cast(g, hits, DType::Int32), {1}, false), DType::Bool);
        Value* x_j = g.op("GatherElements", {x, safe}, {{"axis_i", 1}});  // [N, T]
        Value* margins =
            g.op("Relu",
                 {g.op("Sub", {scalar_like(g, 1.0, x), g.op("Sub", {unsqueeze(g, x_j, {2}), unsqueeze(g, x, {1})})})});
        Value* counted = g.op("And", {unsqueeze(g, listed, {2}), g.op("Not", {unsqueeze(g, is_target, {1})})});
        Value* terms = g.op("Where", {counted, margins, scalar_like(g, 0.0, x)});
        return g.op("Div",
                    {reduce(g, "ReduceSum", terms, {1, 2}, false), scalar_like(g, static_cast<double>(classes), x)});
      });
}

}  // namespace

void add_margin_loss(Registrar& r) {
  r.add("aten::multi_margin_loss", 11, multi_margin);
  r.add("aten::multilabel_margin_loss", 11, multilabel_margin);
}

}  // namespace onnxport::nn
