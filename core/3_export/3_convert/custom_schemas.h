#pragma once
// The ONNX side of the SDK's optional schema hook (onnxport/schema.h): the schemas op packs
// declare for their custom-domain ops become onnx::OpSchemas in ONNX's (process-wide) schema
// registry, so GraphBuilder's strict verification and per-node inference, and the final
// checker and shape inference, treat those nodes like standard ones.
#include "onnxport/registry/registry.h"

namespace onnxport::core {

// Registers every schema in `registry` that this process has not registered yet, adding each
// new custom domain to ONNX's known domains. A key already registered with the same definition
// is skipped; with a different definition (another pack, or a changed pack) it is a
// RegistryError naming both packs, since ONNX cannot replace a registered schema.
void register_custom_schemas(const Registry& registry);

// Whether any schema is registered for domain::op_type (at any version): GraphBuilder checks
// and types custom-domain nodes only then.
bool has_custom_schema(const std::string& domain, const std::string& op_type);

}  // namespace onnxport::core
