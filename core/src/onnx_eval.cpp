#include "onnx_eval.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <unordered_map>

#include "torch_graph.h"

namespace onnxport::core {

namespace {

std::vector<int64_t> ints_of(const at::Tensor& t) {
  auto c = t.to(at::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

int64_t norm_axis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

// Axes from the attribute (before `input_from`) or from input 1.
std::optional<std::vector<int64_t>> axes_of(const onnx::NodeProto& n, const std::vector<at::Tensor>& in, int opset,
                                            int input_from) {
  if (opset >= input_from) {
    if (in.size() > 1 && in[1].defined()) return ints_of(in[1]);
    return std::nullopt;
  }
  if (const auto* a = find_attribute(n, "axes")) return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  return std::nullopt;
}

using Folder = std::function<std::optional<at::Tensor>(const onnx::NodeProto&, const std::vector<at::Tensor>&, int)>;

const std::unordered_map<std::string, Folder>& folders() {
  static const std::unordered_map<std::string, Folder> table = {
      {"Identity", [](auto&, auto& in, int) { return std::optional<at::Tensor>(in[0]); }},
      {"Cast",
       [](const onnx::NodeProto& n, auto& in, int) -> std::optional<at::Tensor> {
         const auto* to = find_attribute(n, "to");
         if (!to) return std::nullopt;
         return in[0].to(scalar_type_of(static_cast<DType>(to->i())));
       }},
      {"Transpose",
       [](const onnx::NodeProto& n, auto& in, int) -> std::optional<at::Tensor> {
         std::vector<int64_t> perm;
         if (const auto* p = find_attribute(n, "perm"))
           perm.assign(p->ints().begin(), p->ints().end());
         else
           for (int64_t i = in[0].dim() - 1; i >= 0; --i) perm.push_back(i);
         return in[0].permute(perm).contiguous();
       }},
      {"Unsqueeze",
       [](const onnx::NodeProto& n, auto& in, int opset) -> std::optional<at::Tensor> {
         auto axes = axes_of(n, in, opset, 13);
         if (!axes) return std::nullopt;
         const int64_t out_rank = in[0].dim() + static_cast<int64_t>(axes->size());
         for (auto& a : *axes) a = norm_axis(a, out_rank);
         std::sort(axes->begin(), axes->end());
         at::Tensor t = in[0];
         for (int64_t a : *axes) t = t.unsqueeze(a);
         return t;
       }},
      {"Squeeze",
       [](const onnx::NodeProto& n, auto& in, int opset) -> std::optional<at::Tensor> {
         auto axes = axes_of(n, in, opset, 13);
         if (!axes) return in[0].squeeze();
         for (auto& a : *axes) a = norm_axis(a, in[0].dim());
         std::sort(axes->rbegin(), axes->rend());
         at::Tensor t = in[0];
         for (int64_t a : *axes) t = t.squeeze(a);
         return t;
       }},
      {"Concat",
       [](const onnx::NodeProto& n, auto& in, int) -> std::optional<at::Tensor> {
         const auto* axis = find_attribute(n, "axis");
         if (!axis) return std::nullopt;
         return at::cat(in, axis->i());
       }},
      {"Reshape",
       [](const onnx::NodeProto& n, auto& in, int) -> std::optional<at::Tensor> {
         auto shape = ints_of(in[1]);
         const auto* allowzero = find_attribute(n, "allowzero");
         for (size_t i = 0; i < shape.size(); ++i)
           if (shape[i] == 0 && !(allowzero && allowzero->i())) shape[i] = in[0].size(static_cast<int64_t>(i));
         return in[0].reshape(shape).contiguous();
       }},
      {"Slice",
       [](const onnx::NodeProto& n, auto& in, int opset) -> std::optional<at::Tensor> {
         std::vector<int64_t> starts, ends, axes, steps;
         if (opset >= 10) {
           starts = ints_of(in[1]);
           ends = ints_of(in[2]);
           if (in.size() > 3 && in[3].defined()) axes = ints_of(in[3]);
           if (in.size() > 4 && in[4].defined()) steps = ints_of(in[4]);
         } else {
           if (auto* a = find_attribute(n, "starts")) starts.assign(a->ints().begin(), a->ints().end());
           if (auto* a = find_attribute(n, "ends")) ends.assign(a->ints().begin(), a->ints().end());
           if (auto* a = find_attribute(n, "axes")) axes.assign(a->ints().begin(), a->ints().end());
         }
         if (axes.empty())
           for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
         if (steps.empty()) steps.assign(starts.size(), 1);
         at::Tensor t = in[0];
         for (size_t i = 0; i < axes.size(); ++i) {
           if (steps[i] <= 0) return std::nullopt;  // negative steps: leave to the runtime
           const int64_t dim = norm_axis(axes[i], t.dim());
           const int64_t size = t.size(dim);
           auto clampi = [size](int64_t v) { return std::max<int64_t>(0, std::min(v < 0 ? v + size : v, size)); };
           const int64_t s = clampi(starts[i]), e = clampi(ends[i]);
           t = e > s ? t.slice(dim, s, e, steps[i]) : t.slice(dim, 0, 0);
         }
         return t.contiguous();
       }},
      {"Gather",
       [](const onnx::NodeProto& n, auto& in, int) -> std::optional<at::Tensor> {
         const auto* a = find_attribute(n, "axis");
         const int64_t axis = norm_axis(a ? a->i() : 0, in[0].dim());
         at::Tensor idx = in[1].to(at::kLong);
         idx = at::where(idx < 0, idx + in[0].size(axis), idx);
         at::Tensor flat = in[0].index_select(axis, idx.reshape({-1}));
         std::vector<int64_t> shape(in[0].sizes().begin(), in[0].sizes().begin() + axis);
         for (int64_t d : idx.sizes()) shape.push_back(d);
         for (int64_t d = axis + 1; d < in[0].dim(); ++d) shape.push_back(in[0].size(d));
         return flat.reshape(shape).contiguous();
       }},
      // Range(start, limit, delta): ceil((limit - start) / delta) values (none if negative), in
      // start's dtype, so that positions = arange(n) feeds a foldable Gather. A range too long to
      // be worth a constant is left to the runtime.
      {"Range",
       [](const onnx::NodeProto&, auto& in, int) -> std::optional<at::Tensor> {
         const double start = in[0].item().toDouble(), limit = in[1].item().toDouble(),
                      delta = in[2].item().toDouble();
         if (delta == 0) return std::nullopt;
         const double count = std::max(std::ceil((limit - start) / delta), 0.0);
         if (count > double(1 << 24)) return std::nullopt;
         const auto n = static_cast<int64_t>(count);
         const auto options = at::TensorOptions().dtype(in[0].scalar_type());
         return at::add(at::mul(at::arange(n, at::TensorOptions().dtype(at::kDouble)), delta), start).to(options);
       }},
      {"Add", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::add(in[0], in[1])); }},
      {"Sub", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::sub(in[0], in[1])); }},
      {"Mul", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::mul(in[0], in[1])); }},
      {"Div",
       [](auto&, auto& in, int) {
         const bool integral = !at::isFloatingType(in[0].scalar_type());
         return std::optional<at::Tensor>(integral ? at::div(in[0], in[1], "trunc") : at::div(in[0], in[1]));
       }},
      {"Sqrt", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::sqrt(in[0])); }},
      {"Neg", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::neg(in[0])); }},
      // Comparisons and logic, so that flags computed from constant sizes decide branches.
      {"Equal", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::eq(in[0], in[1])); }},
      {"Less", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::lt(in[0], in[1])); }},
      {"Greater", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::gt(in[0], in[1])); }},
      {"LessOrEqual", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::le(in[0], in[1])); }},
      {"GreaterOrEqual", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::ge(in[0], in[1])); }},
      {"Max", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::maximum(in[0], in[1])); }},
      {"Min", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::minimum(in[0], in[1])); }},
      {"Not", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::logical_not(in[0])); }},
      {"And", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::logical_and(in[0], in[1])); }},
      {"Or", [](auto&, auto& in, int) { return std::optional<at::Tensor>(at::logical_or(in[0], in[1])); }},
      {"Shape",
       [](const onnx::NodeProto& n, auto& in, int) {
         // start/end (opset 15) select a range of the dims, clamped like Python slicing.
         const auto sizes = in[0].sizes().vec();
         const auto rank = static_cast<int64_t>(sizes.size());
         auto bound = [rank](const onnx::AttributeProto* a, int64_t fallback) {
           if (!a) return fallback;
           const int64_t v = a->i() < 0 ? a->i() + rank : a->i();
           return std::clamp<int64_t>(v, 0, rank);
         };
         const int64_t start = bound(find_attribute(n, "start"), 0);
         const int64_t end = std::max(start, bound(find_attribute(n, "end"), rank));
         std::vector<int64_t> dims(sizes.begin() + start, sizes.begin() + end);
         return std::optional<at::Tensor>(at::tensor(dims, at::TensorOptions().dtype(at::kLong)));
       }},
  };
  return table;
}

}  // namespace

