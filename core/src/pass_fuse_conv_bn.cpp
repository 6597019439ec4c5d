#include <unordered_map>
#include <unordered_set>

#include "onnx_eval.h"
#include "passes.h"

namespace onnxport::core {

namespace {
const Initializer* find_initializer(const OnnxModel& m, const std::string& name) {
  for (const auto& i : m.initializers)
    if (i.name == name) return &i;
  return nullptr;
}
}  // namespace

size_t fuse_conv_batchnorm(OnnxModel& model) {
  std::unordered_map<std::string, int> uses;
  for (const auto& n : model.nodes) {
    for (const auto& in : n.proto.input()) ++uses[in];
    for (const auto& in : captured_names(n.proto)) ++uses[in];
  }
  for (const auto& out : model.outputs) ++uses[out.name];
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < model.nodes.size(); ++i)
    for (const auto& out : model.nodes[i].proto.output()) producer[out] = i;

  std::vector<bool> drop(model.nodes.size(), false);
  std::vector<Initializer> added;
  std::unordered_set<std::string> replaced;  // initializers rewritten in place (by name)
  size_t fused = 0;
  for (size_t i = 0; i < model.nodes.size(); ++i) {
    auto& bn = model.nodes[i].proto;
    if (!bn.domain().empty() || bn.op_type() != "BatchNormalization" || bn.output_size() != 1) continue;
    auto p = producer.find(bn.input(0));
    if (p == producer.end()) continue;
    auto& conv = model.nodes[p->second].proto;
    if (conv.op_type() != "Conv" || !conv.domain().empty() || uses[conv.output(0)] != 1) continue;
    const Initializer* w = conv.input_size() > 1 ? find_initializer(model, conv.input(1)) : nullptr;
    const Initializer* b = conv.input_size() > 2 && !conv.input(2).empty() ? find_initializer(model, conv.input(2)) : nullptr;
    if (!w || uses[w->name] != 1 || (conv.input_size() > 2 && !conv.input(2).empty() && (!b || uses[b->name] != 1)))
      continue;
    const Initializer* scale = find_initializer(model, bn.input(1));
    const Initializer* shift = find_initializer(model, bn.input(2));
    const Initializer* mean = find_initializer(model, bn.input(3));
    const Initializer* var = find_initializer(model, bn.input(4));
    if (!scale || !shift || !mean || !var || !is_floating(w->tensor.dtype())) continue;
    double eps = 1e-5;
    bool training_mode = false;
    for (const auto& a : bn.attribute()) {
      if (a.name() == "epsilon") eps = a.f();
      if (a.name() == "training_mode") training_mode = a.i() != 0;
    }
    if (training_mode) continue;

    // y = scale * (conv(x) - mean) / sqrt(var + eps) + shift
    //   = conv'(x) with W' = W * k (per output channel), b' = (b - mean) * k + shift
    at::Tensor k = to_aten(scale->tensor) / at::sqrt(to_aten(var->tensor) + eps);
    at::Tensor wt = to_aten(w->tensor);
    std::vector<int64_t> kshape(static_cast<size_t>(wt.dim()), 1);
    kshape[0] = -1;
    at::Tensor new_w = (wt * k.reshape(kshape)).to(wt.scalar_type());
    at::Tensor old_b = b ? to_aten(b->tensor) : at::zeros_like(k);
    at::Tensor new_b = ((old_b - to_aten(mean->tensor)) * k + to_aten(shift->tensor)).to(wt.scalar_type());

    // Keep the conv's parameter names: the fused tensors replace them.
    const std::string w_name = w->name;
    std::string b_name = b ? b->name : "";
    if (b_name.empty()) {
      const std::string suffix = ".weight";
      b_name = w_name.size() > suffix.size() && w_name.compare(w_name.size() - suffix.size(), suffix.size(), suffix) == 0
                   ? w_name.substr(0, w_name.size() - suffix.size()) + ".bias"
                   : w_name + "_fused_bias";
      if (find_initializer(model, b_name) || uses.count(b_name)) b_name = bn.output(0) + "_fused_bias";
    }
    replaced.insert(w_name);
    if (b) replaced.insert(b_name);
    added.push_back(Initializer{w_name, owned_tensor(new_w)});
    added.push_back(Initializer{b_name, owned_tensor(new_b)});
    while (conv.input_size() < 3) conv.add_input("");
    conv.set_input(2, b_name);
    conv.set_output(0, bn.output(0));
    drop[i] = true;
    ++fused;
  }
  if (!fused) return 0;
  std::vector<OnnxNode> kept;
  for (size_t i = 0; i < model.nodes.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(model.nodes[i]));
  model.nodes = std::move(kept);
  std::vector<Initializer> inits;
  for (auto& init : model.initializers)
    if (!replaced.count(init.name)) inits.push_back(std::move(init));
  for (auto& a : added) inits.push_back(std::move(a));
  model.initializers = std::move(inits);
  return fused;
}

}  // namespace onnxport::core
