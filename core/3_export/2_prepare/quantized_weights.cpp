#include "3_export/2_prepare/quantized_weights.h"

#include <map>
#include <optional>
#include <set>

#include "onnxport/errors.h"
#include "3_export/2_prepare/torch_graph.h"

namespace onnxport::core {
namespace {

using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;
using NameMap = std::unordered_map<const void*, std::string>;

enum class Kind { QuantizedTensor, PackedConv, PackedLinear };

std::optional<Kind> kind_of(const Node* n) {
  const auto& type = n->output()->type();
  if (auto tensor = type->cast<c10::TensorType>()) {
    auto iv = torch::jit::toIValue(n->output());
    if (iv && iv->isTensor() && iv->toTensor().is_quantized()) return Kind::QuantizedTensor;
    return std::nullopt;
  }
  auto cls = type->cast<c10::ClassType>();
  if (!cls || !cls->name()) return std::nullopt;
  const std::string name = cls->name()->qualifiedName();
  if (name == "__torch__.torch.classes.quantized.Conv2dPackedParamsBase" ||
      name == "__torch__.torch.classes.quantized.Conv3dPackedParamsBase")
    return Kind::PackedConv;
  if (name == "__torch__.torch.classes.quantized.LinearPackedParamsBase") return Kind::PackedLinear;
  return std::nullopt;
}

// "self.features.0._packed_params._packed_params" -> "features.0" (freezing names constants
// after the attribute chain they replaced).
std::string module_of_packed(const std::string& debug_name) {
  const std::string self = "self.", suffix = "._packed_params";
  if (debug_name.rfind(self, 0) != 0) return "";
  std::string s = debug_name.substr(self.size());
  bool stripped = false;
  while (s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0) {
    s.resize(s.size() - suffix.size());
    stripped = true;
  }
  return stripped && s != "_packed_params" ? s : "";
}

// One quantized constant and what reads it.
struct QuantizedConstant {
  Node* node;
  Kind kind;
  const Node* first_user = nullptr;  // for error contexts, module paths and call stacks
  std::set<std::string> user_kinds;
  std::string name;  // packed: the module ("features.0"); tensor: its own name ("emb.weight"); or ""

  ErrorContext context(const std::string& hint) const {
    ErrorContext ec;
    if (first_user) {
      ec.torch_op = first_user->kind().toQualString();
      ec.module_path = module_path_of(first_user);
      ec.source = source_of(first_user);
    }
    if (ec.module_path.empty()) ec.module_path = name;
    ec.hint = hint;
    return ec;
  }
};

QuantizedConstant describe(Node* n, Kind kind, const NameMap& names) {
  QuantizedConstant c{n, kind};
  for (const auto& use : n->output()->uses()) {
    if (!c.first_user) c.first_user = use.user;
    c.user_kinds.insert(use.user->kind().toQualString());
  }
  if (kind != Kind::QuantizedTensor) {
    c.name = module_of_packed(n->output()->debugName());
  } else if (auto it = names.find(n->t(c10::attr::value).data_ptr()); it != names.end()) {
    c.name = it->second;
  }
  return c;
}

// quantized::conv1d* pack their weights as 2-d convolutions with a leading kernel dim of 1.
bool read_as_conv1d(const QuantizedConstant& c) {
  static const std::set<std::string> conv1d{"quantized::conv1d", "quantized::conv1d_relu",
                                            "quantized::conv_transpose1d"};
  size_t n1d = 0;
  for (const auto& k : c.user_kinds) n1d += conv1d.count(k);
  if (n1d != 0 && n1d != c.user_kinds.size())
    throw ModelError("one prepacked weight is read by both 1-d and 2-d quantized convolutions",
                     c.context("give each quantized convolution module its own weights"));
  return n1d != 0;
}

c10::IValue call(const QuantizedConstant& c, const std::string& method) {
  try {
    return torch::jit::Object(torch::jit::toIValue(c.node->output())->toObject()).run_method(method);
  } catch (const c10::Error& e) {
    throw ModelError("unpacking the quantized weights (" + method + "()) failed: " + e.what_without_backtrace(),
                     c.context("check that the model was quantized with an engine this libtorch supports "
                               "(torch.backends.quantized.supported_engines)"));
  }
}

class Rebuilder {
 public:
  Rebuilder(Graph& g, NameMap& names) : graph_(g), names_(names) {
    for (const auto& entry : names_) used_names_.insert(entry.second);
  }

