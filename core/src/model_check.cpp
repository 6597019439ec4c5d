// The check stage: ONNX's checker and strict shape inference on a written file.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <fstream>

#include "onnx_io.h"
#include "onnxport/errors.h"

namespace onnxport::core {

onnx::ModelProto read_model_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ExportError("cannot open '" + path + "'");
  google::protobuf::io::IstreamInputStream raw(&in);
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(std::numeric_limits<int>::max());
  onnx::ModelProto m;
  if (!m.ParseFromCodedStream(&coded)) throw ExportError("'" + path + "' is not a valid ONNX model file");
  return m;
}

CheckResult check_model_file(const std::string& path) {
  onnx::ModelProto m = read_model_file(path);
  try {
    onnx::checker::check_model(m);
    onnx::ShapeInferenceOptions opts(/*check_type=*/true, /*error_mode=*/1, /*data_prop=*/false);
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception& e) {
    throw ExportError("ONNX checker rejects '" + path + "': " + e.what());
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

}  // namespace onnxport::core
