#include "2_eval/aten_kernels.h"

#include <ATen/core/dispatch/Dispatcher.h>

namespace onnxport::core::eval {

namespace {

bool is_tensor(const c10::TypePtr& t) { return t->kind() == c10::TypeKind::TensorType; }
bool is_optional_tensor(const c10::TypePtr& t) {
  auto o = t->cast<c10::OptionalType>();
  return o && is_tensor(o->getElementType());
}
bool is_tensor_list(const c10::TypePtr& t) {
  auto l = t->cast<c10::ListType>();
  return l && is_tensor(l->getElementType());
}

const onnx::AttributeProto* attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

// A constant argument from its attribute, in the form the schema's type asks for.
c10::IValue from_attribute(const onnx::AttributeProto& a, const c10::TypePtr& declared) {
  c10::TypePtr type = declared;
  if (auto o = type->cast<c10::OptionalType>()) type = o->getElementType();
  switch (a.type()) {
    case onnx::AttributeProto::INT:
      if (type->kind() == c10::TypeKind::BoolType) return c10::IValue(a.i() != 0);
      if (type->kind() == c10::TypeKind::FloatType) return c10::IValue(static_cast<double>(a.i()));
      return c10::IValue(static_cast<int64_t>(a.i()));
    case onnx::AttributeProto::FLOAT: return c10::IValue(static_cast<double>(a.f()));
    case onnx::AttributeProto::STRING: return c10::IValue(a.s());
    case onnx::AttributeProto::INTS: {
      std::vector<int64_t> v(a.ints().begin(), a.ints().end());
      if (auto l = type->cast<c10::ListType>(); l && l->getElementType()->kind() == c10::TypeKind::BoolType) {
        c10::List<bool> bools;
        for (int64_t e : v) bools.push_back(e != 0);
        return c10::IValue(bools);
      }
      return c10::IValue(v);
    }
    case onnx::AttributeProto::FLOATS: return c10::IValue(std::vector<double>(a.floats().begin(), a.floats().end()));
    default: throw KernelError("attribute '" + a.name() + "' has a type the ATen fallback does not read back");
  }
}

// The argument stack for `schema` from the node: tensor arguments take the inputs in order (a
// tensor list the rest); the export left out None arguments, so optional tensors only take an
// input when there are more inputs than required ones.
torch::jit::Stack arguments_for(const c10::FunctionSchema& schema, const KernelContext& ctx) {
  size_t required = 0, lists = 0;
  for (const auto& arg : schema.arguments()) {
    required += is_tensor(arg.type()) && !attribute(ctx.node(), arg.name());
    lists += is_tensor_list(arg.type()) && !attribute(ctx.node(), arg.name());
  }
  if (ctx.input_count() < required)
    ctx.fail("aten::" + schema.name() + " takes " + std::to_string(required) + " tensors, the node has " +
             std::to_string(ctx.input_count()) + " inputs");
  size_t spare_optionals = lists ? 0 : ctx.input_count() - required;
  size_t next = 0;
  torch::jit::Stack stack;
  for (const auto& arg : schema.arguments()) {
    const c10::TypePtr& type = arg.type();
    if (const auto* a = attribute(ctx.node(), arg.name())) {
      stack.push_back(from_attribute(*a, type));
    } else if (is_tensor(type)) {
      stack.emplace_back(ctx.input(next++));
    } else if (is_optional_tensor(type) && spare_optionals > 0) {
      --spare_optionals;
      stack.emplace_back(ctx.input(next++));
    } else if (is_tensor_list(type)) {
      const size_t rest = ctx.input_count() - next - (lists - 1);
      std::vector<at::Tensor> items;
      for (size_t i = 0; i < rest; ++i) items.push_back(ctx.input(next++));
      stack.emplace_back(items);
      --lists;
    } else if (arg.default_value()) {
      stack.push_back(*arg.default_value());
    } else if (type->cast<c10::OptionalType>()) {
      stack.emplace_back();
    } else {
      ctx.fail("aten::" + schema.name() + ": argument '" + arg.name() + "' is neither an input nor an attribute");
    }
  }
  return stack;
}

std::vector<EvalValue> run_aten(const KernelContext& ctx) {
  const auto* op = attribute(ctx.node(), "operator");
  if (!op || op->type() != onnx::AttributeProto::STRING) ctx.fail("the node has no 'operator' attribute");
  const auto* overload = attribute(ctx.node(), "overload_name");
  const std::string name = op->s().find("::") == std::string::npos ? "aten::" + op->s() : op->s();
  const auto handle = c10::Dispatcher::singleton().findSchema({name, overload ? overload->s() : std::string()});
  if (!handle)
    ctx.fail("libtorch has no operator " + name + (overload && !overload->s().empty() ? "." + overload->s() : ""));
  torch::jit::Stack stack = arguments_for(handle->schema(), ctx);
  handle->callBoxed(stack);
  std::vector<EvalValue> outputs;
  for (const auto& v : stack) {
    if (v.isTensor()) {
      outputs.emplace_back(v.toTensor());
    } else if (v.isTensorList()) {
      outputs.push_back(EvalValue::of_sequence(v.toTensorVector()));
    } else if (v.isInt() || v.isDouble() || v.isBool()) {
      outputs.emplace_back(v.isInt()      ? at::scalar_tensor(v.toInt(), at::kLong)
                           : v.isDouble() ? at::scalar_tensor(v.toDouble(), at::kDouble)
                                          : at::scalar_tensor(v.toBool(), at::kBool));
    } else {
      ctx.fail(name + " returned a " + v.tagKind() + ", which has no ONNX value");
    }
  }
  return outputs;
}

}  // namespace

const Kernel& aten_fallback_kernel() {
  static const Kernel kernel = run_aten;
  return kernel;
}

}  // namespace onnxport::core::eval
