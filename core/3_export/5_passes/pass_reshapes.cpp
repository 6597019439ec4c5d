#include <optional>
#include <unordered_set>

#include "3_export/5_passes/passes.h"

namespace onnxport::core {

namespace {

// Reshape-14's allowzero: a 0 in the target is then a size, not the input's dim.
bool allows_zero(const onnx::NodeProto& reshape) {
  const auto* z = find_attribute(reshape, "allowzero");
  return z && z->i() != 0;
}

bool is_constant(const OnnxModel& model, const std::string& name, const ValueUses& uses) {
  if (find_initializer(model, name)) return true;
  const auto made = uses.producer.find(name);
  return made != uses.producer.end() && model.nodes[made->second].proto.op_type() == "Constant";
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

// A constant Reshape target giving `dims` from `in` (see target_from_types), written as an
// initializer; its name, or "" when the dims do not say enough.
std::string add_target(OnnxModel& model, std::unordered_set<std::string>& taken, const std::string& base,
                       const TensorType& in, const std::vector<Dim>& dims) {
  TensorType out;
  out.shape = dims;
  const auto target = target_from_types(in, out);
  if (!target) return "";
  std::string name = base + "_target";
  for (int k = 1; taken.count(name); ++k) name = base + "_target_" + std::to_string(k);
  taken.insert(name);
  model.initializers.push_back(Initializer{name, Tensor::ints(*target), ""});
  model.value_types[name] = to_type_proto(type_of_tensor(model.initializers.back().tensor));
  return name;
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

std::vector<int64_t> permutation(const onnx::NodeProto& transpose, size_t rank) {
  std::vector<int64_t> perm;
  if (const auto* attr = find_attribute(transpose, "perm")) {
    for (int i = 0; i < attr->ints_size(); ++i) perm.push_back(attr->ints(i));
  } else {
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  }
  return perm;
}

}  // namespace

size_t merge_reshape_transpose_reshape(OnnxModel& model) {
  const auto types = known_types(model);
  const ValueUses uses(model);
  std::unordered_set<std::string> taken = value_names(model);
  std::vector<bool> drop(model.nodes.size(), false);
  size_t merged = 0;
  auto producer = [&](const std::string& name, const char* op) -> std::optional<size_t> {
    const auto made = uses.producer.find(name);
    if (made == uses.producer.end() || drop[made->second] || uses.count(name) != 1) return std::nullopt;
    const auto& p = model.nodes[made->second].proto;
    if (!is_standard_domain(p) || p.op_type() != op) return std::nullopt;
    return made->second;
  };
  auto shape_of = [&](const std::string& name) -> std::optional<std::vector<Dim>> {
    const auto t = types.find(name);
    if (t == types.end() || !t->second.shape) return std::nullopt;
    return t->second.shape;
  };
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
      const std::vector<int64_t> perm = permutation(model.nodes[*t].proto, a->size());
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
      const std::string target = add_target(model, taken, first.output(0), x_type, a_split);
      if (target.empty()) continue;
      first.set_input(1, target);
      TensorType a_type = types.at(first.output(0));
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
  return merged;
}

size_t constant_reshape_targets(OnnxModel& model) {
  const auto types = known_types(model);
  const ValueUses uses(model);
  std::unordered_set<std::string> taken = value_names(model);
  size_t rewritten = 0;
  for (auto& node : model.nodes) {
    auto& p = node.proto;
    if (!is_standard_domain(p) || p.op_type() != "Reshape" || p.input_size() != 2) continue;
    if (allows_zero(p)) continue;
    if (is_constant(model, p.input(1), uses)) continue;
    const auto in = types.find(p.input(0)), out = types.find(p.output(0));
    if (in == types.end() || out == types.end()) continue;
    if (!out->second.shape) continue;
    const std::string target = add_target(model, taken, p.output(0), in->second, *out->second.shape);
    if (target.empty()) continue;
    p.set_input(1, target);
    ++rewritten;
  }
  return rewritten;  // the nodes that computed the targets go with dead-code elimination
}

}  // namespace onnxport::core
