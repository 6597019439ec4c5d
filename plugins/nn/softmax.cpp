// Softmax and LogSoftmax. From opset 13 ONNX's ops work along one axis like PyTorch's. Before,
// they flatten the input to 2-d at `axis`, which only matches PyTorch when dim is the last dim:
// other dims are transposed to the end and back.
#include "nn.h"
#include "onnxport/helpers.h"

namespace onnxport::nn {
namespace {

using namespace helpers;

using AlongFn = Value* (*)(Graph&, const TorchNode&, const std::string&, Value*, int64_t);

Value* along_13(Graph& g, const TorchNode&, const std::string& op, Value* x, int64_t dim) {
  return g.op(op, {x}, {{"axis_i", dim}});
}

Value* along_9(Graph& g, const TorchNode& n, const std::string& op, Value* x, int64_t dim) {
  const auto rank = x->rank();
  if (!rank && dim == -1 && g.opset() >= 11) return g.op(op, {x}, {{"axis_i", -1}});
  const int64_t r = rank_of(x, n.kind + " along dim " + std::to_string(dim) + " at opset " + std::to_string(g.opset()));
  if (r == 0) return squeeze(g, g.op(op, {unsqueeze(g, x, {0})}, {{"axis_i", 0}}), {0});
  const int64_t d = normalize_dim(dim, r);
  if (d == r - 1) return g.op(op, {x}, {{"axis_i", d}});
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < r; ++i) perm.push_back(i);
  std::swap(perm[static_cast<size_t>(d)], perm.back());
  return transpose(g, g.op(op, {transpose(g, x, perm)}, {{"axis_i", r - 1}}), perm);
}

// softmax(self, dim, dtype=None): the input is cast to dtype first.
template <AlongFn along>
Symbolic softmax(const std::string& op) {
  return [op](Graph& g, const TorchNode& n, const Args& a) {
    Value* x = a.tensor(0);
    if (!a.is_none(2)) x = cast(g, x, dtype_from_scalar_type(a.i(2)));
    return std::vector<Value*>{along(g, n, op, x, a.i(1))};
  };
}

// _softmax(self, dim, half_to_float)
template <AlongFn along>
Symbolic internal_softmax(const std::string& op) {
  return [op](Graph& g, const TorchNode& n, const Args& a) {
    Value* x = a.tensor(0);
    if (!a.is_none(2) && a.b(2)) x = cast(g, x, DType::Float);
    return std::vector<Value*>{along(g, n, op, x, a.i(1))};
  };
}

template <AlongFn along>
void add_softmax_ops(Registrar& r, int since_opset) {
  r.add("aten::softmax", since_opset, softmax<along>("Softmax"));
  r.add("aten::log_softmax", since_opset, softmax<along>("LogSoftmax"));
  r.add("aten::_softmax", since_opset, internal_softmax<along>("Softmax"));
  r.add("aten::_log_softmax", since_opset, internal_softmax<along>("LogSoftmax"));
}

}  // namespace

void add_softmax(Registrar& r) {
  add_softmax_ops<along_9>(r, 9);
  add_softmax_ops<along_13>(r, 13);
}

}  // namespace onnxport::nn
