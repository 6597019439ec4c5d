#include "nn.h"
#include "onnxport/helpers.h"

namespace onnxport::nn {

bool flag(const Args& a, size_t i, bool fallback) { return a.is_none(i) ? fallback : a.b(i); }

std::string reduction_name(const Args& a, size_t i) {
  const int64_t r = a.is_none(i) ? 1 : a.i(i);
  if (r == 0) return "none";
  if (r == 1) return "mean";
  if (r == 2) return "sum";
  a.fail(i, "reduction 0 (none), 1 (mean) or 2 (sum)");
}

Value* reduce_loss(Graph& g, Value* loss, const std::string& reduction) {
  if (reduction == "mean") return helpers::reduce(g, "ReduceMean", loss, {}, false);
  if (reduction == "sum") return helpers::reduce(g, "ReduceSum", loss, {}, false);
  return loss;
}

std::vector<int64_t> per_dim(const Args& a, size_t i, size_t n, int64_t fallback) {
  if (a.is_none(i)) return std::vector<int64_t>(n, fallback);
  std::vector<int64_t> v = a.is(i);
  if (v.empty()) return std::vector<int64_t>(n, fallback);
  if (v.size() == 1 && n > 1) return std::vector<int64_t>(n, v[0]);
  if (v.size() != n)
    a.fail(i, "a list of " + std::to_string(n) + " ints (one per spatial dim), got " + std::to_string(v.size()));
  return v;
}

Value* with_batch_dim(Graph& g, Value* x, size_t n_spatial, const std::function<Value*(Value*)>& build) {
  const auto rank = x->rank();
  if (!rank || *rank != static_cast<int64_t>(n_spatial) + 1) return build(x);
  return helpers::squeeze(g, build(helpers::unsqueeze(g, x, {0})), {0});
}

}  // namespace onnxport::nn
