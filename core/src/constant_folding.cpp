#include "constant_folding.h"

#include <ATen/ATen.h>

#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "torch_graph.h"

namespace onnxport::core {

namespace {

using ConstMap = std::unordered_map<std::string, at::Tensor>;

at::Tensor to_aten(const Tensor& t) {
  // Borrowed view: the model keeps the Tensor alive for the duration of the pass.
  return at::from_blob(const_cast<void*>(t.data()), t.shape(),
                       at::TensorOptions().dtype(scalar_type_of(t.dtype())));
}

const onnx::AttributeProto* attr(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::vector<int64_t> ints_of(const at::Tensor& t) {
  auto c = t.to(at::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

int64_t norm_axis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

// Axes from the attribute (before `input_from`) or from input 1.
std::optional<std::vector<int64_t>> axes_of(const onnx::NodeProto& n, const std::vector<at::Tensor>& in, int opset,
                                            int input_from) {
  if (opset >= input_from) {
    if (in.size() > 1 && in[1].defined()) return ints_of(in[1]);
    return std::nullopt;
  }
  if (const auto* a = attr(n, "axes")) return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  return std::nullopt;
}

using Folder = std::function<std::optional<at::Tensor>(const onnx::NodeProto&, const std::vector<at::Tensor>&, int)>;

const std::unordered_map<std::string, Folder>& folders() {
  static const std::unordered_map<std::string, Folder> table = {
      {"Identity", [](auto&, auto& in, int) { return std::optional<at::Tensor>(in[0]); }},
      {"Cast",
       [](const onnx::NodeProto& n, auto& in, int) -> std::optional<at::Tensor> {
         const auto* to = attr(n, "to");
         if (!to) return std::nullopt;
         return in[0].to(scalar_type_of(static_cast<DType>(to->i())));
       }},
      {"Transpose",
       [](const onnx::NodeProto& n, auto& in, int) -> std::optional<at::Tensor> {
         std::vector<int64_t> perm;
         if (const auto* p = attr(n, "perm")) perm.assign(p->ints().begin(), p->ints().end());
         else
           for (int64_t i = in[0].dim() - 1; i >= 0; --i) perm.push_back(i);
         return in[0].permute(perm).contiguous();
       }},
      {"Unsqueeze",
       [](const onnx::NodeProto& n, auto& in, int opset) -> std::optional<at::Tensor> {
         auto axes = axes_of(n, in, opset, 13);
         if (!axes) return std::nullopt;
         const int64_t out_rank = in[0].dim() + static_cast<int64_t>(axes->size());
         for (auto& a : *axes) a = norm_axis(a, out_rank);
         std::sort(axes->begin(), axes->end());
         at::Tensor t = in[0];
         for (int64_t a : *axes) t = t.unsqueeze(a);
         return t;
       }},
      {"Squeeze",
       [](const onnx::NodeProto& n, auto& in, int opset) -> std::optional<at::Tensor> {
         auto axes = axes_of(n, in, opset, 13);
         if (!axes) return in[0].squeeze();
         for (auto& a : *axes) a = norm_axis(a, in[0].dim());
         std::sort(axes->rbegin(), axes->rend());
         at::Tensor t = in[0];
         for (int64_t a : *axes) t = t.squeeze(a);
         return t;
       }},
      {"Concat",
       [](const onnx::NodeProto& n, auto& in, int) -> std::optional<at::Tensor> {
         const auto* axis = attr(n, "axis");
         if (!axis) return std::nullopt;
         return at::cat(in, axis->i());
       }},
      {"Reshape",
       [](const onnx::NodeProto& n, auto& in, int) -> std::optional<at::Tensor> {
         auto shape = ints_of(in[1]);
         const auto* allowzero = attr(n, "allowzero");
         for (size_t i = 0; i < shape.size(); ++i)
           if (shape[i] == 0 && !(allowzero && allowzero->i())) shape[i] = in[0].size(static_cast<int64_t>(i));
         return in[0].reshape(shape).contiguous();
       }},
      {"Slice",
       [](const onnx::NodeProto& n, auto& in, int opset) -> std::optional<at::Tensor> {
         std::vector<int64_t> starts, ends, axes, steps;
         if (opset >= 10) {
           starts = ints_of(in[1]);
           ends = ints_of(in[2]);
           if (in.size() > 3 && in[3].defined()) axes = ints_of(in[3]);
           if (in.size() > 4 && in[4].defined()) steps = ints_of(in[4]);
         } else {
           if (auto* a = attr(n, "starts")) starts.assign(a->ints().begin(), a->ints().end());
           if (auto* a = attr(n, "ends")) ends.assign(a->ints().begin(), a->ints().end());
           if (auto* a = attr(n, "axes")) axes.assign(a->ints().begin(), a->ints().end());
         }
         if (axes.empty())
           for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
         if (steps.empty()) steps.assign(starts.size(), 1);
         at::Tensor t = in[0];
         for (size_t i = 0; i < axes.size(); ++i) {
           if (steps[i] <= 0) return std::nullopt;  // negative steps: leave to the runtime
           const int64_t dim = norm_axis(axes[i], t.dim());
           const int64_t size = t.size(dim);
           auto clampi = [size](int64_t v) { return std::max<int64_t>(0, std::min(v < 0 ? v + size : v, size)); };
           const int64_t s = clampi(starts[i]), e = clampi(ends[i]);
           t = e > s ? t.slice(dim, s, e, steps[i]) : t.slice(dim, 0, 0);
         }
         return t.contiguous();
       }},
      {"Gather",
       [](const onnx::NodeProto& n, auto& in, int) -> std::optional<at::Tensor> {
         const auto* a = attr(n, "axis");
         const int64_t axis = norm_axis(a ? a->i() : 0, in[0].dim());
         at::Tensor idx = in[1].to(at::kLong);
         idx = at::where(idx < 0, idx + in[0].size(axis), idx);
         at::Tensor flat = in[0].index_select(axis, idx.reshape({-1}));
         std::vector<int64_t> shape(in[0].sizes().begin(), in[0].sizes().begin() + axis);
         for (int64_t d : idx.sizes()) shape.push_back(d);
         for (int64_t d = axis + 1; d < in[0].dim(); ++d) shape.push_back(in[0].size(d));
         return flat.reshape(shape).contiguous();
       }},
      {"Add", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::add(in[0], in[1])); }},
      {"Sub", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::sub(in[0], in[1])); }},
      {"Mul", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::mul(in[0], in[1])); }},
      {"Div",
       [](auto&, auto& in, int) {
         const bool integral = !at::isFloatingType(in[0].scalar_type());
         return std::optional<at::Tensor>(integral ? at::div(in[0], in[1], "trunc") : at::div(in[0], in[1]));
       }},
      {"Sqrt", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::sqrt(in[0])); }},
      {"Neg", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::neg(in[0])); }},
      // Comparisons and logic, so that flags computed from constant sizes decide branches.
      {"Equal", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::eq(in[0], in[1])); }},
      {"Less", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::lt(in[0], in[1])); }},
      {"Greater", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::gt(in[0], in[1])); }},
      {"LessOrEqual", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::le(in[0], in[1])); }},
      {"GreaterOrEqual", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::ge(in[0], in[1])); }},
      {"Max", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::maximum(in[0], in[1])); }},
      {"Min", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::minimum(in[0], in[1])); }},
      {"Not", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::logical_not(in[0])); }},
      {"And", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::logical_and(in[0], in[1])); }},
      {"Or", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::logical_or(in[0], in[1])); }},
      {"Shape",
       [](auto&, auto& in, int) {
         return std::optional<at::Tensor>(at::tensor(in[0].sizes().vec(), at::TensorOptions().dtype(at::kLong)));
       }},
  };
  return table;
}