  void rebuild(const QuantizedConstant& c) {
    torch::jit::WithInsertPoint guard(c.node);
    Value* replacement = nullptr;
    if (c.kind == Kind::QuantizedTensor) {
      // The int data takes over the quantized tensor's name (the old constant goes away).
      replacement = quantized_tensor(c, c.node->t(c10::attr::value), c.name);
    } else {
      replacement = packed(c);
    }
    c.node->output()->replaceAllUsesWith(replacement);
    c.node->destroy();
  }

 private:
  // The unpacked weights rebuilt through the prepack op that makes such an object.
  Value* packed(const QuantizedConstant& c) {
    const auto unpacked = call(c, "unpack").toTuple();
    at::Tensor weight = unpacked->elements().at(0).toTensor();
    const c10::IValue& bias_iv = unpacked->elements().at(1);
    if (!weight.is_quantized())
      throw UnsupportedOpError("the prepacked weights are " + std::string(c10::toString(weight.scalar_type())) +
                                   ", not int8-quantized (e.g. from linear_prepack_fp16)",
                               c.context("quantize the model with an int8 qconfig, or export the float model"));
    const bool conv1d = c.kind == Kind::PackedConv && read_as_conv1d(c);
    if (conv1d) weight = weight.squeeze(2);
    Value* w = quantized_tensor(c, weight, leaf(c, "weight"));
    Value* bias =
        bias_iv.isTensor() ? constant(bias_iv.toTensor(), leaf(c, "bias")) : graph_.insertConstant(c10::IValue());
    if (c.kind == Kind::PackedLinear) return insert(c, "quantized::linear_prepack", {w, bias});
    return conv_prepack(c, w, bias, weight.dim() - 2, conv1d);
  }

  std::string unique(const std::string& name) { return !name.empty() && used_names_.insert(name).second ? name : ""; }
  std::string leaf(const QuantizedConstant& c, const std::string& leaf) {
    return c.name.empty() ? "" : unique(c.name + "." + leaf);
  }

  Value* constant(const at::Tensor& t, const std::string& name) {
    Value* v = graph_.insertConstant(t.detach());  // constants must not require grad
    if (!name.empty()) names_.emplace(v->node()->t(c10::attr::value).data_ptr(), name);
    return v;
  }

  // The node's call stack and source range come from the op that reads the constant, so the
  // new nodes get its module path.
  Value* insert(const QuantizedConstant& c, const std::string& op, std::vector<torch::jit::NamedValue> args) {
    Value* out = graph_.insert(c10::Symbol::fromQualString(op), args);
    if (c.first_user) {
      if (auto cs = c.first_user->callstack()) out->node()->setCallStack(*cs);
      out->node()->setSourceRange(c.first_user->sourceRange());
    }
    return out;
  }

  // The integer data plus its quantization parameters, made quantized again in-graph.
  Value* quantized_tensor(const QuantizedConstant& c, const at::Tensor& q, const std::string& name) {
    Value* data = constant(q.int_repr().contiguous(), name);
    switch (q.qscheme()) {
      case at::kPerTensorAffine:
      case at::kPerTensorSymmetric:
        return insert(c, "aten::_make_per_tensor_quantized_tensor", {data, q.q_scale(), q.q_zero_point()});
      case at::kPerChannelAffine:
      case at::kPerChannelSymmetric:
        return insert(c, "aten::_make_per_channel_quantized_tensor",
                      {data, constant(q.q_per_channel_scales().contiguous(), ""),
                       constant(q.q_per_channel_zero_points().contiguous(), ""), q.q_per_channel_axis()});
      default:
        throw UnsupportedOpError(std::string("a quantized constant with quantization scheme ") +
                                     c10::toString(q.qscheme()) + " cannot be exported",
                                 c.context("quantize per tensor or per channel with integer zero points"));
    }
  }

  Value* conv_prepack(const QuantizedConstant& c, Value* w, Value* bias, int64_t spatial, bool conv1d) {
    auto ints = [&](const char* method) {
      auto v = call(c, method).toIntVector();
      if (conv1d && !v.empty()) v.erase(v.begin());  // the leading dummy dim of 1-d convs
      return v;
    };
    const auto stride = ints("stride"), padding = ints("padding"), dilation = ints("dilation");
    const int64_t groups = call(c, "groups").toInt();
    const std::string nd = std::to_string(spatial) + "d_prepack";
    if (call(c, "transpose").toBool())
      return insert(c, "quantized::conv_transpose" + nd,
                    {w, bias, stride, padding, ints("output_padding"), dilation, groups});
    return insert(c, "quantized::conv" + nd, {w, bias, stride, padding, dilation, groups});
  }

