#include <unordered_map>
#include <unordered_set>

#include "1_base/huge_pages.h"
#include "2_eval/fold_kernels.h"
#include "2_eval/transposes_ahead.h"
#include "3_export/5_passes/passes.h"
#include "1_base/torch_tensors.h"

namespace onnxport::core {

namespace {

using ConstantValues = std::unordered_map<std::string, at::Tensor>;

bool is_constant_node(const onnx::NodeProto& p) {
  return p.domain().empty() && p.op_type() == "Constant" && p.attribute_size() == 1 && p.attribute(0).has_t();
}

bool is_2d_transpose(const onnx::NodeProto& p, const std::vector<at::Tensor>& inputs) {
  if (p.op_type() != "Transpose" || inputs.size() != 1 || !inputs[0].defined() || inputs[0].dim() != 2) return false;
  const auto* perm = find_attribute(p, "perm");
  return !perm || (perm->ints_size() == 2 && perm->ints(0) == 1 && perm->ints(1) == 0);
}

// Whether a value other than `name` holds any of `t`'s bytes: an evaluator result may be a view of
// its input, and two parameters may be slices of one storage.
bool shares_bytes(const std::string& name, const at::Tensor& t, const ConstantValues& consts) {
  const auto* begin = static_cast<const char*>(t.data_ptr());
  const auto* end = begin + t.nbytes();
  for (const auto& [other, c] : consts) {
    if (other == name || !c.defined() || !c.has_storage()) continue;
    const auto* b = static_cast<const char*>(c.storage().data_ptr().get());
    if (b && b < end && begin < b + c.storage().nbytes()) return true;
  }
  return false;
}

// The 2-d transposes the fold makes (a Linear's weight as MatMul reads it), from wherever costs least.
class Transposer {
 public:
  explicit Transposer(TransposesAhead* ahead) : ahead_(ahead) {}
  // The copy made ahead on another thread; else, where `may_overwrite`, `source` transposed over
  // its own bytes (pages the process has touched) through a scratch buffer reused for every
  // source; else a copy on huge pages, as the writer reads them (huge_pages.h).
  at::Tensor transpose(const at::Tensor& source, bool may_overwrite) {
    if (ahead_)
      if (auto made = ahead_->take(source)) return *made;
    if (!may_overwrite || !source.is_contiguous()) return arena_.copy_of(source.t());
    ++written_over;
    if (!scratch_.defined() || scratch_.nbytes() < source.nbytes())
      scratch_ = at::empty({static_cast<int64_t>(source.nbytes())}, at::TensorOptions().dtype(at::kByte));
    const auto dtype = at::TensorOptions().dtype(source.scalar_type());
    at::Tensor before = at::from_blob(scratch_.data_ptr(), source.sizes(), dtype);
    before.copy_(source);
    at::Tensor result = at::from_blob(source.data_ptr(), {source.size(1), source.size(0)}, [source](void*) {}, dtype);
    result.copy_(before.t());
    return result;
  }

  size_t written_over = 0;

