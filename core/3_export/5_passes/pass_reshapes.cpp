#include <optional>
#include <unordered_set>

#include "1_base/torch_tensors.h"
#include "3_export/5_passes/passes.h"

namespace onnxport::core {

namespace {

// Reshape-14's allowzero: a 0 in the target is then a size, not the input's dim.
bool allows_zero(const onnx::NodeProto& reshape) {
  const auto* z = find_attribute(reshape, "allowzero");
  return z && z->i() != 0;
}

bool is_constant(const OnnxModel& model, const std::string& name, const ValueUses& uses) {
  return constant_value(model, name, uses).has_value();
}

// The target that gives `out` from `in`: each dim's size where known, 0 where it is the input's
// dim at that place (the same symbol), -1 for at most one other. Nothing when more are unknown.
std::optional<std::vector<int64_t>> target_from_types(const TensorType& in, const TensorType& out) {
  if (!in.shape || !out.shape) return std::nullopt;
  std::vector<int64_t> target;
  bool inferred = false;
  for (size_t d = 0; d < out.shape->size(); ++d) {
    const Dim& o = (*out.shape)[d];
    if (o.is_static() && o.value > 0) {
      target.push_back(o.value);
    } else if (o.kind == Dim::Kind::Symbolic && d < in.shape->size() && (*in.shape)[d] == o) {
      target.push_back(0);  // Reshape's 0: the input's dim at the same place
    } else if (!inferred && !(o.is_static() && o.value == 0)) {
      inferred = true;
      target.push_back(-1);
    } else {
      return std::nullopt;
    }
  }
  return target;
}

onnx::NodeProto simple_node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output) {
  onnx::NodeProto p;
  p.set_op_type(op);
  for (const auto& in : inputs) p.add_input(in);
  p.add_output(output);
  return p;
}

// A constant Reshape target giving `dims` from `in` (see target_from_types); its name, or "" when
// the dims do not say enough.
std::string add_target(OnnxModel& model, NewConstants& constants, const std::string& base, const TensorType& in,
                       const std::vector<Dim>& dims) {
  TensorType out;
  out.shape = dims;
  const auto target = target_from_types(in, out);
  return target ? constants.add(model, base, Tensor::ints(*target)) : "";
}

bool same_known(const Dim& a, const Dim& b) { return a.kind != Dim::Kind::Unknown && a == b; }

// How `c` splits the dims of `b` (c refines b): per dim of b, the run of c's dims it becomes. One
// dim of b may split; the dims before and after it pair one to one with c's (equal sizes or
// symbols). The split dim's size, when known, must be the product of its run; an unknown one is
// what the element count leaves it.
std::optional<std::vector<std::vector<Dim>>> split_of(const std::vector<Dim>& b, const std::vector<Dim>& c) {
  if (c.size() < b.size()) return std::nullopt;
  const size_t extra = c.size() - b.size();
  for (size_t m = 0; m < b.size(); ++m) {
    bool pairs = true;
    for (size_t j = 0; j < b.size() && pairs; ++j)
      if (j != m) pairs = same_known(b[j], c[j < m ? j : j + extra]);
    if (!pairs) continue;
    const std::vector<Dim> run(c.begin() + static_cast<std::ptrdiff_t>(m),
                               c.begin() + static_cast<std::ptrdiff_t>(m + extra + 1));
    if (b[m].kind == Dim::Kind::Symbolic && !(run.size() == 1 && run[0] == b[m])) continue;  // nothing says how
    if (b[m].is_static()) {
      int64_t product = 1;
      for (const Dim& d : run) product *= d.is_static() ? d.value : -1;
      if (product != b[m].value) continue;
    }
    std::vector<std::vector<Dim>> groups;
    for (size_t j = 0; j < b.size(); ++j)
      groups.push_back(j == m ? run : std::vector<Dim>{c[j < m ? j : j + extra]});
    return groups;
  }
  return std::nullopt;
}

}  // namespace

