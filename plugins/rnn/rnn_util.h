#pragma once
// Small opset-aware graph helpers used by the rnn pack (Unsqueeze/Squeeze take axes as an
// input from opset 13, Slice takes starts/ends/axes as inputs from opset 10).
#include <cstdint>
#include <string>
#include <vector>

#include "onnxport/sdk.h"

namespace onnxport::rnn {

Value* unsqueeze(Graph& g, Value* x, const std::vector<int64_t>& axes);
Value* squeeze(Graph& g, Value* x, const std::vector<int64_t>& axes);
// x[starts:ends] along axes (one entry per axis).
Value* slice(Graph& g, Value* x, const std::vector<int64_t>& axes,
             const std::vector<int64_t>& starts, const std::vector<int64_t>& ends);
Value* concat(Graph& g, const std::vector<Value*>& xs, int64_t axis);
Value* transpose(Graph& g, Value* x, const std::vector<int64_t>& perm);
Value* reshape(Graph& g, Value* x, const std::vector<int64_t>& shape);

// An ArgumentError about the node being converted, with a hint on what to do instead.
[[noreturn]] void fail(const TorchNode& node, const std::string& message, const std::string& hint);

}  // namespace onnxport::rnn
