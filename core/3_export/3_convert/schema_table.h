#pragma once
// ONNX builds its table of operator schemas (every operator of every opset) the first time one is
// looked up: about 10 ms that the conversion's first node would otherwise wait for. Built on a
// second thread while the model loads, which keeps one core busy, it is ready when the
// conversion starts.
#include <thread>

namespace onnxport::core {

class SchemaTableBuild {
 public:
  SchemaTableBuild();
  ~SchemaTableBuild() { wait(); }
  SchemaTableBuild(const SchemaTableBuild&) = delete;
  SchemaTableBuild& operator=(const SchemaTableBuild&) = delete;

  // Before anything else looks up or registers a schema: ONNX registers its own schemas and ours
  // (custom_opsets) in one map without a lock.
  void wait() {
    if (builder_.joinable()) builder_.join();
  }

 private:
  std::thread builder_;
};

}  // namespace onnxport::core
