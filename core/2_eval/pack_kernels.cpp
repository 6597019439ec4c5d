#include "2_eval/pack_kernels.h"

#include <map>
#include <memory>

#include "1_base/torch_tensors.h"

namespace onnxport::core::eval {

namespace {

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name,
                                           onnx::AttributeProto::AttributeType type) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return a.type() == type ? &a : nullptr;
  return nullptr;
}

class ProtoEvalNode : public EvalNode {
 public:
  explicit ProtoEvalNode(const KernelContext& ctx) : node_(ctx.node()), opset_(ctx.opset()) {}
  const std::string& domain() const override { return node_.domain(); }
  const std::string& op_type() const override { return node_.op_type(); }
  const std::string& name() const override { return node_.name(); }
  int opset() const override { return opset_; }
  size_t output_count() const override { return static_cast<size_t>(node_.output_size()); }
  std::optional<int64_t> attr_int(const std::string& name) const override {
    if (auto* a = find_attribute(node_, name, onnx::AttributeProto::INT)) return a->i();
    return std::nullopt;
  }
  std::optional<double> attr_float(const std::string& name) const override {
    if (auto* a = find_attribute(node_, name, onnx::AttributeProto::FLOAT)) return a->f();
    return std::nullopt;
  }
  std::optional<std::string> attr_string(const std::string& name) const override {
    if (auto* a = find_attribute(node_, name, onnx::AttributeProto::STRING)) return a->s();
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> attr_ints(const std::string& name) const override {
    if (auto* a = find_attribute(node_, name, onnx::AttributeProto::INTS))
      return std::vector<int64_t>(a->ints().begin(), a->ints().end());
    return std::nullopt;
  }
  std::optional<std::vector<double>> attr_floats(const std::string& name) const override {
    if (auto* a = find_attribute(node_, name, onnx::AttributeProto::FLOATS))
      return std::vector<double>(a->floats().begin(), a->floats().end());
    return std::nullopt;
  }

 private:
  const onnx::NodeProto& node_;
  int opset_;
};

at::Tensor to_aten(const Tensor& t, const KernelContext& ctx, const std::string& pack) {
  const at::ScalarType type = scalar_type_of(t.dtype());
  const auto expected = static_cast<size_t>(t.numel()) * dtype_size(t.dtype());
  if (t.nbytes() != expected)
    ctx.fail("op pack '" + pack + "' returned " + t.describe() + " with " + std::to_string(t.nbytes()) +
             " bytes, not " + std::to_string(expected));
  at::Tensor out = at::empty(t.shape(), at::TensorOptions().dtype(type));
  if (expected) std::memcpy(out.data_ptr(), t.data(), expected);
  return out;
}

Kernel kernel_calling(const Registry::EvaluatorEntry& entry) {
  return [&entry](const KernelContext& ctx) {
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < ctx.input_count(); ++i)
      inputs.push_back(ctx.has_input(i) ? borrow_tensor(ctx.input(i)) : Tensor());
    std::vector<Tensor> outputs;
    try {
      outputs = entry.fn(ProtoEvalNode(ctx), inputs);
    } catch (const std::exception& e) {
      ctx.fail("op pack '" + entry.pack.id + "' (" + entry.pack.file + "): " + e.what());
    }
    if (outputs.size() < ctx.output_count())
      ctx.fail("op pack '" + entry.pack.id + "' returned " + std::to_string(outputs.size()) +
               " outputs for a node with " + std::to_string(ctx.output_count()));
    std::vector<EvalValue> values;
    for (const auto& t : outputs) values.emplace_back(to_aten(t, ctx, entry.pack.id));
    return values;
  };
}

}  // namespace

DomainKernelLookup pack_kernels(const Registry& registry) {
  auto made = std::make_shared<std::map<std::string, Kernel>>();
  return [&registry, made](const std::string& domain, const std::string& op_type) -> const Kernel* {
    const std::string key = Registry::evaluator_key(domain, op_type);
    if (auto it = made->find(key); it != made->end()) return &it->second;
    const Registry::EvaluatorEntry* entry = registry.evaluator_for(domain, op_type);
    if (!entry) return nullptr;
    return &made->emplace(key, kernel_calling(*entry)).first->second;
  };
}

}  // namespace onnxport::core::eval
