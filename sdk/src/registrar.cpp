#include "onnxport/registrar.h"

#include "onnxport/errors.h"

namespace onnxport {

void Registrar::add_symbolic(const std::string& torch_op, int since_opset, Symbolic fn, bool is_override) {
  if (torch_op.find("::") == std::string::npos)
    throw RegistryError("cannot register '" + torch_op + "': a torch op is namespace::name, e.g. aten::relu");
  if (since_opset < 1)
    throw RegistryError("cannot register '" + torch_op + "' for since-opset " + std::to_string(since_opset));
  if (!fn) throw RegistryError("cannot register '" + torch_op + "': empty symbolic");
  registrations_.push_back(Registration{torch_op, since_opset, std::move(fn), is_override});
}

void Registrar::declare_domain(const std::string& domain, int version) {
  if (domain.empty() || domain == "ai.onnx")
    throw RegistryError("declare_domain: '" + domain +
                        "' is the standard ONNX domain; only custom domains are declared");
  if (version < 1) throw RegistryError("declare_domain('" + domain + "'): version must be >= 1");
  domains_.push_back(DomainDecl{domain, version});
}

void Registrar::add_evaluator(const std::string& domain, const std::string& op_type, OpEvaluator fn) {
  if (domain.empty() || domain == "ai.onnx")
    throw RegistryError("add_evaluator('" + op_type + "'): evaluators are for custom domains; '" + domain +
                        "' is the standard ONNX domain, which onnxport evaluates itself");
  if (op_type.empty() || !fn) throw RegistryError("add_evaluator('" + domain + "'): needs an op type and a function");
  evaluators_.push_back(EvaluatorDecl{domain, op_type, std::move(fn)});
}

void Registrar::add_schema(CustomOpSchema schema) {
  schema.validate();
  schemas_.push_back(std::move(schema));
}

}  // namespace onnxport
