// What differs between the ONNX releases onnxport builds against: 1.12 (Debian 12) and 1.17
// (Debian 13). The only place that knows (docs/architecture.md, "Releases"). ONNX's headers carry
// no version macro, so each difference is told apart by the API it changed, at compile time.
#pragma once

#include <onnx/defs/shape_inference.h>
#include <onnx/shape_inference/implementation.h>

#include <string>
#include <type_traits>
#include <unordered_map>

namespace onnxport::core::onnx_release {

using TypesByName = std::unordered_map<std::string, onnx::TypeProto*>;
using DataByName = std::unordered_map<std::string, const onnx::TensorProto*>;
using SparseDataByName = std::unordered_map<std::string, const onnx::SparseTensorProto*>;

// An inference context for one node (returned as a prvalue: it is neither copied nor moved). ONNX
// 1.17 added the ShapeInferenceOptions argument, held by value; its defaults (no type check, no
// strict mode, no data propagation) are how 1.12 behaved.
template <typename Impl = onnx::shape_inference::InferenceContextImpl>
Impl node_inference_context(onnx::NodeProto& node, const TypesByName& types, const DataByName& data,
                            const SparseDataByName& sparse) {
  if constexpr (std::is_constructible_v<Impl, onnx::NodeProto&, const TypesByName&, const DataByName&,
                                        const SparseDataByName&, const onnx::ShapeInferenceOptions&>)
    return Impl(node, types, data, sparse, onnx::ShapeInferenceOptions{});
  else
    return Impl(node, types, data, sparse);
}

// The newest opset of the standard domain whose operator schemas the linked ONNX has: 17 in ONNX
// 1.12, 22 in 1.17 (read from its schema registry, as its headers carry no version).
int newest_opset();
// The ONNX release that first had an opset's schemas ("1.13" for 18): named when a build's
// ONNX is too old for the opset asked.
std::string first_release_with_opset(int opset);

}  // namespace onnxport::core::onnx_release
