// Constant, Identity, If, Loop, Scan and the sequence ops.
#include "2_eval/kernel.h"

namespace onnxport::core::eval {

namespace {

std::vector<EvalValue> constant(const KernelContext& ctx) {
  if (auto t = ctx.attr_t("value")) return single(*t);
  const auto options = [](at::ScalarType type) { return at::TensorOptions().dtype(type); };
  if (ctx.has_attr("value_float")) return single(at::scalar_tensor(ctx.attr_f("value_float", 0), options(at::kFloat)));
  if (ctx.has_attr("value_int")) return single(at::scalar_tensor(ctx.attr_i("value_int", 0), options(at::kLong)));
  if (ctx.has_attr("value_floats")) {
    auto v = ctx.attr_floats("value_floats");
    return single(at::tensor(v, options(at::kFloat)));
  }
  if (ctx.has_attr("value_ints")) {
    auto v = ctx.attr_ints("value_ints");
    return single(at::tensor(v, options(at::kLong)));
  }
  ctx.fail("only tensor, float(s) and int(s) values are evaluated (not strings or sparse tensors)");
}

std::vector<EvalValue> if_op(const KernelContext& ctx) {
  const bool cond = ctx.input(0).item<bool>();
  return ctx.run_subgraph(ctx.attr_g(cond ? "then_branch" : "else_branch"), {});
}

// An empty tensor of the element type a graph output declares, for scan outputs of zero steps.
at::Tensor empty_of(const onnx::ValueInfoProto& out) {
  const auto& type = out.type().tensor_type();
  return at::empty({0}, at::TensorOptions().dtype(scalar_type_of_onnx(type.elem_type())));
}

std::vector<EvalValue> loop(const KernelContext& ctx) {
  const onnx::GraphProto& body = ctx.attr_g("body");
  const int64_t max_trips = ctx.has_input(0) ? ctx.input(0).item<int64_t>() : std::numeric_limits<int64_t>::max();
  bool cond = ctx.has_input(1) ? ctx.input(1).item<bool>() : true;
  std::vector<EvalValue> carried;
  for (size_t i = 2; i < ctx.input_count(); ++i) carried.push_back(ctx.value(i));
  const size_t n_carried = carried.size();
  const size_t n_scan = static_cast<size_t>(body.output_size()) - 1 - n_carried;
  std::vector<std::vector<at::Tensor>> scans(n_scan);
  int64_t scanned_bytes = 0;
  const int64_t limit = evaluator_loop_limit();
  for (int64_t i = 0; i < max_trips && cond; ++i) {
    if (limit > 0 && i >= limit) ctx.fail("more than " + std::to_string(limit) + " iterations (the evaluator's loop limit)");
    std::vector<EvalValue> args{EvalValue(at::scalar_tensor(i, at::kLong)),
                                EvalValue(at::scalar_tensor(cond, at::kBool))};
    args.insert(args.end(), carried.begin(), carried.end());
    auto outs = ctx.run_subgraph(body, args);
    cond = outs[0].tensor.item<bool>();
    for (size_t k = 0; k < n_carried; ++k) carried[k] = outs[1 + k];
    for (size_t k = 0; k < n_scan; ++k) {
      scans[k].push_back(outs[1 + n_carried + k].tensor);
      scanned_bytes += held_bytes(scans[k].back());
    }
    if (n_scan > 0) require_held_fits(ctx, scanned_bytes, static_cast<size_t>(i + 1), "the scan outputs");
  }
  std::vector<EvalValue> results = carried;
  for (size_t k = 0; k < n_scan; ++k)
    results.emplace_back(scans[k].empty() ? empty_of(body.output(static_cast<int>(1 + n_carried + k)))
                                          : at::stack(scans[k]));
  return results;
}

std::vector<EvalValue> scan(const KernelContext& ctx) {
  if (ctx.opset() < 9) ctx.fail("Scan before opset 9 (with a batch axis) is not evaluated");
  const onnx::GraphProto& body = ctx.attr_g("body");
  const auto n_scan_in = static_cast<size_t>(ctx.attr_i("num_scan_inputs", 0));
  const size_t n_state = ctx.input_count() - n_scan_in;
  const size_t n_scan_out = static_cast<size_t>(body.output_size()) - n_state;
  auto per_input = [&](const char* name, size_t count) {
    auto v = ctx.attr_ints(name);
    v.resize(count, 0);
    return v;
  };
  const auto in_axes = per_input("scan_input_axes", n_scan_in);
  const auto in_dirs = per_input("scan_input_directions", n_scan_in);
  const auto out_axes = per_input("scan_output_axes", n_scan_out);
  const auto out_dirs = per_input("scan_output_directions", n_scan_out);
  std::vector<EvalValue> state;
  for (size_t i = 0; i < n_state; ++i) state.push_back(ctx.value(i));
  std::vector<at::Tensor> inputs;
  std::vector<int64_t> axes;
  int64_t steps = -1;
  for (size_t k = 0; k < n_scan_in; ++k) {
    const at::Tensor& t = ctx.input(n_state + k);
    axes.push_back(normalize_axis(in_axes[k], t.dim(), ctx));
    if (steps >= 0 && t.size(axes.back()) != steps) ctx.fail("scan inputs have different lengths");
    steps = t.size(axes.back());
    inputs.push_back(t);
  }
  std::vector<std::vector<at::Tensor>> outs(n_scan_out);
  for (int64_t i = 0; i < std::max<int64_t>(steps, 0); ++i) {
    std::vector<EvalValue> args = state;
    for (size_t k = 0; k < n_scan_in; ++k) args.emplace_back(inputs[k].select(axes[k], in_dirs[k] ? steps - 1 - i : i));
    auto r = ctx.run_subgraph(body, args);
    for (size_t k = 0; k < n_state; ++k) state[k] = r[k];
    for (size_t k = 0; k < n_scan_out; ++k) outs[k].push_back(r[n_state + k].tensor);
  }
  std::vector<EvalValue> results = state;
  for (size_t k = 0; k < n_scan_out; ++k) {
    if (out_dirs[k]) std::reverse(outs[k].begin(), outs[k].end());
    if (outs[k].empty()) {
      results.emplace_back(empty_of(body.output(static_cast<int>(n_state + k))));
      continue;
    }
    const int64_t axis = normalize_axis(out_axes[k], outs[k][0].dim() + 1, ctx);
    results.emplace_back(at::stack(outs[k], axis));
  }
  return results;
}

// A position in a sequence of `size` items; `insert` allows size itself (append).
int64_t sequence_position(const KernelContext& ctx, size_t input, int64_t size, bool insert) {
  int64_t pos = ctx.input(input).item<int64_t>();
  if (pos < 0) pos += size;
  if (pos < 0 || pos > size || (!insert && pos == size))
    ctx.fail("position " + std::to_string(ctx.input(input).item<int64_t>()) + " is out of range for a sequence of " +
             std::to_string(size));
  return pos;
}

std::vector<EvalValue> sequence_insert(const KernelContext& ctx) {
  auto items = ctx.sequence_input(0);
  const auto size = static_cast<int64_t>(items.size());
  const int64_t pos = ctx.has_input(2) ? sequence_position(ctx, 2, size, true) : size;
  items.insert(items.begin() + pos, ctx.input(1));
  require_held_fits(ctx, held_bytes(items), items.size(), "the sequence");
  return {EvalValue::of_sequence(std::move(items))};
}

std::vector<EvalValue> sequence_erase(const KernelContext& ctx) {
  auto items = ctx.sequence_input(0);
  const auto size = static_cast<int64_t>(items.size());
  const int64_t pos = ctx.has_input(1) ? sequence_position(ctx, 1, size, false) : size - 1;
  if (pos < 0) ctx.fail("erasing from an empty sequence");
  items.erase(items.begin() + pos);
  return {EvalValue::of_sequence(std::move(items))};
}

std::vector<EvalValue> split_to_sequence(const KernelContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const int64_t axis = normalize_axis(ctx.attr_i("axis", 0), x.dim(), ctx);
  std::vector<at::Tensor> parts;
  const bool by_sizes = ctx.has_input(1) && ctx.input(1).dim() != 0;
  if (!by_sizes) {  // at most one piece per element along the axis
    const int64_t pieces = x.size(axis);
    require_held_fits(ctx, pieces * kBytesPerItem, static_cast<size_t>(pieces), "the sequence");
  }
  if (!ctx.has_input(1)) {
    for (auto& p : x.split(1, axis)) parts.push_back(ctx.attr_i("keepdims", 1) ? p : p.squeeze(axis));
  } else if (ctx.input(1).dim() == 0) {
    parts = x.split(ctx.input(1).item<int64_t>(), axis);
  } else {
    parts = x.split_with_sizes(int_values(ctx.input(1)), axis);
  }
  return {EvalValue::of_sequence(std::move(parts))};
}

std::vector<EvalValue> concat_from_sequence(const KernelContext& ctx) {
  const auto& items = ctx.sequence_input(0);
  if (items.empty()) ctx.fail("the sequence is empty");
  const bool new_axis = ctx.attr_i("new_axis", 0) != 0;
  const int64_t axis = normalize_axis(ctx.attr_i("axis", 0), items[0].dim() + (new_axis ? 1 : 0), ctx);
  return single(new_axis ? at::stack(items, axis) : at::cat(items, axis));
}

}  // namespace

void register_control_flow_kernels(KernelTable& table) {
  table["Constant"] = {constant, 1};
  table["Identity"] = {[](const KernelContext& ctx) { return std::vector<EvalValue>{ctx.value(0)}; }, 1};
  table["If"] = {if_op, 1};
  table["Loop"] = {loop, 1};
  table["Scan"] = {scan, 9};
  table["SequenceEmpty"] = {[](const KernelContext&) { return std::vector<EvalValue>{EvalValue::of_sequence({})}; },
                            11};
  table["SequenceConstruct"] = {[](const KernelContext& ctx) {
                                  std::vector<at::Tensor> items;
                                  for (size_t i = 0; i < ctx.input_count(); ++i) items.push_back(ctx.input(i));
                                  return std::vector<EvalValue>{EvalValue::of_sequence(std::move(items))};
                                },
                                11};
  table["SequenceInsert"] = {sequence_insert, 11};
  table["SequenceErase"] = {sequence_erase, 11};
  table["SequenceAt"] = {[](const KernelContext& ctx) {
                           const auto& items = ctx.sequence_input(0);
                           return single(items[sequence_position(ctx, 1, static_cast<int64_t>(items.size()), false)]);
                         },
                         11};
  table["SequenceLength"] = {
      [](const KernelContext& ctx) {
        return single(at::scalar_tensor(static_cast<int64_t>(ctx.sequence_input(0).size()), at::kLong));
      },
      11};
  table["SplitToSequence"] = {split_to_sequence, 11};
  // An optional is a value that may be absent: Optional(x) is x, Optional(type=T) nothing.
  table["Optional"] = {[](const KernelContext& ctx) {
                         return std::vector<EvalValue>{ctx.has_input(0) ? ctx.value(0) : EvalValue()};
                       },
                       15};
  table["OptionalHasElement"] = {[](const KernelContext& ctx) {
                                   return single(at::scalar_tensor(ctx.has_input(0), at::kBool));
                                 },
                                 15};
  table["OptionalGetElement"] = {[](const KernelContext& ctx) {
                                   if (!ctx.has_input(0)) ctx.fail("the optional holds no value");
                                   return std::vector<EvalValue>{ctx.value(0)};
                                 },
                                 15};
  table["ConcatFromSequence"] = {concat_from_sequence, 11};
}

}  // namespace onnxport::core::eval
