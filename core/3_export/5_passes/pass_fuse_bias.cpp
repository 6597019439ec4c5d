#include <algorithm>
#include <optional>
#include <unordered_set>

#include "2_eval/fold_kernels.h"
#include "3_export/5_passes/passes.h"
#include "1_base/torch_tensors.h"

namespace onnxport::core {

namespace {

using Types = std::unordered_map<std::string, TensorType>;

// Add(v, c), Add(c, v) or Sub(v, c), where c is an initializer and v the output of a node that
// nothing else reads.
struct ConstantAdd {
  const onnx::NodeProto* add;
  size_t producer;  // index of the node making v
  const Initializer* constant;
  bool subtract;
};

std::optional<ConstantAdd> constant_add(const OnnxModel& model, const onnx::NodeProto& p, const ValueUses& uses) {
  const bool subtract = p.op_type() == "Sub";
  if (!is_standard_domain(p) || (p.op_type() != "Add" && !subtract) || p.input_size() != 2 || p.output_size() != 1)
    return std::nullopt;
  for (int v = 0; v < (subtract ? 1 : 2); ++v) {
    auto producer = uses.producer.find(p.input(v));
    const Initializer* c = find_initializer(model, p.input(1 - v));
    if (producer == uses.producer.end() || !c || uses.count(p.input(v)) != 1) continue;
    return ConstantAdd{&p, producer->second, c, subtract};
  }
  return std::nullopt;
}

std::optional<std::vector<int64_t>> static_shape_of(const Types& types, const std::string& name) {
  auto t = types.find(name);
  return t == types.end() ? std::nullopt : t->second.static_shape();
}

std::vector<int64_t> shape_of(const Tensor& t) { return *type_of_tensor(t).static_shape(); }

int64_t int_attribute(const onnx::NodeProto& p, const char* name, int64_t otherwise) {
  const auto* a = find_attribute(p, name);
  return a ? a->i() : otherwise;
}

// Whether a constant of shape `c` broadcasts into `out` (numpy rules) leaving `out`'s shape as it
// is: each of its dims is 1 or the matching dim of `out` (-1 there: unknown, so only 1 will do).
bool broadcasts_into(const std::vector<int64_t>& c, const std::vector<int64_t>& out) {
  if (c.size() > out.size()) return false;
  for (size_t j = 0; j < c.size(); ++j) {
    const int64_t d = out[j + out.size() - c.size()];
    if (c[j] != 1 && c[j] != d) return false;
  }
  return true;
}

// What a fusion adds to the model: initializers, and the names of those it rewrites in place.
struct Additions {
  std::vector<Initializer> initializers;
  std::unordered_set<std::string> replaced;
};

std::string derivation(const ConstantAdd& a, const std::string& into) {
  return "folded at export by onnxport: " + (a.subtract ? "minus " : std::string()) + a.constant->name +
         (into.empty() ? "" : " plus " + into) + ", which " + a.add->op_type() + " applied to the output";
}

// Conv or ConvTranspose + Add of a constant per output channel: the constant joins the bias.
bool fuse_into_conv(OnnxModel& model, const ConstantAdd& a, const ValueUses& uses, const Types& types,
                    Additions& additions) {
  onnx::NodeProto& conv = model.nodes[a.producer].proto;
  const bool transposed = conv.op_type() == "ConvTranspose";
  if (!is_standard_domain(conv) || (conv.op_type() != "Conv" && !transposed) || conv.input_size() < 2) return false;
  const auto w = static_shape_of(types, conv.input(1));
  if (!w || w->size() < 3) return false;
  const int64_t channels = transposed ? (*w)[1] * int_attribute(conv, "group", 1) : (*w)[0];
  std::vector<int64_t> out(w->size(), -1);  // [N, channels, spatial...]
  out[1] = channels;
  const DType dtype = types.at(conv.input(1)).dtype;
  if (a.constant->tensor.dtype() != dtype || !is_floating(dtype) || !broadcasts_into(shape_of(a.constant->tensor), out))
    return false;
  const bool has_bias = conv.input_size() > 2 && !conv.input(2).empty();
  const Initializer* old_bias = has_bias ? find_initializer(model, conv.input(2)) : nullptr;
  if (has_bias && !old_bias) return false;

  at::Tensor bias = to_aten(a.constant->tensor).reshape({-1}).expand({channels});
  if (a.subtract) bias = -bias;
  if (old_bias) bias = to_aten(old_bias->tensor) + bias;
  std::string name;
  if (old_bias && uses.count(old_bias->name) == 1) {
    name = old_bias->name;  // the conv's own bias, updated in place
    additions.replaced.insert(name);
  } else {
    name = bias_name_for(conv.input(1), a.add->output(0) + "_bias", model, uses);
  }
  additions.initializers.push_back(
      Initializer{name, borrow_tensor(bias.contiguous()), derivation(a, old_bias ? old_bias->name : "")});
  while (conv.input_size() < 3) conv.add_input("");
  conv.set_input(2, name);
  return true;
}

bool gemm_dtype(DType t) { return t == DType::Float || t == DType::Double || t == DType::Float16; }

std::vector<int64_t> dims_or_unknown(const std::vector<Dim>& shape) {
  std::vector<int64_t> dims;
  for (const auto& d : shape) dims.push_back(d.is_static() ? d.value : -1);
  return dims;
}

// The constant that becomes a Gemm's C: c, or -c under a new name.
std::string gemm_c_name(const ConstantAdd& a, Additions& additions) {
  if (!a.subtract) return a.constant->name;
  const std::string name = a.add->output(0) + "_gemm_c";
  additions.initializers.push_back(Initializer{name, borrow_tensor(-to_aten(a.constant->tensor)), derivation(a, "")});
  return name;
}

// MatMul of two 2-d values + Add of a constant that broadcasts into its [M, N] result: Gemm(A, B, c).
bool fuse_into_matmul(OnnxModel& model, const ConstantAdd& a, const Types& types, Additions& additions) {
  onnx::NodeProto& mm = model.nodes[a.producer].proto;
  if (!is_standard_domain(mm) || mm.op_type() != "MatMul") return false;
  auto lhs = types.find(mm.input(0));
  auto rhs = types.find(mm.input(1));
  if (lhs == types.end() || rhs == types.end() || lhs->second.rank() != 2 || rhs->second.rank() != 2) return false;
  const std::vector<int64_t> out{dims_or_unknown(*lhs->second.shape)[0], dims_or_unknown(*rhs->second.shape)[1]};
  const DType dtype = lhs->second.dtype;
  if (!gemm_dtype(dtype) || a.constant->tensor.dtype() != dtype || !broadcasts_into(shape_of(a.constant->tensor), out))
    return false;
  mm.set_op_type("Gemm");
  mm.add_input(gemm_c_name(a, additions));
  return true;
}

// Gemm(A, B[, C]) + Add of a constant: beta*C + c becomes the Gemm's C (and beta 1).
bool fuse_into_gemm(OnnxModel& model, const ConstantAdd& a, const Types& types, Additions& additions) {
  onnx::NodeProto& gemm = model.nodes[a.producer].proto;
  if (!is_standard_domain(gemm) || gemm.op_type() != "Gemm") return false;
  const auto y = types.find(gemm.output(0));
  const DType dtype = a.constant->tensor.dtype();
  if (y == types.end() || y->second.rank() != 2 || !gemm_dtype(dtype) || y->second.dtype != dtype) return false;
  const bool has_c = gemm.input_size() > 2 && !gemm.input(2).empty();
  const Initializer* old_c = has_c ? find_initializer(model, gemm.input(2)) : nullptr;
  if (has_c && !old_c) return false;
  if (!old_c) {
    if (!broadcasts_into(shape_of(a.constant->tensor), dims_or_unknown(*y->second.shape))) return false;
    while (gemm.input_size() < 3) gemm.add_input("");
    gemm.set_input(2, gemm_c_name(a, additions));
  } else {
    const auto* beta = find_attribute(gemm, "beta");
    at::Tensor c = to_aten(a.constant->tensor);
    c = to_aten(old_c->tensor) * (beta ? beta->f() : 1.0f) + (a.subtract ? -c : c);
    const std::vector<int64_t> c_shape(c.sizes().begin(), c.sizes().end());
    if (!broadcasts_into(c_shape, dims_or_unknown(*y->second.shape))) return false;
    const std::string name = a.add->output(0) + "_gemm_c";
    additions.initializers.push_back(
        Initializer{name, borrow_tensor(c.contiguous()), derivation(a, "beta * " + old_c->name)});
    gemm.set_input(2, name);
  }
  for (int i = 0; i < gemm.attribute_size(); ++i)
    if (gemm.attribute(i).name() == "beta") gemm.mutable_attribute(i)->set_f(1.0f);
  return true;
}

// One sweep; an Add after an Add fused in this sweep (Conv -> Add -> Add) waits for the next.
size_t fuse_once(OnnxModel& model) {
  const ValueUses uses(model);
  const Types types = known_types(model);
  std::vector<bool> drop(model.nodes.size(), false);
  Additions additions;
  for (size_t i = 0; i < model.nodes.size(); ++i) {
    const auto a = constant_add(model, model.nodes[i].proto, uses);
    if (!a || drop[a->producer]) continue;
    if (!fuse_into_conv(model, *a, uses, types, additions) && !fuse_into_gemm(model, *a, types, additions) &&
        !fuse_into_matmul(model, *a, types, additions))
      continue;
    model.nodes[a->producer].proto.set_output(0, a->add->output(0));
    drop[i] = true;
  }
  const size_t fused = static_cast<size_t>(std::count(drop.begin(), drop.end(), true));
  if (fused > 0) apply_rewrite(model, drop, additions.replaced, std::move(additions.initializers));
  return fused;
}

}  // namespace

size_t fuse_bias_adds(OnnxModel& model, int opset) {
  if (opset < 7) return 0;  // Gemm before 7 broadcasts C only when told to
  size_t total = 0;
  while (const size_t fused = fuse_once(model)) total += fused;
  return total;
}

}  // namespace onnxport::core
