#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "3_export/5_passes/passes.h"

namespace onnxport::core {

namespace {

void set_perm(onnx::NodeProto& transpose, const std::vector<int64_t>& perm) {
  for (auto& attr : *transpose.mutable_attribute())
    if (attr.name() == "perm") {
      attr.clear_ints();
      for (int64_t i : perm) attr.add_ints(i);
    }
}

}  // namespace

size_t merge_transposes(OnnxModel& model) {
  const ValueUses uses(model);
  std::vector<bool> drop(model.nodes.size(), false);
  size_t merged = 0;
  for (size_t k = 0; k < model.nodes.size(); ++k) {
    auto& second = model.nodes[k].proto;
    if (!is_standard_domain(second) || second.op_type() != "Transpose" || second.input_size() != 1) continue;
    const auto made = uses.producer.find(second.input(0));
    if (made == uses.producer.end() || drop[made->second] || uses.count(second.input(0)) != 1) continue;
    const auto& first = model.nodes[made->second].proto;
    if (!is_standard_domain(first) || first.op_type() != "Transpose") continue;
    const auto p1 = transpose_perm(first), p2 = transpose_perm(second);
    if (!p1 || !p2 || p1->size() != p2->size()) continue;
    // second's dim i is first's dim p2[i], which is the input's dim p1[p2[i]].
    std::vector<int64_t> composed;
    for (int64_t i : *p2) composed.push_back((*p1)[static_cast<size_t>(i)]);
    second.set_input(0, first.input(0));
    set_perm(second, composed);
    drop[made->second] = true;
    ++merged;
  }
  apply_rewrite(model, drop, {}, {});
  return merged;
}

}  // namespace onnxport::core

// ---- moving a Transpose of the leading axes across ops that act on the last axis --------------

namespace onnxport::core {

namespace {

bool keeps_last_axis(const std::vector<int64_t>& perm) {
  return !perm.empty() && perm.back() == static_cast<int64_t>(perm.size()) - 1;
}

std::optional<int64_t> constant_rank(const OnnxModel& model, const std::string& name, const ValueUses& uses) {
  const auto value = constant_value(model, name, uses);
  if (!value) return std::nullopt;
  return value->rank();
}

std::optional<std::vector<int64_t>> constant_ints(const OnnxModel& model, const std::string& name,
                                                  const ValueUses& uses) {
  const auto value = constant_value(model, name, uses);
  if (!value || value->dtype() != DType::Int64) return std::nullopt;
  return value->as_int64s();
}

// The ops that treat every leading position alike: elementwise with a constant of rank <= 1
// (broadcast along the last axis), MatMul by a 2-d constant, and unary elementwise ops. `v` is the
// input whose leading axes would be permuted.
bool acts_on_last_axis(const OnnxModel& model, const onnx::NodeProto& p, const std::string& v, const ValueUses& uses) {
  if (!is_standard_domain(p) || p.output_size() != 1) return false;
  static const std::unordered_set<std::string> unary{"Relu", "Erf", "Sigmoid", "Tanh", "Neg", "Abs", "Exp", "Sqrt"};
  const std::string& op = p.op_type();
  if (unary.count(op)) return p.input_size() == 1 && p.input(0) == v;
  if (op == "MatMul") {
    const auto rank = p.input_size() == 2 && p.input(0) == v ? constant_rank(model, p.input(1), uses) : std::nullopt;
    return rank == 2;
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    if (p.input_size() != 2 || (p.input(0) == v) == (p.input(1) == v)) return false;
    const auto rank = constant_rank(model, p.input(0) == v ? p.input(1) : p.input(0), uses);
    return rank && *rank <= 1;
  }
  return false;
}

std::vector<int64_t> compose(const std::vector<int64_t>& first, const std::vector<int64_t>& then) {
  std::vector<int64_t> out;
  for (int64_t i : then) out.push_back(first[static_cast<size_t>(i)]);
  return out;
}

struct Model {
  OnnxModel& model;
  ValueUses uses;
  std::unordered_map<std::string, std::vector<size_t>> consumers;
  std::unordered_set<std::string> graph_outputs;
  TypeLookup types;