  Graph& graph_;
  NameMap& names_;
  std::set<std::string> used_names_;
};

// ---------------------------------------------------------------- float ops on quantized tensors

// aten ops PyTorch runs on quantized activations, keeping the input's scale and zero point
// (torch.onnx's `quantized_args` ops): exported as DequantizeLinear -> float op ->
// QuantizeLinear with the input's parameters.
const std::set<std::string>& keeps_qparams() {
  static const std::set<std::string> ops{"aten::max_pool1d",
                                         "aten::max_pool2d",
                                         "aten::max_pool3d",
                                         "aten::avg_pool1d",
                                         "aten::avg_pool2d",
                                         "aten::avg_pool3d",
                                         "aten::adaptive_avg_pool1d",
                                         "aten::adaptive_avg_pool2d",
                                         "aten::adaptive_avg_pool3d",
                                         "aten::relu",
                                         "aten::relu_",
                                         "aten::leaky_relu",
                                         "aten::leaky_relu_",
                                         "aten::expand",
                                         "aten::as_strided",
                                         "aten::hardtanh",
                                         "aten::hardtanh_",
                                         "aten::clamp",
                                         "aten::flatten",
                                         "aten::reshape",
                                         "aten::view",
                                         "aten::permute",
                                         "aten::transpose",
                                         "aten::squeeze",
                                         "aten::unsqueeze",
                                         "aten::contiguous",
                                         "aten::select",
                                         "aten::slice",
                                         "aten::mean",
                                         "aten::upsample_nearest1d",
                                         "aten::upsample_nearest2d",
                                         "aten::upsample_nearest3d",
                                         "aten::upsample_bilinear2d"};
  return ops;
}

// aten ops whose quantized kernels give their output fixed parameters, whatever the input's
// (scale, zero point), as torch.onnx's symbolics take them (quint8 ranges).
const std::map<std::string, std::pair<double, int64_t>>& fixed_qparams() {
  static const std::map<std::string, std::pair<double, int64_t>> ops{
      {"aten::sigmoid", {1.0 / 256.0, 0}},
      {"aten::hardsigmoid", {1.0 / 256.0, 0}},
      {"aten::tanh", {2.0 / 256.0, 128}},
  };
  return ops;
}

// Ops that only read a quantized tensor's shape: they get the dequantized tensor.
const std::set<std::string>& reads_shape() {
  static const std::set<std::string> ops{"aten::size", "aten::dim", "aten::numel", "aten::len"};
  return ops;
}

bool makes_quantized_activation(const Node* n) {
  const std::string kind = n->kind().toQualString();
  if (kind.rfind("quantized::", 0) != 0) return false;
  if (kind.find("_prepack") != std::string::npos || kind.find("_unpack") != std::string::npos) return false;
  return n->outputs().size() == 1 && n->output()->type()->kind() == c10::TypeKind::TensorType;
}

std::optional<int64_t> constant_int(const Value* v) {
  auto iv = torch::jit::toIValue(v);
  if (iv && iv->isInt()) return iv->toInt();
  return std::nullopt;
}

// The quantized dtype (c10::ScalarType) whose integer data `data` holds: quint8 for uint8, qint8
// for int8.
std::optional<int64_t> quantized_dtype_of_data(const Value* data) {
  const auto type = data->type()->cast<c10::TensorType>();
  const auto scalar = type ? type->scalarType() : c10::nullopt;
  if (scalar == at::kByte) return static_cast<int64_t>(at::kQUInt8);
  if (scalar == at::kChar) return static_cast<int64_t>(at::kQInt8);
  return std::nullopt;
}

// Rewrites the float ops that read per-tensor quantized activations, following the quantized
// dtype (c10::ScalarType) of each activation from where it is made.
class ActivationRewriter {
 public:
  explicit ActivationRewriter(Graph& g) : graph_(g) {}

  void run() { rewrite(graph_.block()); }

