#include "3_export/3_convert/schema_table.h"

#include <onnx/defs/schema.h>

namespace onnxport::core {

SchemaTableBuild::SchemaTableBuild() {
  if (std::thread::hardware_concurrency() < 2) return;  // looked up when first needed, as before
  builder_ = std::thread([] { onnx::OpSchemaRegistry::Schema("Identity", ""); });
}

}  // namespace onnxport::core