Tensor owned_tensor(const at::Tensor& t) {
  at::Tensor c = t.contiguous();
  std::vector<uint8_t> bytes(c.nbytes());
  if (!bytes.empty()) std::memcpy(bytes.data(), c.data_ptr(), bytes.size());
  return Tensor(dtype_of(c.scalar_type()), c.sizes().vec(), std::move(bytes));
}

}  // namespace

std::optional<Tensor> fold_node(const onnx::NodeProto& node, const std::vector<Tensor>& inputs, int opset) {
  auto folder = node.domain().empty() ? folders().find(node.op_type()) : folders().end();
  if (folder == folders().end() || node.output_size() > 1) return std::nullopt;
  std::vector<at::Tensor> in;
  for (const auto& t : inputs) in.push_back(to_aten(t));
  try {
    if (auto r = folder->second(node, in, opset)) return owned_tensor(*r);
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

FoldStats fold_constants(OnnxModel& model, int opset, bool parameters_are_constant) {
  FoldStats stats;
  ConstMap consts;
  if (parameters_are_constant)
    for (const auto& init : model.initializers) consts[init.name] = to_aten(init.tensor);
  std::unordered_set<std::string> graph_outputs;
  for (const auto& out : model.outputs) graph_outputs.insert(out.name);

  std::vector<OnnxNode> kept;
  std::vector<Initializer> folded;
  kept.reserve(model.nodes.size());
  for (auto& node : model.nodes) {
    const auto& p = node.proto;
    if (p.domain().empty() && p.op_type() == "Constant" && p.attribute_size() == 1 && p.attribute(0).has_t()) {
      consts[p.output(0)] = to_aten(from_tensor_proto(p.attribute(0).t())).clone();
      kept.push_back(std::move(node));
      continue;
    }
    auto folder = p.domain().empty() ? folders().find(p.op_type()) : folders().end();
    if (folder == folders().end() || p.output_size() != 1 || graph_outputs.count(p.output(0))) {
      kept.push_back(std::move(node));
      continue;
    }
    std::vector<at::Tensor> inputs;
    bool all_constant = true;
    for (const auto& name : p.input()) {
      if (name.empty()) {
        inputs.emplace_back();
        continue;
      }
      auto c = consts.find(name);
      if (c != consts.end()) {
        inputs.push_back(c->second);
        continue;
      }
      // Shape of a value whose shape is fully static folds without its data.
      if (p.op_type() == "Shape") {
        auto t = model.value_types.find(name);
        if (t != model.value_types.end()) {
          auto shape = from_type_proto(t->second).static_shape();
          if (shape && p.attribute_size() == 0) {
            inputs.push_back(at::empty(*shape, at::TensorOptions().dtype(at::kFloat)));
            continue;
          }
        }
      }
      all_constant = false;
      break;
    }
    std::optional<at::Tensor> result;
    if (all_constant) {
      try {
        result = folder->second(p, inputs, opset);
      } catch (const std::exception&) {
        result.reset();  // leave anything ATen can't evaluate to the runtime
      }
    }
    if (!result) {
      kept.push_back(std::move(node));
      continue;
    }
    const std::string& out = p.output(0);
    Tensor t = owned_tensor(*result);
    folded.push_back(Initializer{out, t});
    consts[out] = to_aten(folded.back().tensor);
    TensorType type;
    type.dtype = t.dtype();
    std::vector<Dim> dims;
    for (int64_t d : t.shape()) dims.push_back(Dim::fixed(d));
    type.shape = dims;
    model.value_types[out] = to_type_proto(type);
    ++stats.folded_nodes;
  }
  model.nodes = std::move(kept);
  for (auto& f : folded) model.initializers.push_back(std::move(f));
  // Small folded values read better (and are what ORT expects for shape inputs) as initializers;
  // Constant nodes that are now unused disappear in dead-code elimination.
  return stats;
}

}  // namespace onnxport::core

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