size_t merge_reshape_transpose_reshape(OnnxModel& model) {
  const TypeLookup types(model);
  const ValueUses uses(model);
  NewConstants constants(model);
  std::vector<bool> drop(model.nodes.size(), false);
  size_t merged = 0;
  auto producer = [&](const std::string& name, const char* op) -> std::optional<size_t> {
    const auto made = uses.producer.find(name);
    if (made == uses.producer.end() || drop[made->second] || uses.count(name) != 1) return std::nullopt;
    const auto& p = model.nodes[made->second].proto;
    if (!is_standard_domain(p) || p.op_type() != op) return std::nullopt;
    return made->second;
  };
  auto shape_of = [&](const std::string& name) { return types.dims(name); };
  for (size_t k = 0; k < model.nodes.size(); ++k) {
    auto& last = model.nodes[k].proto;
    if (drop[k] || !is_standard_domain(last) || last.op_type() != "Reshape" || last.input_size() != 2) continue;
    const auto t = producer(last.input(0), "Transpose");
    if (!t) continue;
    const auto r = producer(model.nodes[*t].proto.input(0), "Reshape");
    if (!r) continue;
    auto& first = model.nodes[*r].proto;
    const auto x = shape_of(first.input(0)), a = shape_of(first.output(0));
    const auto b = shape_of(last.input(0)), c = shape_of(last.output(0));
    if (!x || !a || !b || !c || a->size() != b->size()) continue;
    if (allows_zero(first) || allows_zero(last)) continue;
    {
      const auto groups = split_of(*b, *c);
      if (!groups) continue;
      const std::vector<int64_t> perm = *transpose_perm(model.nodes[*t].proto, a->size());
      // A's dim perm[j] becomes the dims B's dim j splits into; the transpose then moves them as one.
      std::vector<std::vector<Dim>> split_a(a->size());
      for (size_t j = 0; j < perm.size(); ++j) split_a[static_cast<size_t>(perm[j])] = (*groups)[j];
      std::vector<Dim> a_split;
      std::vector<int64_t> first_of(a->size());
      for (size_t i = 0; i < a->size(); ++i) {
        first_of[i] = static_cast<int64_t>(a_split.size());
        a_split.insert(a_split.end(), split_a[i].begin(), split_a[i].end());
      }
      std::vector<int64_t> new_perm;
      for (size_t j = 0; j < perm.size(); ++j)
        for (size_t e = 0; e < (*groups)[j].size(); ++e) new_perm.push_back(first_of[static_cast<size_t>(perm[j])] + static_cast<int64_t>(e));
      TensorType x_type;
      x_type.shape = *x;
      const std::string target = add_target(model, constants, first.output(0), x_type, a_split);
      if (target.empty()) continue;
      first.set_input(1, target);
      TensorType a_type = *types(first.output(0));
      a_type.shape = a_split;
      model.value_types[first.output(0)] = to_type_proto(a_type);
      // The last Reshape becomes the Transpose of the split dims, keeping its output's name.
      const std::string out = last.output(0);
      last.Clear();
      last.set_op_type("Transpose");
      last.add_input(first.output(0));
      last.add_output(out);
      auto* attr = last.add_attribute();
      attr->set_name("perm");
      attr->set_type(onnx::AttributeProto::INTS);
      for (int64_t p : new_perm) attr->add_ints(p);
      drop[*t] = true;
      ++merged;
    }
  }
  apply_rewrite(model, drop, {}, {});
  constants.place(model);
  return merged;
}

