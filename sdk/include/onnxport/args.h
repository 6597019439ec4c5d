#pragma once
// Typed access to a node's arguments: the C++ analogue of torch.onnx's parse_args
// ('v','i','is','f','b','s','t','none'). Every accessor either returns what was asked or
// throws ArgumentError naming the torch op, the argument (index and schema name), what was
// expected and what was found.
#include <optional>
#include <string>
#include <vector>

#include "onnxport/torch_node.h"
#include "onnxport/value.h"

namespace onnxport {

class Args {
 public:
  Args(std::vector<Value*> values, const TorchNode& node) : values_(std::move(values)), node_(&node) {}

  size_t size() const { return values_.size(); }
  Value* at(size_t i) const;  // any kind; throws if i is out of range
  Value* operator[](size_t i) const { return at(i); }
  const std::vector<Value*>& all() const { return values_; }

  Value* tensor(size_t i) const;           // 'v': a tensor (or scalar) value, not None/list
  Value* optional_tensor(size_t i) const;  // nullptr when None or absent
  bool is_none(size_t i) const;            // true also when absent

  int64_t i(size_t i) const;                 // 'i'
  double f(size_t i) const;                  // 'f' (an int constant is accepted)
  bool b(size_t i) const;                    // 'b'
  std::string s(size_t i) const;             // 's'
  std::vector<int64_t> is(size_t i) const;   // 'is' (a single int becomes a 1-list)
  std::vector<double> fs(size_t i) const;    // 'fs'
  const Tensor& t(size_t i) const;           // 't': constant tensor payload
  std::vector<Value*> list(size_t i) const;  // elements of a list value

  std::optional<int64_t> opt_i(size_t i) const;  // nullopt when None or absent
  std::optional<double> opt_f(size_t i) const;
  std::optional<std::vector<int64_t>> opt_is(size_t i) const;

  const TorchNode& node() const { return *node_; }
  [[noreturn]] void fail(size_t i, const std::string& expected) const;

 private:
  std::vector<Value*> values_;
  const TorchNode* node_;
};

}  // namespace onnxport