at::Tensor to_aten(const Tensor& t) {
  // The view shares the tensor's bytes and keeps them alive for as long as it (or any view or
  // result aliasing it) lives, so evaluator results can be kept without copying.
  auto source = std::make_shared<Tensor>(t);
  return at::from_blob(const_cast<void*>(t.data()), t.shape(), [source](void*) {},
                       at::TensorOptions().dtype(scalar_type_of(t.dtype())));
}

bool has_evaluator(const onnx::NodeProto& node) { return node.domain().empty() && folders().count(node.op_type()) > 0; }

namespace {
// The folders index their inputs freely: a node with fewer inputs than its schema requires
// (a malformed node) is not evaluated.
bool has_required_inputs(const onnx::NodeProto& node, const std::vector<at::Tensor>& inputs, int opset) {
  const auto* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), opset, "");
  if (!schema || inputs.size() < static_cast<size_t>(schema->min_input())) return false;
  for (int i = 0; i < schema->min_input(); ++i)
    if (!inputs[static_cast<size_t>(i)].defined()) return false;
  return true;
}
}  // namespace

std::optional<at::Tensor> evaluate_node(const onnx::NodeProto& node, const std::vector<at::Tensor>& inputs, int opset) {
  if (!has_evaluator(node) || !has_required_inputs(node, inputs, opset)) return std::nullopt;
  try {
    return folders().at(node.op_type())(node, inputs, opset);
  } catch (const std::exception&) {
    return std::nullopt;  // anything ATen can't evaluate is left to the runtime
  }
}

std::optional<Tensor> evaluate_constant_node(const onnx::NodeProto& node, const std::vector<Tensor>& inputs,
                                             int opset) {
  if (node.output_size() > 1) return std::nullopt;
  std::vector<at::Tensor> in;
  for (const auto& t : inputs) in.push_back(to_aten(t));
  if (auto r = evaluate_node(node, in, opset)) return borrow_tensor(*r);
  return std::nullopt;
}

}  // namespace onnxport::core