 private:
  TransposesAhead* ahead_;
  HugePageArena arena_;
  at::Tensor scratch_;
};

// The node's inputs as tensors, or nullopt if one of them is not known at export time. Shape of
// a value whose shape is fully static needs no data: a placeholder of that shape stands in.
std::optional<std::vector<at::Tensor>> constant_inputs(const onnx::NodeProto& p, const ConstantValues& consts,
                                                       const OnnxModel& model) {
  std::vector<at::Tensor> inputs;
  for (const auto& name : p.input()) {
    if (name.empty()) {
      inputs.emplace_back();
      continue;
    }
    if (auto c = consts.find(name); c != consts.end()) {
      inputs.push_back(c->second);
      continue;
    }
    auto type = model.value_types.find(name);
    if (p.op_type() != "Shape" || p.attribute_size() != 0 || type == model.value_types.end()) return std::nullopt;
    auto shape = from_type_proto(type->second).static_shape();
    if (!shape) return std::nullopt;
    inputs.push_back(at::empty(*shape, at::TensorOptions().dtype(at::kFloat)));
  }
  return inputs;
}

// The name a value derived from one parameter takes when the parameter lives on beside it:
// "fc.weight" through Transpose -> "fc.weight_transposed".
std::string derived_name(const std::string& parameter, const std::string& op) {
  return parameter + (op == "Transpose" ? std::string("_transposed") : "_" + op);
}

}  // namespace

// Where an initializer is: the model's list (parameters, large constants) or the pass's list of
// folded values. An initializer whose readers were all folded is dead and not written.
struct Slot {
  bool folded;
  size_t index;
};

FoldStats fold_constants(OnnxModel& model, int opset, bool parameters_are_constant, ParameterBytes bytes) {
  FoldStats stats;
  ConstantValues consts;
  if (parameters_are_constant)
    for (const auto& init : model.initializers) consts[init.name] = to_aten(init.tensor);
  // Readers left per value (graph outputs count as one). An initializer whose last reader is
  // folded is dropped at once, so a folded copy (a transposed weight) and all the originals are
  // never in memory together.
  std::unordered_map<std::string, int> readers = ValueUses(model).readers;
  std::unordered_map<std::string, Slot> slot_of;
  for (size_t i = 0; i < model.initializers.size(); ++i) slot_of.emplace(model.initializers[i].name, Slot{false, i});
  std::vector<bool> dead_original(model.initializers.size()), dead_folded;
  // A parameter (an initializer before this pass) that one fold consumes entirely, giving a value
  // of the same size (Transpose, Reshape, Cast...), lends its name to the result: the weight keeps
  // its module path, and the initializer's doc_string says what was done to it.
  std::unordered_set<std::string> parameters;
  for (const auto& init : model.initializers) parameters.insert(init.name);
  std::unordered_map<std::string, std::string> renamed;  // folded output -> the parameter name it took
  std::unordered_set<std::string> graph_outputs;
  for (const auto& out : model.outputs) graph_outputs.insert(out.name);
  // A value folded from a parameter that other nodes still read at that point (TorchScript's
  // constant pooling gives two layers one weight, each Transpose folding it) is named once the
  // pass has seen every reader: after the parameter if the parameter is gone by then, else after
  // it with the op ("fc.weight_transposed"). Listed in the order they were folded.
  struct Pending {
    std::string name, parameter, op;
  };
  std::vector<Pending> pending;
  // Folds already made, by node_key with each input's version (a name the pass binds to a new
  // value, as a parameter's name passing to its folded value, counts up): a repeat of one reads
  // its value (the two layers' Transposes of a pooled weight make one tensor).
  std::unordered_map<std::string, int> version;
  struct Made {
    std::string name;
    int version;
  };
  std::unordered_map<std::string, Made> made;
  Transposer transposer(bytes.transposed_ahead);

  std::vector<OnnxNode> kept;
  std::vector<Initializer> folded;
  kept.reserve(model.nodes.size());
  for (auto& node : model.nodes) {
    auto& p = node.proto;
    replace_uses(p, renamed);
    if (is_constant_node(p)) consts[p.output(0)] = to_aten(from_tensor_proto(p.attribute(0).t()));
    const bool foldable = !is_constant_node(p) && has_evaluator(p) && p.output_size() == 1 &&
                          readers[p.output(0)] > 0 && !graph_outputs.count(p.output(0));
    std::optional<at::Tensor> result;
    std::string key;
    const Made* repeat = nullptr;
    if (foldable)
      if (auto inputs = constant_inputs(p, consts, model)) {
        key = node_key(p, &version);
        if (auto m = made.find(key); m != made.end() && version[m->second.name] == m->second.version &&
                                     consts.count(m->second.name))
          repeat = &m->second;
        else if (is_2d_transpose(p, *inputs))
          result = transposer.transpose((*inputs)[0], bytes.private_to_export && readers[p.input(0)] == 1 &&
                                                          !shares_bytes(p.input(0), (*inputs)[0], consts));
        else
          result = evaluate_node(p, *inputs, opset);
      }
    if (!result && !repeat) {
      kept.push_back(std::move(node));
      continue;
    }
    ++stats.folded_nodes;
    // The other inputs may only be small constants (a Reshape's shape): a value computed from two
    // initializers replaces neither.
    size_t initializer_inputs = 0;
    for (const auto& name : p.input()) initializer_inputs += slot_of.count(name);
    const int64_t numel = repeat ? consts.at(repeat->name).numel() : result->numel();
    const std::string* replaced = nullptr;
    std::string parameter;  // the one parameter this value is that parameter's values through p
    std::string replaced_doc;
    for (const auto& name : p.input()) {
      auto c = consts.find(name);
      if (name.empty() || c == consts.end()) {
        if (!name.empty()) --readers[name];
        continue;
      }
      const bool whole = initializer_inputs == 1 && parameters.count(name) && c->second.numel() == numel;
      if (whole) parameter = name;
      if (--readers[name] > 0) continue;
      if (whole) replaced = &name;
      consts.erase(c);
      auto slot = slot_of.find(name);
      if (slot == slot_of.end()) continue;
      Initializer& dead = slot->second.folded ? folded[slot->second.index] : model.initializers[slot->second.index];
      if (replaced == &name) replaced_doc = dead.doc;
      dead.tensor = Tensor();  // its bytes go now, not after the pass
      (slot->second.folded ? dead_folded[slot->second.index] : dead_original[slot->second.index]) = true;
      slot_of.erase(slot);
    }
    if (repeat) {  // the earlier fold's value serves this node's readers too
      renamed[p.output(0)] = repeat->name;
      readers[repeat->name] += readers[p.output(0)];
      continue;
    }
    // The folded value becomes an initializer (what ORT expects for shape inputs, too); Constant
    // nodes left without readers disappear in dead-code elimination.
    std::string out = p.output(0);
    std::string doc;
    if (replaced) {
      doc = replaced_doc.empty() ? "folded at export by onnxport: parameter " + *replaced + " through " + p.op_type()
                                 : replaced_doc + ", " + p.op_type();
      renamed[out] = *replaced;
      readers[*replaced] = readers[out];
      out = *replaced;
    } else if (!parameter.empty()) {
      const auto slot = slot_of.at(parameter);
      const std::string& parameter_doc =
          slot.folded ? folded[slot.index].doc : model.initializers[slot.index].doc;
      doc = parameter_doc.empty() ? "folded at export by onnxport: parameter " + parameter + " through " + p.op_type()
                                  : parameter_doc + ", " + p.op_type();
      pending.push_back(Pending{out, parameter, p.op_type()});
      parameters.insert(out);  // a chain of folds on it passes the name on
    }
    slot_of[out] = Slot{true, folded.size()};
    folded.push_back(Initializer{out, borrow_tensor(*result), doc});
    dead_folded.push_back(false);
    consts[out] = to_aten(folded.back().tensor);
    model.value_types[out] = to_type_proto(type_of_tensor(folded.back().tensor));
    made[key] = Made{out, ++version[out]};
  }
  model.nodes = std::move(kept);
  stats.transposes_over_weights = transposer.written_over;

  // Name the pending values now that every reader has been seen.
  std::unordered_set<std::string> taken = value_names(model);
  for (const auto& [name, slot] : slot_of) taken.insert(name);
  std::unordered_map<std::string, std::string> final_names;  // a pending value -> its name
  std::unordered_map<std::string, std::string> base_of;      // a pending value -> the name it derives from
  for (const auto& value : pending) {
    const std::string& source = value.parameter;  // a parameter, or an earlier pending value
    std::string base = source;
    if (auto f = final_names.find(source); f != final_names.end())
      base = f->second;
    else if (auto b = base_of.find(source); b != base_of.end())
      base = b->second;
    base_of[value.name] = base;
    auto slot = slot_of.find(value.name);
    if (slot == slot_of.end() || !slot->second.folded) continue;  // consumed by a later fold
    std::string name;
    if (!slot_of.count(source) && !taken.count(base))
      name = base;
    else if (!taken.count(derived_name(base, value.op)))
      name = derived_name(base, value.op);
    else
      continue;
    taken.insert(name);
    final_names[value.name] = name;
    folded[slot->second.index].name = name;
    if (auto type = model.value_types.find(value.name); type != model.value_types.end()) {
      onnx::TypeProto t = type->second;
      model.value_types.erase(type);
      model.value_types[name] = std::move(t);
    }
  }
  replace_uses(model.nodes, final_names);

  std::vector<Initializer> live;
  for (size_t i = 0; i < model.initializers.size(); ++i)
    if (!dead_original[i]) live.push_back(std::move(model.initializers[i]));
  for (size_t i = 0; i < folded.size(); ++i)
    if (!dead_folded[i]) live.push_back(std::move(folded[i]));
  model.initializers = std::move(live);
  return stats;
}

}  // namespace onnxport::core
