#include <future>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "1_base/huge_pages.h"
#include "2_eval/fold_kernels.h"
#include "3_export/5_passes/passes.h"
#include "1_base/torch_tensors.h"

namespace onnxport::core {

namespace {

struct ConvBn {
  onnx::NodeProto* conv;
  const onnx::NodeProto* bn;
  size_t bn_index;
  const Initializer *weight, *bias;  // bias may be null
  const Initializer *scale, *shift, *mean, *var;
  double epsilon = 1e-5;
};

// The Conv feeding BatchNormalization node `i`, when the two can become one Conv: the Conv's
// only reader is the BN, its weight and bias are initializers, the statistics are initializers
// and the BN is in inference mode. The weight and bias may have other readers (TorchScript's
// constant pooling makes one all-zero tensor serve several biases and BatchNorm means): the
// fused values are then new tensors and the other readers keep theirs.
std::optional<ConvBn> fusable_pair(OnnxModel& model, size_t i, const ValueUses& uses) {
  const auto& bn = model.nodes[i].proto;
  if (!bn.domain().empty() || bn.op_type() != "BatchNormalization" || bn.output_size() != 1 || bn.input_size() != 5)
    return std::nullopt;
  auto p = uses.producer.find(bn.input(0));
  if (p == uses.producer.end()) return std::nullopt;
  auto& conv = model.nodes[p->second].proto;
  if (conv.op_type() != "Conv" || !conv.domain().empty() || conv.output_size() != 1 ||
      uses.count(conv.output(0)) != 1)
    return std::nullopt;
  ConvBn pair{&conv, &bn, i};
  const bool has_bias = conv.input_size() > 2 && !conv.input(2).empty();
  pair.weight = conv.input_size() > 1 ? find_initializer(model, conv.input(1)) : nullptr;
  pair.bias = has_bias ? find_initializer(model, conv.input(2)) : nullptr;
  if (!pair.weight || (has_bias && !pair.bias)) return std::nullopt;
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
// W' is written into `weight_out` (the weight's shape and dtype).
at::Tensor fused_bias(const ConvBn& pair, at::Tensor weight_out) {
  at::Tensor k = to_aten(pair.scale->tensor) / at::sqrt(to_aten(pair.var->tensor) + pair.epsilon);
  at::Tensor w = to_aten(pair.weight->tensor);
  std::vector<int64_t> per_channel(static_cast<size_t>(w.dim()), 1);
  per_channel[0] = -1;
  at::mul_out(weight_out, w, k.reshape(per_channel));
  at::Tensor old_b = pair.bias ? to_aten(pair.bias->tensor) : at::zeros_like(k);
  return ((old_b - to_aten(pair.mean->tensor)) * k + to_aten(pair.shift->tensor)).to(w.scalar_type());
}

// Each pair's fused weight and bias. A weight marked in `in_place` takes its fused values in its
// own bytes, pages the process has touched already. The others are carved from one buffer on huge
// pages (huge_pages.h): most of a ResNet's are 1-9 MiB, too small to get huge pages alone, and in
// one Python process on a 2-core AMD EPYC guest resnet50's passes and write took 0.13 and 0.10 s
// with them on fresh 4 KiB pages, 0.02 and 0.02 s from the arena. Every other pair is computed on
// a second thread: the products are bound by memory and by the kernel's zeroing of their new
// pages, which the second core shares (resnet50's 53 pairs, 94 MB, in one Python process: median
// 0.032 s on one thread, 0.026 s on two).
std::vector<std::pair<Tensor, Tensor>> fused_tensors(const std::vector<ConvBn>& pairs, const std::vector<bool>& in_place) {
  size_t weight_bytes = 0;
  for (size_t i = 0; i < pairs.size(); ++i)
    if (!in_place[i]) weight_bytes += pairs[i].weight->tensor.nbytes() + HugePageArena::kAlignment;
  HugePageArena arena(weight_bytes);
  std::vector<at::Tensor> weights;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Tensor& w = pairs[i].weight->tensor;
    weights.push_back(in_place[i] ? to_aten(w) : arena.empty(w.shape(), scalar_type_of(w.dtype())));
  }
  std::vector<std::pair<Tensor, Tensor>> fused(pairs.size());
  auto compute_every_other = [&](size_t first) {
    for (size_t i = first; i < pairs.size(); i += 2) {
      at::Tensor bias = fused_bias(pairs[i], weights[i]);
      fused[i] = {borrow_tensor(weights[i]), borrow_tensor(bias)};
    }
  };
  if (pairs.size() < 2 || std::thread::hardware_concurrency() < 2) {
    compute_every_other(0);
    compute_every_other(1);
    return fused;
  }
  auto second = std::async(std::launch::async, compute_every_other, 1);
  compute_every_other(0);
  second.get();
  return fused;
}

// Whether an initializer other than `init` holds any of its bytes (two parameters may be slices of
// one storage).
bool bytes_shared(const OnnxModel& model, const Initializer& init) {
  const auto* begin = static_cast<const char*>(init.tensor.data());
  const auto* end = begin + init.tensor.nbytes();
  for (const auto& other : model.initializers) {
    const auto* b = static_cast<const char*>(other.tensor.data());
    if (&other != &init && b && b < end && begin < b + other.tensor.nbytes()) return true;
  }
  return false;
}

int reads_of(const onnx::NodeProto& node, const std::string& name) {
  int n = 0;
  for (const auto& in : node.input()) n += in == name;
  return n;
}

}  // namespace

size_t fuse_conv_batchnorm(OnnxModel& model, bool weights_private) {
  const ValueUses uses(model);
  std::vector<ConvBn> pairs;
  for (size_t i = 0; i < model.nodes.size(); ++i)
    if (auto pair = fusable_pair(model, i, uses)) pairs.push_back(*pair);
  if (pairs.empty()) return 0;

  // Readers each initializer keeps once the pairs are fused: the BatchNormalizations go and the
  // Convs read their fused tensors instead of the weights and biases they read.
  std::unordered_map<std::string, int> remaining = uses.readers;
  for (const auto& pair : pairs) {
    for (int k = 1; k < pair.bn->input_size(); ++k) --remaining[pair.bn->input(k)];
    --remaining[pair.weight->name];
    if (pair.bias) --remaining[pair.bias->name];
  }
  // A weight or bias nothing reads any more is replaced, and its name can go to a fused tensor;
  // one still read stays as it is, under its name.
  std::unordered_set<std::string> replaced;
  for (const auto& pair : pairs) {
    if (remaining[pair.weight->name] == 0) replaced.insert(pair.weight->name);
    if (pair.bias && remaining[pair.bias->name] == 0) replaced.insert(pair.bias->name);
  }
  std::unordered_set<std::string> taken = value_names(model);  // names a fused tensor must not take
  for (const auto& init : model.initializers)
    if (!replaced.count(init.name)) taken.insert(init.name);
  auto claim = [&](std::initializer_list<std::string> candidates, const std::string& fallback) {
    for (const auto& name : candidates)
      if (!name.empty() && taken.insert(name).second) return name;
    std::string name = fallback;
    for (int n = 2; !taken.insert(name).second; ++n) name = fallback + "_" + std::to_string(n);
    return name;
  };

  std::vector<bool> drop(model.nodes.size(), false);
  std::vector<Initializer> added;
  std::unordered_map<std::string, int> pairs_reading;  // two Convs may share one weight
  for (const auto& pair : pairs) ++pairs_reading[pair.weight->name];
  std::vector<bool> in_place(pairs.size(), false);
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Initializer& w = *pairs[i].weight;
    in_place[i] = weights_private && replaced.count(w.name) && pairs_reading[w.name] == 1 && !bytes_shared(model, w);
  }
  std::vector<std::pair<Tensor, Tensor>> fused = fused_tensors(pairs, in_place);
  for (size_t i = 0; i < pairs.size(); ++i) {
    const ConvBn& pair = pairs[i];
    auto& [weight, bias] = fused[i];
    // The fused tensors keep the conv's parameter names. A weight or bias the Conv shares with
    // other nodes (pooled or tied) is named after the conv's own: its other, unshared parameter
    // ("conv.bias" -> "conv.weight"), never after another module's.
    const std::string& w = pair.weight->name;
    const std::string b = pair.bias ? pair.bias->name : "";
    const bool own_w = uses.count(w) == reads_of(*pair.conv, w) + reads_of(*pair.bn, w);
    const bool own_b = pair.bias && uses.count(b) == reads_of(*pair.conv, b) + reads_of(*pair.bn, b);
    std::string module = own_w ? module_of(w, ".weight") : "";  // "conv" of "conv.weight"
    if (module.empty() && own_b) module = module_of(b, ".bias");
    const std::string from_module_w = module.empty() ? "" : module + ".weight";
    const std::string from_module_b = module.empty() ? "" : module + ".bias";
    const std::string& bn_out = pair.bn->output(0);
    const std::string w_name = claim({own_w ? w : "", from_module_w}, bn_out + "_fused_weight");
    const std::string b_name =
        claim({own_b ? b : "", from_module_b, own_w && module.empty() ? w + "_fused_bias" : ""}, bn_out + "_fused_bias");
    added.push_back(Initializer{w_name, std::move(weight)});
    added.push_back(Initializer{b_name, std::move(bias)});
    onnx::NodeProto& conv = *pair.conv;
    while (conv.input_size() < 3) conv.add_input("");
    conv.set_input(1, w_name);
    conv.set_input(2, b_name);
    conv.set_output(0, bn_out);
    drop[pair.bn_index] = true;
  }
  apply_rewrite(model, drop, replaced, std::move(added));
  return pairs.size();
}

}  // namespace onnxport::core
