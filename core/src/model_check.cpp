// The check stage: ONNX's checker and strict shape inference on a written file.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <fstream>

#include "onnx_io.h"
#include "input_file.h"
#include "onnxport/errors.h"

// libonnx exports the checker entry that takes a context (which carries the directory external
// data is resolved against) but its header does not declare it.
namespace onnx::checker {
void check_model(const ModelProto& model, CheckerContext& ctx);
}  // namespace onnx::checker

namespace onnxport::core {

onnx::ModelProto read_model_file(const std::string& path) {
  require_regular_file(path, "the ONNX file", "give the path of an .onnx file", /*allow_empty=*/false);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError("cannot open '" + path + "'");
  google::protobuf::io::IstreamInputStream raw(&in);
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(std::numeric_limits<int>::max());
  onnx::ModelProto m;
  if (!m.ParseFromCodedStream(&coded)) throw ModelError("'" + path + "' is not a valid ONNX model file");
  return m;
}

CheckResult check_model_structure(onnx::ModelProto m, const std::string& model_dir, const std::string& what) {
  try {
    onnx::checker::CheckerContext ctx;
    ctx.set_model_dir(model_dir);
    onnx::checker::check_model(m, ctx);
    onnx::ShapeInferenceOptions opts(/*check_type=*/true, /*error_mode=*/1, /*data_prop=*/false);
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception& e) {
    throw ExportError("ONNX checker rejects '" + what + "': " + e.what());
  }
  CheckResult r;
  r.nodes = static_cast<size_t>(m.graph().node_size());
  int opset = 0;
  for (const auto& imp : m.opset_import())
    if (imp.domain().empty() || imp.domain() == "ai.onnx") opset = static_cast<int>(imp.version());
  r.summary = "ok: " + std::to_string(r.nodes) + " nodes, " + std::to_string(m.graph().initializer_size()) +
              " initializers, opset " + std::to_string(opset) + ", ir_version " + std::to_string(m.ir_version());
  return r;
}

CheckResult check_model_file(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  return check_model_structure(read_model_file(path), dir, path);
}

}  // namespace onnxport::core