  explicit Model(OnnxModel& m) : model(m), uses(m), types(m) {
    for (size_t k = 0; k < m.nodes.size(); ++k)
      for (const auto& in : m.nodes[k].proto.input()) consumers[in].push_back(k);
    for (const auto& out : m.outputs) graph_outputs.insert(out.name);
  }
  // The nodes that read `v`, when nothing else does (no graph output, no sub-graph capture).
  std::optional<std::vector<size_t>> only_readers(const std::string& v) const {
    if (graph_outputs.count(v)) return std::nullopt;
    const auto c = consumers.find(v);
    if (c == consumers.end() || uses.count(v) != static_cast<int>(c->second.size())) return std::nullopt;
    return c->second;
  }
  std::optional<std::vector<Dim>> dims(const std::string& v) const { return types.dims(v); }
  // v's type with its dims taken as dims[from[i]] at place i.
  void permute_type(const std::string& v, const std::vector<int64_t>& from) {
    TensorType t = *types(v);
    std::vector<Dim> moved;
    for (int64_t i : from) moved.push_back((*t.shape)[static_cast<size_t>(i)]);
    t.shape = moved;
    model.value_types[v] = to_type_proto(t);
  }
};

// How many leading dims a Reshape (constant target) keeps as they are: each 0 or the input's
// static size; nothing when its target is not constant.
std::optional<size_t> kept_leading_dims(const Model& m, const onnx::NodeProto& reshape) {
  const auto target = constant_ints(m.model, reshape.input(1), m.uses);
  const auto in = m.dims(reshape.input(0));
  if (!target || !in || target->empty()) return std::nullopt;
  const size_t k = std::min(in->size(), target->size()) - 1;
  for (size_t i = 0; i < k; ++i)
    if ((*target)[i] != 0 && !((*in)[i].is_static() && (*in)[i].value == (*target)[i])) return std::nullopt;
  return k;
}

// A Reshape's target with its first `from.size()` entries taken as target[from[i]].
std::string permuted_target(Model& m, const onnx::NodeProto& reshape, const std::vector<int64_t>& from,
                            NewConstants& constants) {
  std::vector<int64_t> target = *constant_ints(m.model, reshape.input(1), m.uses);
  const std::vector<int64_t> before = target;
  for (size_t i = 0; i < from.size(); ++i) target[i] = before[static_cast<size_t>(from[i])];
  return constants.add(m.model, reshape.output(0), Tensor::ints(target));
}

// Removes the Transpose node `t`: its readers read its input.
void remove_transpose(Model& m, size_t t) {
  const std::string from = m.model.nodes[t].proto.input(0), to = m.model.nodes[t].proto.output(0);
  for (auto& node : m.model.nodes)
    for (int i = 0; i < node.proto.input_size(); ++i)
      if (node.proto.input(i) == to) node.proto.set_input(i, from);
  m.model.nodes.erase(m.model.nodes.begin() + static_cast<std::ptrdiff_t>(t));
}

// Moving a Transpose down: what it passes and where it ends.
struct DownPlan {
  std::vector<std::pair<std::string, std::vector<int64_t>>> values;   // value, the perm it held
  std::vector<std::pair<size_t, std::vector<int64_t>>> reshapes;      // node, the perm at its input
  std::vector<std::pair<size_t, std::vector<int64_t>>> ends;          // Transpose node, perm at its input
};

bool plan_down(const Model& m, const std::string& v, const std::vector<int64_t>& perm, DownPlan& plan, int depth) {
  const auto readers = m.only_readers(v);
  if (!readers || readers->empty() || depth > 16) return false;
  for (size_t c : *readers) {
    const auto& p = m.model.nodes[c].proto;
    if (!is_standard_domain(p)) return false;
    if (p.op_type() == "Transpose") {
      if (!transpose_perm(p) || transpose_perm(p)->size() != perm.size()) return false;
      plan.ends.push_back({c, perm});
    } else if (p.op_type() == "Split" && p.input(0) == v) {
      const auto* axis = find_attribute(p, "axis");
      const int64_t rank = static_cast<int64_t>(perm.size());
      const int64_t a = axis ? (axis->i() < 0 ? axis->i() + rank : axis->i()) : 0;
      if (a != rank - 1) return false;
      for (const auto& out : p.output()) {
        plan.values.push_back({out, perm});
        if (!plan_down(m, out, perm, plan, depth + 1)) return false;
      }
    } else if (p.op_type() == "Reshape" && p.input(0) == v) {
      const auto kept = kept_leading_dims(m, p);
      const auto out = m.dims(p.output(0));
      if (!kept || !out || *kept + 1 != perm.size()) return false;  // only the last dim may change
      std::vector<int64_t> extended(perm.begin(), perm.end() - 1);
      for (size_t i = *kept; i < out->size(); ++i) extended.push_back(static_cast<int64_t>(i));
      plan.reshapes.push_back({c, perm});
      plan.values.push_back({p.output(0), extended});
      if (!plan_down(m, p.output(0), extended, plan, depth + 1)) return false;
    } else if (acts_on_last_axis(m.model, p, v, m.uses)) {
      plan.values.push_back({p.output(0), perm});
      if (!plan_down(m, p.output(0), perm, plan, depth + 1)) return false;
    } else {
      return false;
    }
  }
  return true;
}

// Moves the Transpose `t` down to the Transposes every path from it ends in; true when it did.
bool sink(Model& m, size_t t, NewConstants& constants) {
  const auto& transpose = m.model.nodes[t].proto;
  const auto perm = transpose_perm(transpose);
  if (!perm || !keeps_last_axis(*perm) || !m.dims(transpose.output(0))) return false;
  DownPlan plan;
  if (!plan_down(m, transpose.output(0), *perm, plan, 0)) return false;
  for (const auto& [v, p] : plan.values)
    if (!m.dims(v) || m.dims(v)->size() != p.size()) return false;
  // Each value now holds what it held before the perm: dim p[i] of it is the old dim i.
  for (const auto& [v, p] : plan.values) {
    std::vector<int64_t> inverse(p.size());
    for (size_t i = 0; i < p.size(); ++i) inverse[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
    m.permute_type(v, inverse);
  }
  for (const auto& [c, p] : plan.reshapes) {
    std::vector<int64_t> inverse(p.size() - 1);
    for (size_t i = 0; i + 1 < p.size(); ++i) inverse[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
    auto& reshape = m.model.nodes[c].proto;
    reshape.set_input(1, permuted_target(m, reshape, inverse, constants));
  }
  for (const auto& [c, p] : plan.ends) {
    auto& end = m.model.nodes[c].proto;
    set_perm(end, compose(p, *transpose_perm(end)));
  }
  remove_transpose(m, t);
  return true;
}

// Moves the Transpose `t` up to the Transpose its input comes from; true when it did.
bool hoist(Model& m, size_t t, NewConstants& constants) {
  const auto& transpose = m.model.nodes[t].proto;
  auto perm = transpose_perm(transpose);
  // Its readers will read its input: they must all be nodes of this graph (no sub-graph capture).
  if (!perm || !keeps_last_axis(*perm) || !m.only_readers(transpose.output(0))) return false;
  std::vector<std::pair<std::string, std::vector<int64_t>>> values;  // value, the perm it will hold
  std::vector<std::pair<size_t, std::vector<int64_t>>> reshapes;     // node, the perm at its output
  std::string v = transpose.input(0);
  for (int depth = 0; depth < 16; ++depth) {
    const auto made = m.uses.producer.find(v);
    if (made == m.uses.producer.end() || m.uses.count(v) != 1 || m.graph_outputs.count(v)) return false;
    const auto& p = m.model.nodes[made->second].proto;
    const auto dims = m.dims(v);
    if (!dims || dims->size() != perm->size() || !is_standard_domain(p)) return false;
    values.push_back({v, *perm});
    if (p.op_type() == "Transpose") {
      const auto first = transpose_perm(p);
      if (!first || first->size() != perm->size()) return false;
      for (const auto& [value, q] : values) m.permute_type(value, q);
      for (const auto& [c, q] : reshapes) {
        auto& reshape = m.model.nodes[c].proto;
        reshape.set_input(1, permuted_target(m, reshape, std::vector<int64_t>(q.begin(), q.end() - 1), constants));
      }
      set_perm(m.model.nodes[made->second].proto, compose(*first, *perm));
      remove_transpose(m, t);
      return true;
    }
    if (p.op_type() == "Reshape") {
      const auto kept = kept_leading_dims(m, p);
      const auto in = m.dims(p.input(0));
      if (!kept || !in || *kept + 1 != perm->size()) return false;  // only the last dim may change
      reshapes.push_back({made->second, *perm});
      std::vector<int64_t> extended(perm->begin(), perm->end() - 1);
      for (size_t i = *kept; i < in->size(); ++i) extended.push_back(static_cast<int64_t>(i));
      *perm = extended;
      v = p.input(0);
      continue;
    }
    std::string variable;
    for (const auto& in : p.input())
      if (!constant_rank(m.model, in, m.uses)) variable = in;
    if (variable.empty() || !acts_on_last_axis(m.model, p, variable, m.uses)) return false;
    v = variable;
  }
  return false;
}

}  // namespace

size_t move_transposes_to_transposes(OnnxModel& model) {
  size_t moved = 0;
  for (bool again = true; again;) {
    again = false;
    Model m(model);
    NewConstants constants(model);
    for (size_t t = 0; t < model.nodes.size(); ++t) {
      const auto& p = model.nodes[t].proto;
      if (!is_standard_domain(p) || p.op_type() != "Transpose" || p.input_size() != 1) continue;
      if (sink(m, t, constants) || hoist(m, t, constants)) {
        constants.place(model);
        ++moved;
        again = true;  // the maps are stale: start over
        break;
      }
    }
  }
  return moved;
}

}  // namespace onnxport::core
