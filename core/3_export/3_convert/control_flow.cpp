// TorchScript control flow -> ONNX If/Loop. Branches and loop bodies are converted by the same
// driver into ONNX sub-graphs (the SDK's Subgraph attribute, which op packs can use too).
// Values a block writes that live outside it (x.add_ in a branch, lst.append in a loop) become
// extra If outputs / loop-carried values; lists carried through a loop become ONNX sequences.
#include <algorithm>
#include <limits>

#include "3_export/3_convert/converter.h"
#include "onnxport/errors.h"

namespace onnxport::core {

namespace {

// The dtype a TorchScript value has in the ONNX graph (numbers are 0-d tensors; floats are
// float32 like the constants the builder materializes), or Undefined if unknown.
DType onnx_dtype_of(const torch::jit::Value* v) {
  const auto k = v->type()->kind();
  if (k == c10::TypeKind::IntType) return DType::Int64;
  if (k == c10::TypeKind::FloatType) return DType::Float;
  if (k == c10::TypeKind::BoolType) return DType::Bool;
  return real_pair_type(tensor_type_of(v, false)).dtype;  // a complex value is its real pair
}

// Loop-carried and branch values may change size: keep dtype and rank.
TensorType dims_unknown(TensorType t) {
  if (t.shape)
    for (Dim& d : *t.shape) d = Dim::unknown();
  return t;
}

// A branch output standing for no value on that path: None, or prim::Uninitialized (never read).
bool is_placeholder_output(const torch::jit::Value* v) {
  return v->type()->kind() == c10::TypeKind::NoneType || v->node()->kind() == c10::prim::Uninitialized;
}

// What a placeholder becomes: one element of the other branch's dtype (float32 if unknown) and,
// when known, rank, so the If output keeps that rank.
Tensor placeholder_like(const Converter::OutputForm& form) {
  const DType dtype = form.dtype == DType::Undefined ? DType::Float : form.dtype;
  const Tensor zero = Tensor::scalar_of(dtype, 0);
  const auto* bytes = static_cast<const uint8_t*>(zero.data());
  return Tensor(dtype, std::vector<int64_t>(form.rank.value_or(0), 1),
                std::vector<uint8_t>(bytes, bytes + zero.nbytes()));
}

Subgraph::Input input_like(const Value* v) { return {dims_unknown(v->type()), v->is_sequence()}; }

// Whether a loop body's result `v` is always its carried input `carried` itself: directly, refined
// (prim::unchecked_cast), or chosen by a prim::If whose branches all give it.
bool is_carried_unchanged(const torch::jit::Value* v, const torch::jit::Value* carried) {
  if (v == carried) return true;
  const torch::jit::Node* node = v->node();
  if (node->kind() == c10::prim::unchecked_cast) return is_carried_unchanged(node->input(0), carried);
  if (node->kind() != c10::prim::If) return false;
  for (const torch::jit::Block* b : node->blocks())
    if (!is_carried_unchanged(b->outputs()[v->offset()], carried)) return false;
  return true;
}

// Whether `v` is a list known element by element. A loop reading one would make it an ONNX
// sequence, whose elements lose their shapes (and a list of lists has no ONNX form at all).
bool known_list(const Value* v) { return v->is_list() && !v->elements().empty(); }

// The loop's constant condition of continuing, when its body gives one (a for loop).
bool continues_always(const torch::jit::Block* body) {
  const auto cond = torch::jit::toIValue(body->outputs()[0]);
  return cond && cond->isBool() && cond->toBool();
}

}  // namespace

std::optional<int64_t> Converter::unrollable_trip_count(const torch::jit::Node* n) {
  constexpr int64_t kMaxUnrolled = 64;
  const auto trips = lookup(n->inputs()[0])->maybe_int();
  const auto start = lookup(n->inputs()[1])->maybe_bool();
  const auto* body = n->blocks()[0];
  if (!trips || *trips > kMaxUnrolled || !start || !*start || !continues_always(body)) return std::nullopt;
  bool reads_known_list = false;
  std::function<void(const torch::jit::Block*)> visit = [&](const torch::jit::Block* b) {
    for (const auto* inner : b->nodes()) {
      for (const auto* sub : inner->blocks()) visit(sub);
      for (const auto* in : inner->inputs())
        if (env_.count(in) && known_list(env_.at(in))) reads_known_list = true;  // outer values only: the body is not converted yet
    }
  };
  visit(body);
  return reads_known_list ? trips : std::nullopt;
}

// The body converted once per iteration in the enclosing graph, the iteration a constant.
void Converter::unroll_loop(const torch::jit::Node* n, int64_t trips) {
  const auto* body = n->blocks()[0];
  const size_t num_carried = n->outputs().size();
  std::vector<Value*> carried;
  for (size_t i = 0; i < num_carried; ++i) carried.push_back(lookup(n->inputs()[2 + i]));
  for (int64_t iteration = 0; iteration < trips; ++iteration) {
    CoreValue* index = builder_.add_torch_constant(iteration, {});
    index->set_scalar(true);
    env_[body->inputs()[0]] = index;
    for (size_t i = 0; i < num_carried; ++i) env_[body->inputs()[1 + i]] = carried[i];
    convert_block(body);
    for (size_t i = 0; i < num_carried; ++i) carried[i] = lookup(body->outputs()[1 + i]);
  }
  for (size_t i = 0; i < num_carried; ++i) env_[n->outputs()[i]] = carried[i];
}

Value* Converter::as_sequence(Value* v, DType element_hint) {
  if (v->is_sequence()) return v;
  if (!v->is_list()) throw ExportError("expected a list to carry through control flow, got " + v->describe());
  // Sequences exist from opset 11, but a sequence carried through a Loop unchanged needs
  // Identity on sequences (opset 14) or the checker's sequence support of opset 13.
  if (ctx_.options.opset_version < 13)
    throw ExportError(
        "a list changed inside a loop or branch becomes an ONNX sequence, which onnxport emits "
        "from opset 13",
        ErrorContext::for_file(ctx_.model_file, "export with --opset 13 or later"));
  if (v->elements().empty())
    return builder_.op(
        "SequenceEmpty", {},
        {{"dtype_i", static_cast<int64_t>(element_hint == DType::Undefined ? DType::Float : element_hint)}});
  return builder_.op("SequenceConstruct", v->elements());
}

void Converter::convert_if(const torch::jit::Node* n) {
  Value* cond = lookup(n->input());
  if (auto known = cond->maybe_bool()) {  // a branch decided at export time
    const auto* block = n->blocks()[*known ? 0 : 1];
    convert_block(block);
    for (size_t i = 0; i < n->outputs().size(); ++i) env_[n->outputs()[i]] = lookup(block->outputs()[i]);
    return;
  }
  builder_.set_origin(core_origin(n));
  cond = cast_to(cond, DType::Bool);
  const auto written = written_outer_values(n);
  const size_t num_outputs = n->outputs().size();
  if (num_outputs == 0 && written.empty()) return;  // only raises or warns: nothing ONNX can keep

  // Each branch returns the node's outputs, then the written outer values. A branch output
  // that is a placeholder (prim::Uninitialized: the value is never read on that path; or None) or
  // a list is given the form the other branch needs.
  std::vector<OutputForm> forms;
  for (const auto* out : n->outputs()) forms.push_back({onnx_dtype_of(out), std::nullopt, false});
  for (const auto* w : written) {
    const Value* current = lookup(w);
    forms.push_back({current->is_tensor() ? current->dtype() : DType::Undefined, current->rank(), false});
  }
  std::vector<bool> complex_in_branch(forms.size(), false);  // for outputs of unrecorded dtype

  // Outputs None on one path only travel with a presence flag (optional_values.cpp), after the
  // written values; those the graph returns are ONNX optionals instead, of the type of the
  // branch that gives a tensor (converted first).
  std::vector<size_t> maybe_none = outputs_maybe_none(n);
  const std::vector<bool> optional = optional_outputs(n, maybe_none);
  maybe_none.erase(std::remove_if(maybe_none.begin(), maybe_none.end(), [&](size_t i) { return optional[i]; }),
                   maybe_none.end());
  std::vector<std::optional<TensorType>> element_types(num_outputs);
  for (size_t i = 0; i < num_outputs; ++i)
    for (const auto* block : n->blocks())
      if (auto it = env_.find(block->outputs()[i]);
          optional[i] && it != env_.end() && (it->second->is_tensor() || it->second->is_optional()))
        element_types[i] = it->second->type();
  // A placeholder whose dtype or rank TorchScript did not record takes those of the other
  // branch's tensor: that branch is converted first or, when each branch has such a placeholder
  // where the other has a tensor, dry-run first.
  const torch::jit::Block* first = n->blocks()[0];
  const torch::jit::Block* second = n->blocks()[1];
  std::vector<size_t> placeholder_first, placeholder_second;  // outputs whose form a branch must give
  for (size_t i = 0; i < num_outputs; ++i) {
    if (forms[i].dtype != DType::Undefined && forms[i].rank && !optional[i]) continue;
    const bool in_first = is_placeholder_output(first->outputs()[i]);
    if (in_first != is_placeholder_output(second->outputs()[i]))
      (in_first ? placeholder_first : placeholder_second).push_back(i);
  }
  if (!placeholder_first.empty() && placeholder_second.empty()) {
    std::swap(first, second);
    cond = builder_.op("Not", {cond});
  } else if (!placeholder_first.empty()) {
    learn_output_forms(second, placeholder_first, forms);
  }
  auto branch = [&, this](const torch::jit::Block* block) {
    return [&, block, this](Graph&, const std::vector<Value*>&) {
      Snapshot saved = snapshot();
      convert_block(block);
      std::vector<Value*> outs;
      for (const auto* out : block->outputs()) outs.push_back(lookup(out));
      for (const auto* w : written) outs.push_back(lookup(w));
      for (size_t i = 0; i < outs.size(); ++i) complex_in_branch[i] = complex_in_branch[i] || outs[i]->is_complex();
      std::vector<Value*> presence;
      for (size_t i : maybe_none) presence.push_back(presence_in_branch(block->outputs()[i]));
      for (size_t i = 0; i < num_outputs; ++i) {
        if (outs[i]->is_tensor()) forms[i].complete_from(*outs[i]);  // for the other branch's placeholder
        if (optional[i] && !element_types[i] && (outs[i]->is_tensor() || outs[i]->is_optional()))
          element_types[i] = outs[i]->type();
      }
      for (size_t i = 0; i < outs.size(); ++i) {
        Value*& v = outs[i];
        if (i < num_outputs && optional[i]) {
          const TensorType unknown_dims{forms[i].dtype == DType::Undefined ? DType::Float : forms[i].dtype,
                                        forms[i].rank ? std::optional<std::vector<Dim>>(std::vector<Dim>(*forms[i].rank))
                                                      : std::nullopt};
          v = as_optional(block->outputs()[i], v, element_types[i].value_or(unknown_dims));
          continue;
        }
        const bool none_on_this_path =
            v->is_none() && std::find(maybe_none.begin(), maybe_none.end(), i) != maybe_none.end();
        // An optional where TorchScript declares a tensor: `if y is not None and c` gives y refined
        // in one branch and y itself in the other, where it is None and never read.
        const bool refined_elsewhere =
            v->is_optional() && i < num_outputs && n->outputs()[i]->type()->kind() != c10::TypeKind::OptionalType;
        if (uninitialized.count(v) || none_on_this_path || refined_elsewhere) {
          v = builder_.constant(placeholder_like(forms[i]));
        } else if (v->is_none()) {
          throw ExportError("output " + std::to_string(i) +
                                " of this branch is None while the other is not: "
                                "ONNX If outputs must be tensors",
                            [&] {
                              ErrorContext ec = error_context(n);
                              ec.hint = "give both branches a tensor value";
                              return ec;
                            }());
        } else if (v->is_list()) {
          v = as_sequence(v, DType::Undefined);
        } else if (v->is_tensor()) {
          v = cast_to(v, forms[i].dtype);
        }
      }
      outs.insert(outs.end(), presence.begin(), presence.end());
      restore(std::move(saved));
      return outs;
    };
  };
  std::vector<Value*> results = builder_.op("If", {cond},
                                            {{"then_branch_g", Subgraph{{}, branch(first)}},
                                             {"else_branch_g", Subgraph{{}, branch(second)}}},
                                            static_cast<int>(num_outputs + written.size() + maybe_none.size()));
  for (size_t i = 0; i < num_outputs; ++i) {
    if (is_number_type(n->outputs()[i]->type())) static_cast<CoreValue*>(results[i])->set_scalar(true);
    static_cast<CoreValue*>(results[i])
        ->set_complex(holds_complex_tensor(n->outputs()[i]).value_or(complex_in_branch[i]));
    env_[n->outputs()[i]] = results[i];
  }
  for (size_t i = 0; i < written.size(); ++i) {
    static_cast<CoreValue*>(results[num_outputs + i])->set_complex(complex_in_branch[num_outputs + i]);
    rebind(written[i], results[num_outputs + i]);
  }
  for (size_t k = 0; k < maybe_none.size(); ++k) {
    auto* tensor = static_cast<CoreValue*>(results[maybe_none[k]]);
    if (forms[maybe_none[k]].scalar) tensor->set_scalar(true);
    bind_maybe_none(n->outputs()[maybe_none[k]], tensor, results[num_outputs + written.size() + k]);
  }
}

void Converter::learn_output_forms(const torch::jit::Block* block, const std::vector<size_t>& outputs,
                                   std::vector<OutputForm>& forms) {
  std::unordered_map<const torch::jit::Value*, DType> appends;  // not needed here
  DryRunScope dry_run(*this, appends);
  try {
    convert_block(block);
    for (size_t i : outputs)
      if (const Value* v = lookup(block->outputs()[i]); v->is_tensor()) forms[i].complete_from(*v);
  } catch (const Error&) {
    // The placeholder stays float32: a mismatch then fails in ONNX's checks, not silently.
  }
}

void Converter::convert_loop(const torch::jit::Node* n) {
  // prim::Loop(max_trip_count, start_condition, carried...) with a body taking
  // (iteration, carried...) and returning (condition, carried...): ONNX Loop's own shape.
  const auto* body = n->blocks()[0];
  const auto written = written_outer_values(n);
  if (n->outputs().empty() && written.empty()) return;  // only checks and raises: nothing ONNX can keep
  if (auto trips = unrollable_trip_count(n)) return unroll_loop(n, *trips);

  Value* trip_count = lookup(n->inputs()[0]);
  if (trip_count->maybe_int() == std::numeric_limits<int64_t>::max()) trip_count = nullptr;  // a while loop
  builder_.set_origin(core_origin(n));
  if (trip_count) trip_count = cast_to(trip_count, DType::Int64);
  Value* start_cond = cast_to(lookup(n->inputs()[1]), DType::Bool);

  // Lists carried by the loop become sequences; an empty one takes the dtype of what the body
  // appends to it: from TorchScript's type propagation, or else from a dry run of the body.
  std::vector<DType> element_dtypes;
  bool unknown_element = false;
  for (const auto* w : written) {
    element_dtypes.push_back(appended_dtype(body, w));
    unknown_element = unknown_element || (lookup(w)->is_list() && element_dtypes.back() == DType::Undefined);
  }
  if (unknown_element) {
    std::unordered_map<const torch::jit::Value*, DType> observed;
    {
      DryRunScope dry_run(*this, observed);
      try {
        loop_pass(n, written, element_dtypes, trip_count, start_cond, /*dry_run=*/true);
      } catch (const Error&) {
        // What the body appended before it failed is still worth knowing.
      }
    }
    for (size_t i = 0; i < written.size(); ++i)
      if (auto it = observed.find(written[i]); it != observed.end() && element_dtypes[i] == DType::Undefined)
        element_dtypes[i] = it->second;
  }
  loop_pass(n, written, element_dtypes, trip_count, start_cond, /*dry_run=*/false);
}

Converter::DryRunScope::DryRunScope(Converter& converter, std::unordered_map<const torch::jit::Value*, DType>& observed)
    : converter_(converter), strict_(converter.builder().strict()), bindings_(converter.snapshot()) {
  converter_.observed_appends = &observed;
  converter_.builder().set_strict(false);
}

Converter::DryRunScope::~DryRunScope() {
  converter_.observed_appends = nullptr;
  converter_.builder().set_strict(strict_);
  converter_.restore(std::move(bindings_));
}

// One conversion of the loop; a dry run's Loop node is left for dead-code elimination.
void Converter::loop_pass(const torch::jit::Node* n, const std::vector<const torch::jit::Value*>& written,
                          const std::vector<DType>& element_dtypes, Value* trip_count, Value* start_cond,
                          bool dry_run) {
  const auto* body = n->blocks()[0];
  const size_t num_carried = n->inputs().size() - 2;
  Snapshot before = snapshot();
  std::vector<Value*> initial;
  std::vector<bool> placeholder(num_carried, false);
  // A None the body carries unchanged has no ONNX form. TorchScript carries an Optional through a
  // loop when the body only refines it (Emformer's `if s_cols_mask is not None` in its mask loop): it
  // stays out of the ONNX Loop and the body reads None, which decides such tests.
  // Carried value i is ONNX loop slot slot[i] (kNone for these).
  constexpr size_t kNone = std::numeric_limits<size_t>::max();
  std::vector<size_t> slot(num_carried, kNone);
  // A carried value the graph returns that may be None is an ONNX optional of `element[i]`
  // (optional_values.cpp).
  const std::vector<bool> optional = returned_optional_carries(n);
  std::vector<TensorType> element(num_carried);
  for (size_t i = 0; i < num_carried; ++i) {
    Value* v = lookup(n->inputs()[2 + i]);
    if (v->is_none() && is_carried_unchanged(body->outputs()[1 + i], body->inputs()[1 + i])) continue;
    slot[i] = initial.size();
    if (optional[i]) {
      element[i] = carried_element_type(v, body->outputs()[1 + i]);
      initial.push_back(as_optional(n->inputs()[2 + i], v, element[i]));
      continue;
    }
    if (uninitialized.count(v)) {  // never read before the body assigns it
      const DType dtype = onnx_dtype_of(n->inputs()[2 + i]);
      v = builder_.constant(Tensor::scalar_of(dtype == DType::Undefined ? DType::Float : dtype, 0));
      placeholder[slot[i]] = true;
    }
    initial.push_back(v->is_list() ? as_sequence(v, DType::Undefined) : v);
  }
  const size_t num_slots = initial.size();  // carried values in the ONNX Loop; the written ones follow
  for (size_t i = 0; i < written.size(); ++i) {
    Value* v = lookup(written[i]);
    initial.push_back(v->is_list() ? as_sequence(v, element_dtypes[i]) : v);
  }
  Subgraph sg;
  sg.inputs.push_back({TensorType{DType::Int64, std::vector<Dim>{}}, false});
  sg.inputs.push_back({TensorType{DType::Bool, std::vector<Dim>{}}, false});
  for (size_t i = 0; i < initial.size(); ++i) {
    sg.inputs.push_back(input_like(initial[i]));
    if (i < num_slots && placeholder[i]) sg.inputs.back().type.shape.reset();  // any shape
  }
  sg.build = [&, this](Graph&, const std::vector<Value*>& in) {
    Snapshot saved = snapshot();
    static_cast<CoreValue*>(in[0])->set_scalar(true);
    env_[body->inputs()[0]] = in[0];
    for (size_t i = 0; i < initial.size(); ++i) static_cast<CoreValue*>(in[2 + i])->set_complex(initial[i]->is_complex());
    for (size_t i = 0; i < num_carried; ++i) {
      if (slot[i] == kNone) {
        env_[body->inputs()[1 + i]] = lookup(n->inputs()[2 + i]);
        continue;
      }
      if (optional[i]) builder_.declare_optional_input(in[2 + slot[i]]);
      if (is_number_type(body->inputs()[1 + i]->type())) static_cast<CoreValue*>(in[2 + slot[i]])->set_scalar(true);
      env_[body->inputs()[1 + i]] = in[2 + slot[i]];
    }
    for (size_t i = 0; i < written.size(); ++i) rebind(written[i], in[2 + num_slots + i]);
    convert_block(body);
    std::vector<Value*> outs{cast_to(lookup(body->outputs()[0]), DType::Bool)};
    for (size_t i = 0; i < num_carried; ++i) {
      if (slot[i] == kNone) continue;
      const auto* out = body->outputs()[1 + i];
      outs.push_back(optional[i] ? as_optional(out, lookup(out), element[i]) : lookup(out));
    }
    for (const auto* w : written) outs.push_back(lookup(w));
    for (size_t i = 1; i < outs.size(); ++i) {
      const Value* carried_in = in[i + 1];
      if (outs[i]->is_list())
        outs[i] = as_sequence(outs[i], carried_in->dtype());
      else if (outs[i]->is_tensor() && !carried_in->is_sequence())
        outs[i] = cast_to(outs[i], carried_in->dtype());
    }
    restore(std::move(saved));
    return outs;
  };
  std::vector<Value*> inputs{trip_count, start_cond};
  inputs.insert(inputs.end(), initial.begin(), initial.end());
  std::vector<Value*> results = builder_.op("Loop", inputs, {{"body_g", sg}}, static_cast<int>(initial.size()));
  if (dry_run) {
    restore(std::move(before));
    return;
  }
  for (size_t i = 0; i < initial.size(); ++i) static_cast<CoreValue*>(results[i])->set_complex(initial[i]->is_complex());
  for (size_t i = 0; i < num_carried; ++i) {
    if (slot[i] == kNone) {
      env_[n->outputs()[i]] = lookup(n->inputs()[2 + i]);
      continue;
    }
    if (is_number_type(n->outputs()[i]->type())) static_cast<CoreValue*>(results[slot[i]])->set_scalar(true);
    env_[n->outputs()[i]] = results[slot[i]];
  }
  for (size_t i = 0; i < written.size(); ++i) rebind(written[i], results[num_slots + i]);
}

DType Converter::appended_dtype(const torch::jit::Block* block, const torch::jit::Value* list) const {
  for (const auto* inner : block->nodes()) {
    for (const auto* sub : inner->blocks())
      if (DType d = appended_dtype(sub, list); d != DType::Undefined) return d;
    const std::string k = inner->kind().toQualString();
    if ((k == "aten::append" || k == "aten::insert") && root_of(inner->inputs()[0]) == list)
      if (DType d = onnx_dtype_of(inner->inputs().back()); d != DType::Undefined) return d;
  }
  return DType::Undefined;
}

}  // namespace onnxport::core
