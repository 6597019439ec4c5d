#include <unordered_map>
#include <unordered_set>

#include "2_eval/fold_kernels.h"
#include "3_export/5_passes/passes.h"
#include "1_base/torch_tensors.h"

namespace onnxport::core {

namespace {

struct ConvBn {
  onnx::NodeProto* conv;
  const onnx::NodeProto* bn;
  const Initializer *weight, *bias;  // bias may be null
  const Initializer *scale, *shift, *mean, *var;
  double epsilon = 1e-5;
};

// The Conv feeding BatchNormalization node `i`, when the two can become one Conv: the Conv's
// only reader is the BN, its weight and bias are initializers only it reads, the statistics are
// initializers and the BN is in inference mode.
std::optional<ConvBn> fusable_pair(OnnxModel& model, size_t i, const ValueUses& uses) {
  const auto& bn = model.nodes[i].proto;
  if (!bn.domain().empty() || bn.op_type() != "BatchNormalization" || bn.output_size() != 1) return std::nullopt;
  auto p = uses.producer.find(bn.input(0));
  if (p == uses.producer.end()) return std::nullopt;
  auto& conv = model.nodes[p->second].proto;
  if (conv.op_type() != "Conv" || !conv.domain().empty() || uses.count(conv.output(0)) != 1) return std::nullopt;
  ConvBn pair{&conv, &bn};
  const bool has_bias = conv.input_size() > 2 && !conv.input(2).empty();
  pair.weight = conv.input_size() > 1 ? find_initializer(model, conv.input(1)) : nullptr;
  pair.bias = has_bias ? find_initializer(model, conv.input(2)) : nullptr;
  if (!pair.weight || uses.count(pair.weight->name) != 1 ||
      (has_bias && (!pair.bias || uses.count(pair.bias->name) != 1)))
    return std::nullopt;
  pair.scale = find_initializer(model, bn.input(1));
  pair.shift = find_initializer(model, bn.input(2));
  pair.mean = find_initializer(model, bn.input(3));
  pair.var = find_initializer(model, bn.input(4));
  if (!pair.scale || !pair.shift || !pair.mean || !pair.var || !is_floating(pair.weight->tensor.dtype()))
    return std::nullopt;
  for (const auto& a : bn.attribute()) {
    if (a.name() == "epsilon") pair.epsilon = a.f();
    if (a.name() == "training_mode" && a.i() != 0) return std::nullopt;
  }
  return pair;
}

// y = scale * (conv(x) - mean) / sqrt(var + eps) + shift
//   = conv'(x) with W' = W * k (per output channel), b' = (b - mean) * k + shift
std::pair<Tensor, Tensor> fused_weight_and_bias(const ConvBn& pair) {
  at::Tensor k = to_aten(pair.scale->tensor) / at::sqrt(to_aten(pair.var->tensor) + pair.epsilon);
  at::Tensor w = to_aten(pair.weight->tensor);
  std::vector<int64_t> per_channel(static_cast<size_t>(w.dim()), 1);
  per_channel[0] = -1;
  at::Tensor new_w = (w * k.reshape(per_channel)).to(w.scalar_type());
  at::Tensor old_b = pair.bias ? to_aten(pair.bias->tensor) : at::zeros_like(k);
  at::Tensor new_b = ((old_b - to_aten(pair.mean->tensor)) * k + to_aten(pair.shift->tensor)).to(w.scalar_type());
  return {borrow_tensor(new_w), borrow_tensor(new_b)};
}

}  // namespace

size_t fuse_conv_batchnorm(OnnxModel& model) {
  const ValueUses uses(model);
  std::vector<bool> drop(model.nodes.size(), false);
  std::vector<Initializer> added;
  std::unordered_set<std::string> replaced;  // initializers rewritten in place (by name)
  for (size_t i = 0; i < model.nodes.size(); ++i) {
    const auto pair = fusable_pair(model, i, uses);
    if (!pair) continue;
    auto [weight, bias] = fused_weight_and_bias(*pair);
    // The fused tensors keep the conv's parameter names.
    const std::string w_name = pair->weight->name;
    const std::string b_name =
        pair->bias ? pair->bias->name
                   : bias_name_for(pair->weight->name, pair->bn->output(0) + "_fused_bias", model, uses);
    replaced.insert(w_name);
    if (pair->bias) replaced.insert(b_name);
    added.push_back(Initializer{w_name, std::move(weight)});
    added.push_back(Initializer{b_name, std::move(bias)});
    onnx::NodeProto& conv = *pair->conv;
    while (conv.input_size() < 3) conv.add_input("");
    conv.set_input(2, b_name);
    conv.set_output(0, pair->bn->output(0));
    drop[i] = true;
  }
  const size_t fused = added.size() / 2;
  if (fused > 0) apply_rewrite(model, drop, replaced, std::move(added));
  return fused;
}

}  // namespace onnxport::core