size_t linear_between_reshapes(OnnxModel& model) {
  const TypeLookup types(model);
  const ValueUses uses(model);
  NewConstants constants(model);
  std::unordered_map<std::string, size_t> reader;  // a value read by one node: that node
  for (size_t k = 0; k < model.nodes.size(); ++k)
    for (const auto& in : model.nodes[k].proto.input()) reader[in] = k;
  std::unordered_set<std::string> graph_outputs;
  for (const auto& out : model.outputs) graph_outputs.insert(out.name);
  auto shape_of = [&](const std::string& name) { return types.dims(name); };
  auto attr_or = [](const onnx::NodeProto& p, const char* name, double fallback) {
    const auto* a = find_attribute(p, name);
    return !a ? fallback : a->type() == onnx::AttributeProto::FLOAT ? static_cast<double>(a->f()) : static_cast<double>(a->i());
  };
  std::vector<bool> drop(model.nodes.size(), false);
  size_t rewritten = 0;
  for (size_t g = 0; g < model.nodes.size(); ++g) {
    auto& gemm = model.nodes[g].proto;
    if (!is_standard_domain(gemm) || gemm.op_type() != "Gemm" || gemm.input_size() < 2) continue;
    if (attr_or(gemm, "alpha", 1.0) != 1.0 || attr_or(gemm, "beta", 1.0) != 1.0 || attr_or(gemm, "transA", 0) != 0)
      continue;
    const bool trans_b = attr_or(gemm, "transB", 0) != 0;
    const auto first_made = uses.producer.find(gemm.input(0));
    if (first_made == uses.producer.end() || uses.count(gemm.input(0)) != 1) continue;
    auto& first = model.nodes[first_made->second].proto;
    if (first.op_type() != "Reshape" || allows_zero(first)) continue;
    const std::string out = gemm.output(0);
    if (uses.count(out) != 1 || graph_outputs.count(out) || !reader.count(out)) continue;
    auto& last = model.nodes[reader.at(out)].proto;
    if (last.op_type() != "Reshape" || last.input(0) != out) continue;
    const Initializer* found = find_initializer(model, gemm.input(1));
    const std::optional<Tensor> weight = found ? std::optional<Tensor>(found->tensor) : std::nullopt;  // the vector grows below
    const auto bias = gemm.input_size() > 2 && !gemm.input(2).empty() ? constant_value(model, gemm.input(2), uses)
                                                                       : std::optional<Tensor>();
    if (!weight || weight->rank() != 2 || (gemm.input_size() > 2 && (!bias || bias->rank() > 1))) continue;
    const auto x = shape_of(first.input(0)), y = shape_of(last.output(0));
    if (!x || !y || y->size() < 2 || y->size() > x->size()) continue;
    // y keeps x's leading dims, one fewer than y's rank; the rest of x is the product's reduced dim.
    const size_t kept = y->size() - 1;
    bool fits = true;
    int64_t reduced = 1;
    for (size_t i = 0; i < x->size() && fits; ++i) {
      if (i < kept) fits = (*x)[i].kind != Dim::Kind::Unknown && (*x)[i] == (*y)[i];
      else if ((*x)[i].is_static()) reduced *= (*x)[i].value;
      else fits = false;
    }
    const auto& w = weight->shape();
    const int64_t k = trans_b ? w[1] : w[0], n = trans_b ? w[0] : w[1];
    if (!fits || reduced != k || !(*y)[kept].is_static() || (*y)[kept].value != n) continue;
    // A transposed weight is "<weight>_transposed", as constant folding names one; made here unless
    // an earlier rewrite made it (a weight two layers share).
    const std::string weight_name = trans_b ? gemm.input(1) + "_transposed" : gemm.input(1);
    if (trans_b && !find_initializer(model, weight_name) && (uses.producer.count(weight_name) || uses.count(weight_name) > 0)) continue;

    std::vector<int64_t> target(kept, 0);
    target.push_back(k);
    first.set_input(1, constants.add(model, first.output(0), Tensor::ints(target)));
    std::vector<Dim> flat(x->begin(), x->begin() + static_cast<std::ptrdiff_t>(kept));
    flat.push_back(Dim::fixed(k));
    TensorType flat_type = *types(first.output(0));
    flat_type.shape = flat;
    model.value_types[first.output(0)] = to_type_proto(flat_type);

    if (trans_b && !find_initializer(model, weight_name))
      model.initializers.push_back(Initializer{weight_name, borrow_tensor(to_aten(*weight).t().contiguous()),
                                               "folded at export by onnxport: parameter " + gemm.input(1) +
                                                   " through Transpose"});
    // The Gemm becomes the MatMul; the Reshape after it the bias's Add (or goes).
    const std::string result = last.output(0);
    const bool with_bias = gemm.input_size() > 2 && !gemm.input(2).empty();
    const std::string bias_name = with_bias ? gemm.input(2) : "";
    gemm = simple_node("MatMul", {first.output(0), weight_name}, with_bias ? out : result);
    if (with_bias) {
      model.value_types[out] = to_type_proto(*types(result));
      last = simple_node("Add", {out, bias_name}, result);
    } else {
      drop[reader.at(out)] = true;
    }
    ++rewritten;
  }
  if (rewritten > 0) apply_rewrite(model, drop, {}, {});
  constants.place(model);
  return rewritten;
}

size_t constant_reshape_targets(OnnxModel& model) {
  const TypeLookup types(model);
  const ValueUses uses(model);
  NewConstants constants(model);
  size_t rewritten = 0;
  for (auto& node : model.nodes) {
    auto& p = node.proto;
    if (!is_standard_domain(p) || p.op_type() != "Reshape" || p.input_size() != 2) continue;
    if (allows_zero(p)) continue;
    if (is_constant(model, p.input(1), uses)) continue;
    const auto in = types(p.input(0)), out = types(p.output(0));
    if (!in || !out || !out->shape) continue;
    const std::string target = add_target(model, constants, p.output(0), *in, *out->shape);
    if (target.empty()) continue;
    p.set_input(1, target);
    ++rewritten;
  }
  constants.place(model);
  return rewritten;  // the nodes that computed the targets go with dead-code elimination
}

}  // namespace onnxport::core