 private:
  // Nodes in branches too (scripted F.interpolate calls upsample_* inside an If); a branch
  // output quantized alike in every branch makes the If's output quantized.
  void rewrite(torch::jit::Block* block) {
    for (auto it = block->nodes().begin(); it != block->nodes().end(); ++it) {
      Node* n = *it;
      const std::string kind = n->kind().toQualString();
      for (auto* b : n->blocks()) rewrite(b);
      if (n->kind() == c10::prim::If) mark_quantized_branch_outputs(n);
      if (kind == "aten::quantize_per_tensor") {
        if (auto dtype = constant_int(n->input(3))) qdtype_[n->output()] = *dtype;
      } else if (kind == "aten::_make_per_tensor_quantized_tensor") {  // a quantized graph input, rebuilt
        if (auto dtype = quantized_dtype_of_data(n->input(0))) qdtype_[n->output()] = *dtype;
      } else if (makes_quantized_activation(n)) {
        if (auto dtype = first_quantized_input(n)) qdtype_[n->output()] = *dtype;
      } else if (keeps_qparams().count(kind) && qdtype_.count(n->input(0)) && n->outputs().size() == 1) {
        it = requantize(n, std::nullopt);
      } else if (fixed_qparams().count(kind) && qdtype_.count(n->input(0)) && n->outputs().size() == 1) {
        it = requantize(n, fixed_qparams().at(kind));
      } else if (reads_shape().count(kind)) {
        for (size_t i = 0; i < n->inputs().size(); ++i)
          if (qdtype_.count(n->input(i))) n->replaceInput(i, dequantized(n, n->input(i)));
      }
    }
  }

  void mark_quantized_branch_outputs(const Node* n) {
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      std::optional<int64_t> dtype;
      bool all = true;
      for (const auto* b : n->blocks()) {
        auto it = qdtype_.find(b->outputs()[i]);
        all = all && it != qdtype_.end() && (!dtype || *dtype == it->second);
        if (it != qdtype_.end()) dtype = it->second;
      }
      if (all && dtype) qdtype_[n->outputs()[i]] = *dtype;
    }
  }

  // The dtype of the op's first quantized input (for quantized::cat, of its list's first element).
  std::optional<int64_t> first_quantized_input(const Node* n) const {
    for (const Value* in : n->inputs()) {
      if (auto it = qdtype_.find(in); it != qdtype_.end()) return it->second;
      if (in->node()->kind() == c10::prim::ListConstruct && in->node()->inputs().size() > 0)
        if (auto it = qdtype_.find(in->node()->input(0)); it != qdtype_.end()) return it->second;
    }
    return std::nullopt;
  }

  Value* insert_like(const Node* origin, const char* op, std::vector<torch::jit::NamedValue> args) {
    Value* out = graph_.insert(c10::Symbol::fromQualString(op), args);
    if (auto cs = origin->callstack()) out->node()->setCallStack(*cs);
    out->node()->setSourceRange(origin->sourceRange());
    return out;
  }

  Value* dequantized(const Node* n, Value* q) {
    torch::jit::WithInsertPoint guard(const_cast<Node*>(n));
    return insert_like(n, "aten::dequantize", {q});
  }

  // n(q, ...) -> quantize_per_tensor(n(dequantize(q), ...), scale, zero_point, dtype) with q's
  // scale and zero point, or the op's `fixed` ones; returns the iterator of the new quantize node,
  // where the walk continues.
  torch::jit::graph_node_list::iterator requantize(Node* n, std::optional<std::pair<double, int64_t>> fixed) {
    Value* q = n->input(0);
    const int64_t dtype = qdtype_.at(q);
    Value *scale, *zero_point;
    {
      torch::jit::WithInsertPoint guard(n);
      scale = fixed ? graph_.insertConstant(fixed->first) : insert_like(n, "aten::q_scale", {q});
      zero_point = fixed ? graph_.insertConstant(fixed->second) : insert_like(n, "aten::q_zero_point", {q});
      n->replaceInput(0, insert_like(n, "aten::dequantize", {q}));
    }
    torch::jit::WithInsertPoint guard(n->next());
    Value* requantized = insert_like(n, "aten::quantize_per_tensor", {n->output(), scale, zero_point, dtype});
    n->output()->replaceAllUsesAfterNodeWith(requantized->node(), requantized);
    qdtype_[requantized] = dtype;
    return requantized->node()->iterator();
  }

  Graph& graph_;
  std::unordered_map<const Value*, int64_t> qdtype_;
};

}  // namespace

void prepare_quantized_graph(Graph& graph, NameMap& tensor_names) {
  std::vector<QuantizedConstant> found;
  for (Node* n : graph.nodes())
    if (n->kind() == c10::prim::Constant)
      if (auto kind = kind_of(n)) found.push_back(describe(n, *kind, tensor_names));
  Rebuilder rebuilder(graph, tensor_names);
  for (const auto& c : found) rebuilder.rebuild(c);
  ActivationRewriter(graph).run();
}

}  // namespace onnxport::core
