#include "3_export/3_convert/converter.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "3_export/3_convert/custom_schemas.h"
#include "3_export/3_convert/extra_outputs.h"
#include "3_export/3_convert/fallback.h"
#include "2_eval/fold_kernels.h"
#include "onnxport/errors.h"

namespace onnxport::core {

namespace {

std::string kind_of(const torch::jit::Node* n) { return n->kind().toQualString(); }

bool is_constant_node(const torch::jit::Node* n) { return n->kind() == c10::prim::Constant; }

}  // namespace

// Maps TorchScript constants (and the parameters freezing turned into constants) to Values.
class ConstantMapper {
 public:
  ConstantMapper(GraphBuilder& b, const PreparedGraph& p) : builder_(b), prepared_(p) {}

  // A module attribute read through prim::GetAttr: tensors become initializers named by path.
  Value* map_attribute(const std::string& path, const c10::IValue& iv) {
    if (!iv.isTensor()) return map(iv);
    auto& cached = by_name_[path];
    if (!cached) cached = parameter(path, iv.toTensor());
    return cached;
  }

  Value* map(const c10::IValue& iv) {
    if (iv.isNone()) return builder_.own(CoreValue::make_none_value());
    if (iv.isInt()) return builder_.add_torch_constant(iv.toInt(), {});
    if (iv.isDouble()) return builder_.add_torch_constant(iv.toDouble(), {});
    if (iv.isBool()) return builder_.add_torch_constant(iv.toBool(), {});
    if (iv.isString()) return builder_.add_torch_constant(iv.toStringRef(), {});
    if (iv.isDevice()) return builder_.add_torch_constant(iv.toDevice().str(), {});
    if (iv.isIntList()) return builder_.add_torch_constant(iv.toIntVector(), {});
    if (iv.isDoubleList()) return builder_.add_torch_constant(iv.toDoubleVector(), {});
    if (iv.isTensor()) return tensor(iv.toTensor());
    if (iv.isList() || iv.isTuple()) {
      std::vector<Value*> items;
      if (iv.isList())
        for (const auto& e : iv.toListRef()) items.push_back(map(e));
      else
        for (const auto& e : iv.toTupleRef().elements()) items.push_back(map(e));
      return builder_.own(CoreValue::make_list_value(items));
    }
    throw ExportError("unsupported TorchScript constant of type " + iv.type()->str());
  }

 private:
  Value* tensor(const at::Tensor& t) {
    // A parameter is known by where its data starts; a constant that starts there but covers
    // only part of the storage is a view of it (a chunk that constant propagation computed),
    // not the parameter.
    auto named = prepared_.tensor_names.find(t.data_ptr());
    if (named == prepared_.tensor_names.end() || t.nbytes() != t.storage().nbytes()) {
      CoreValue* v = builder_.add_torch_constant(borrow_tensor(t.is_complex() ? at::view_as_real(t) : t), {});
      v->set_complex(t.is_complex());
      return v;
    }
    auto& cached = by_name_[named->second];
    if (!cached) cached = parameter(named->second, t);
    return cached;
  }
  // A complex tensor is stored as its real pair.
  Value* parameter(const std::string& name, const at::Tensor& t) {
    CoreValue* v = builder_.add_parameter(name, borrow_tensor(t.is_complex() ? at::view_as_real(t) : t));
    v->set_complex(t.is_complex());
    return v;
  }
  GraphBuilder& builder_;
  const PreparedGraph& prepared_;
  std::map<std::string, Value*> by_name_;
};

namespace {

TorchNode view_of(const torch::jit::Node* n, bool static_dims, const std::string& source_location,
                  SchemaTexts& schema_texts) {
  TorchNode view;
  view.kind = kind_of(n);
  view.num_inputs = n->inputs().size();
  if (const auto* schema = n->maybeSchema()) {
    auto [text, added] = schema_texts.try_emplace(schema);
    if (added) {
      std::ostringstream os;
      os << *schema;
      text->second = os.str();
    }
    view.schema = text->second;
    for (const auto& arg : schema->arguments()) view.input_names.push_back(arg.name());
  }
  for (const auto* out : n->outputs()) {
    view.output_types.push_back(tensor_type_of(out, static_dims));
    view.output_is_scalar.push_back(is_number_type(out->type()));
  }
  for (const auto& name : n->attributeNames()) {
    if (n->kindOf(name) == torch::jit::AttributeKind::i) view.int_attributes[name.toUnqualString()] = n->i(name);
    if (n->kindOf(name) == torch::jit::AttributeKind::s) view.string_attributes[name.toUnqualString()] = n->s(name);
  }
  view.module_path = module_path_of(n);
  view.source_location = source_location;
  return view;
}

// Without an inlined call stack, a node that reads a parameter lives in that parameter's module.
std::string module_path_from_params(const torch::jit::Node* n, const PreparedGraph& p,
                                    const std::unordered_map<const torch::jit::Value*, std::string>& attribute_paths) {
  for (const auto* in : n->inputs()) {
    if (auto a = attribute_paths.find(in); a != attribute_paths.end()) {
      auto dot = a->second.rfind('.');
      return dot == std::string::npos ? "" : a->second.substr(0, dot);
    }
    if (in->node()->kind() != c10::prim::Constant) continue;
    auto iv = torch::jit::toIValue(in);
    if (!iv || !iv->isTensor()) continue;
    auto it = p.tensor_names.find(iv->toTensor().data_ptr());
    if (it == p.tensor_names.end()) continue;
    auto dot = it->second.rfind('.');
    return dot == std::string::npos ? "" : it->second.substr(0, dot);
  }
  return "";
}

// List and tuple plumbing: values go in and come out unchanged, complex or not.
bool passes_values_through(const torch::jit::Node* n) {
  static const std::set<c10::Symbol> kinds = {
      c10::prim::ListConstruct, c10::prim::ListUnpack,    c10::prim::TupleConstruct, c10::prim::TupleUnpack,
      c10::prim::TupleIndex,    c10::prim::DictConstruct, c10::aten::append,         c10::aten::len};
  if (kinds.count(n->kind())) return true;
  return n->kind() == c10::aten::__getitem__ && n->input(0)->type()->kind() != c10::TypeKind::TensorType;
}

bool holds_complex(const Value* v) {
  if (v->is_complex()) return true;
  if (!v->is_list()) return false;
  for (const Value* e : v->elements())
    if (holds_complex(e)) return true;
  return false;
}

// A node converted by a complex entry (Registrar::add_complex): it reads or makes a complex tensor.
bool touches_complex(const torch::jit::Node* n, const std::vector<Value*>& args) {
  if (passes_values_through(n)) return false;
  for (const Value* v : args)
    if (holds_complex(v)) return true;
  for (const auto* out : n->outputs())
    if (holds_complex_tensor(out).value_or(false)) return true;
  return false;
}

// Where ONNX inference knew less than the trace (custom-domain ops, shapes computed at run
// time), take the traced dtype/rank; dims stay unknown when dynamic axes are in play because
// TorchNode types are then rank-only.
void fill_missing_type(CoreValue& v, TensorType traced, OnnxModel& model) {
  if (is_complex_dtype(traced.dtype)) traced = real_pair_type(traced);
  TensorType t = v.type();
  bool changed = false;
  if (t.dtype == DType::Undefined && traced.dtype != DType::Undefined) {
    t.dtype = traced.dtype;
    changed = true;
  }
  if (!t.shape && traced.shape) {
    t.shape = traced.shape;
    changed = true;
  }
  if (!changed || t.dtype == DType::Undefined) return;
  v.set_type(t);
  if (!v.name().empty()) model.value_types[v.name()] = to_type_proto(t);
}

// Where ONNX inference left a dim unknown (a Reshape to sizes computed at run time), the dim the
// export knows otherwise: a program's tensor_meta (a size, or its symbol, which names the graph
// inputs' dims too), or a trace's recorded size where every size is fixed (no dynamic axes).
void refine_unknown_dims(CoreValue& v, const std::vector<Dim>& known, OnnxModel& model) {
  TensorType t = v.type();
  if (is_complex_dtype(t.dtype) || v.is_complex()) return;  // its real pair has one dim more
  if (!t.shape) t.shape = std::vector<Dim>(known.size(), Dim::unknown());
  if (t.shape->size() != known.size()) return;
  bool changed = false;
  for (size_t d = 0; d < known.size(); ++d)
    if ((*t.shape)[d].kind == Dim::Kind::Unknown && known[d].kind != Dim::Kind::Unknown) {
      (*t.shape)[d] = known[d];
      changed = true;
    }
  if (!changed) return;
  v.set_type(t);
  if (!v.name().empty()) model.value_types[v.name()] = to_type_proto(t);
}

TensorType input_type(const at::Tensor& t, const std::string& name, const ExportOptions& o) {
  TensorType type;
  type.dtype = dtype_of(t.scalar_type());
  if (t.is_complex()) {  // its real pair
    TensorType pair = input_type(at::view_as_real(t), name, o);
    (*pair.shape).back() = Dim::fixed(2);
    return pair;
  }
  std::vector<Dim> dims;
  const auto axes = o.dynamic_axes.find(name);
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (axes != o.dynamic_axes.end() && axes->second.count(i))
      dims.push_back(Dim::named(axes->second.at(i)));
    else
      dims.push_back(Dim::fixed(t.size(i)));
  }
  type.shape = dims;
  return type;
}

void apply_dynamic_axes(TensorType& type, const std::string& name, const ExportOptions& o) {
  auto axes = o.dynamic_axes.find(name);
  if (axes == o.dynamic_axes.end() || !type.shape) return;
  for (const auto& [axis, dim_name] : axes->second)
    if (axis >= 0 && axis < static_cast<int64_t>(type.shape->size())) (*type.shape)[axis] = Dim::named(dim_name);
}

// "output_<i>" for an output the caller did not name, unless the caller gave that name to another
// value (output_names=["output_1"] names output 0): then "output_<i>_<k>".
std::string default_output_name(size_t i, const ExportOptions& o) {
  const auto taken = [&](const std::string& name) {
    return std::find(o.output_names.begin(), o.output_names.end(), name) != o.output_names.end() ||
           std::find(o.input_names.begin(), o.input_names.end(), name) != o.input_names.end();
  };
  const std::string base = "output_" + std::to_string(i);
  std::string name = base;
  for (int k = 1; taken(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

std::string joined_names(const std::vector<GraphIO>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ", ") + v.name;
  return out.empty() ? "none" : out;
}

// " (3 nodes, from aten::x by op pack 'p' (file))": where a warning's nodes came from.
std::string made_by(size_t nodes, const std::string& torch_op, const std::string& pack, const std::string& pack_file) {
  return " (" + std::to_string(nodes) + (nodes == 1 ? " node" : " nodes") + ", from " +
         (torch_op.empty() ? "?" : torch_op) + " by op pack '" + (pack.empty() ? "core" : pack) + "'" +
         (pack_file.empty() ? "" : " (" + pack_file + ")") + ")";
}

// Nodes no schema checks: ops of the default domain ONNX does not define, and custom-domain ops no pack
// declared a schema for. Each op (with the pack and torch op that made it) gets one warning.
void note_unchecked_ops(const OnnxModel& model, ConvertStats& stats) {
  std::map<std::tuple<std::string, std::string, std::string>, size_t> made;  // (op, pack, torch op) -> nodes
  std::map<std::string, std::string> pack_files;
  for (const auto& node : model.nodes) {
    const auto& p = node.proto;
    const bool undefined = is_standard_domain(p) ? !onnx_defines(p.op_type()) : !has_custom_schema(p.domain(), p.op_type());
    if (!undefined || stats.fallback_ops.count(node.origin.torch_op)) continue;  // fallbacks are listed as such
    const std::string op = is_standard_domain(p) ? p.op_type() : p.domain() + "::" + p.op_type();
    ++stats.unchecked_ops[op];
    ++made[{op, node.origin.pack, node.origin.torch_op}];
    pack_files[node.origin.pack] = node.origin.pack_file;
  }
  for (const auto& [key, n] : made) {
    const auto& [op, pack, torch_op] = key;
    const bool standard = op.find("::") == std::string::npos;
    stats.warnings.push_back(
        (standard ? "ONNX defines no operator '" + op + "': written in the default domain as torch.onnx writes it"
                  : "'" + op + "' has no schema (its pack declares none): written as it is") +
        made_by(n, torch_op, pack, pack_files[pack]) +
        "; ONNX's checker passes over it and a runtime needs its own kernel for it");
  }
}

// The opset from which ONNX documents the form of `node`, for the forms torch.onnx 2.6 writes
// earlier (ONNX 1.17's checker and ONNX Runtime take them there); 0 for any other node.
int opset_documenting_form(const OnnxModel& model, const onnx::NodeProto& node) {
  if (!is_standard_domain(node)) return 0;
  if (node.op_type() == "ScatterElements") {  // reductions max and min: opset 18
    const auto* reduction = find_attribute(node, "reduction");
    return reduction && (reduction->s() == "max" || reduction->s() == "min") ? 18 : 0;
  }
  if (node.op_type() == "GridSample" && node.input_size() > 0) {  // 5-d input (volumes): opset 20
    const auto it = model.value_types.find(node.input(0));
    const bool volume = it != model.value_types.end() && it->second.tensor_type().has_shape() &&
                        it->second.tensor_type().shape().dim_size() == 5;
    return volume ? 20 : 0;
  }
  return 0;
}

// One warning per op, pack and torch op for the nodes written in a form ONNX documents only from a
// later opset than the export's.
void note_later_opset_forms(const OnnxModel& model, int opset, ConvertStats& stats) {
  std::map<std::tuple<std::string, int, std::string, std::string>, size_t> made;  // (op, opset, pack, torch op)
  std::map<std::string, std::string> pack_files;
  for (const auto& node : model.nodes) {
    const int documented = opset_documenting_form(model, node.proto);
    if (documented <= opset) continue;
    ++made[{node.proto.op_type(), documented, node.origin.pack, node.origin.torch_op}];
    pack_files[node.origin.pack] = node.origin.pack_file;
  }
  for (const auto& [key, n] : made) {
    const auto& [op, documented, pack, torch_op] = key;
    stats.warnings.push_back(
        op + " in the form ONNX documents from opset " + std::to_string(documented) + " written at opset " +
        std::to_string(opset) + " as torch.onnx 2.6 writes it" + made_by(n, torch_op, pack, pack_files[pack]) +
        "; ONNX's checker and ONNX Runtime take it, other runtimes may not: export with --opset " +
        std::to_string(documented) + " for the documented form");
  }
}

// Every name --dynamic-axes gives must be a graph input or output (with
// ignore_unknown_dynamic_axes, as in torch.onnx, one that is not is a warning), and every axis must
// be one of its dims: otherwise the model would be written without the dynamic axis asked for.
void check_dynamic_axes(const OnnxModel& model, const ExportOptions& o, std::vector<std::string>& warnings) {
  for (const auto& [name, axes] : o.dynamic_axes) {
    const GraphIO* value = nullptr;
    for (const auto* list : {&model.inputs, &model.outputs})
      for (const auto& io : *list)
        if (io.name == name) value = &io;
    if (!value && o.ignore_unknown_dynamic_axes) {
      warnings.push_back("dynamic_axes names '" + name + "', which is not an input or output of the model (inputs: " +
                         joined_names(model.inputs) + "; outputs: " + joined_names(model.outputs) + "): ignored");
      continue;
    }
    if (!value)
      throw ConfigError("--dynamic-axes (config: dynamic_axes) names '" + name +
                            "', which is not an input or output of the model (inputs: " + joined_names(model.inputs) +
                            "; outputs: " + joined_names(model.outputs) + ")",
                        ErrorContext::with_hint("use a graph input or output name; --input NAME:... and "
                                                "--input-names/--output-names set them"));
    if (!value->type.shape) continue;
    const int64_t rank = static_cast<int64_t>(value->type.shape->size());
    for (const auto& axis : axes) {
      if (axis.first >= 0 && axis.first < rank) continue;
      if (o.ignore_unknown_dynamic_axes) {
        warnings.push_back("dynamic_axes gives '" + name + "' axis " + std::to_string(axis.first) +
                           ", but it has rank " + std::to_string(rank) + ": ignored");
        continue;
      }
      throw ConfigError(
          "--dynamic-axes (config: dynamic_axes) " + name + ":" + std::to_string(axis.first) + ": '" + name +
              "' has rank " + std::to_string(rank) + ", so its axes are 0.." + std::to_string(rank - 1),
          ErrorContext::with_hint("give an axis below the rank (the shape is " + value->type.str() + ")"));
    }
  }
}

}  // namespace

const std::vector<std::pair<std::string, int>>& core_builtin_ops() {
  static const std::vector<std::pair<std::string, int>> ops = {
      {"prim::Constant", 1}, {"prim::GetAttr", 1}, {"prim::If", 9}, {"prim::Loop", 9}, {"prim::Uninitialized", 1}};
  return ops;
}

Converter::Converter(const PreparedGraph& prepared, const ConvertContext& ctx, GraphBuilder& builder, OnnxModel& model)
    : prepared_(prepared),
      ctx_(ctx),
      builder_(builder),
      model_(model),
      static_dims_(ctx.options.dynamic_axes.empty() && !prepared.scripted),
      constants_(std::make_unique<ConstantMapper>(builder, prepared)) {}

Converter::~Converter() = default;

std::string Converter::module_path(const torch::jit::Node* n) const {
  std::string path = module_path_of(n);
  return path.empty() ? module_path_from_params(n, prepared_, attribute_paths_) : path;
}

std::string Converter::origin_source(const torch::jit::Node* n) const {
  return ctx_.record_sources ? sources_.of(n) : std::string();
}

NodeOrigin Converter::core_origin(const torch::jit::Node* n) const {
  return NodeOrigin{"core", "", kind_of(n), module_path(n), origin_source(n)};
}

ErrorContext Converter::error_context(const torch::jit::Node* n) const {
  return ErrorContext::for_node(ctx_.model_file, kind_of(n), module_path(n), sources_.of(n));
}

Value* Converter::lookup(const torch::jit::Value* v) {
  if (stale_.count(v)) return refresh_view(v);
  auto it = env_.find(v);
  if (it == env_.end())
    throw ExportError("internal: value '" + v->debugName() + "' (made by " + kind_of(v->node()) +
                      ") was not converted");
  return it->second;
}

Value* Converter::cast_to(Value* v, DType dtype) {
  if (dtype == DType::Undefined || v->dtype() == dtype || !v->is_tensor()) return v;
  Value* out = builder_.op("Cast", {v}, {{"to_i", static_cast<int64_t>(dtype)}});
  if (v->is_scalar()) static_cast<CoreValue*>(out)->set_scalar(true);
  return out;
}

ConvertStats Converter::run() {
  const torch::jit::Graph& graph = *prepared_.graph;
  const ExportOptions& o = ctx_.options;
  analyze_aliases(graph.block());

  const size_t first_input = prepared_.self ? 1 : 0;
  if (prepared_.self) attributes_[graph.inputs()[0]] = {"", prepared_.self->_ivalue()};
  for (size_t i = first_input; i < graph.inputs().size(); ++i) {
    const auto* in = graph.inputs()[i];
    const size_t k = i - first_input;
    const std::string name = k < ctx_.input_names.size() ? ctx_.input_names[k] : "input_" + std::to_string(k);
    if (k >= prepared_.example_tensors.size())
      throw ConfigError("graph input " + std::to_string(k) + " ('" + in->debugName() + "') has no example tensor");
    env_[in] = builder_.add_input(name, input_type(prepared_.example_tensors[k], name, o));
    if (k < prepared_.inputs_torch_onnx_keeps.size()) model_.inputs.back().keep = prepared_.inputs_torch_onnx_keeps[k];
    if (k < prepared_.inputs_declared_optional.size())
      model_.inputs.back().declared_optional = prepared_.inputs_declared_optional[k];
    if (prepared_.example_tensors[k].is_complex()) {
      static_cast<CoreValue*>(env_[in])->set_complex(true);
      stats_.warnings.push_back("input '" + name + "' is complex: the ONNX input is " + env_[in]->type().str() +
                                ", its real and imaginary parts in the last dimension");
    }
  }
  if (o.input_names.size() > graph.inputs().size() - first_input)
    throw ConfigError(std::to_string(o.input_names.size()) + " input names given (--input-names), the model has " +
                      std::to_string(graph.inputs().size() - first_input) + " inputs");
  convert_block(graph.block());

  // Graph outputs, flattened (a list output contributes its elements). A returned dict's values
  // are named after their keys ("states" and, for a list, "states.0", "states.1", ...).
  std::vector<Value*> flat;
  std::vector<std::string> flat_names;
  std::function<void(Value*, const std::string&)> flatten = [&](Value* v, const std::string& name) {
    if (v->is_list()) {
      for (size_t k = 0; k < v->elements().size(); ++k)
        flatten(v->elements()[k], name.empty() ? "" : name + "." + std::to_string(k));
      return;
    }
    flat.push_back(v);
    flat_names.push_back(name);
  };
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const auto* out = graph.outputs()[i];
    const std::string key_name = i < prepared_.output_names.size() ? prepared_.output_names[i] : "";
    if (presence_.count(out) && o.opset_version >= 16) {  // an ONNX optional output
      builder_.set_origin(NodeOrigin{});
      flat.push_back(as_optional(out, lookup(out), lookup(out)->type()));
      flat_names.push_back(key_name);
      continue;
    }
    if (presence_.count(out))
      throw ExportError("the model returns '" + out->debugName() +
                            "', a value that is None on some paths (an If gives None in one branch), which "
                            "becomes an ONNX optional output from opset 16",
                        ErrorContext::for_file(ctx_.model_file,
                                               "export with opset 16 or later, or return a tensor "
                                               "on every path"));
    flatten(lookup(out), key_name);
  }
  builder_.set_origin(NodeOrigin{});
  for (size_t i = 0; i < flat.size(); ++i) {
    if (flat[i]->is_none()) throw ExportError("the model returns None as output " + std::to_string(i));
    const size_t state_from = flat.size() - (prepared_.state_io ? prepared_.state_paths.size() : 0);
    const std::string name = i < o.output_names.size() ? o.output_names[i]
                             : i >= state_from       ? prepared_.state_paths[i - state_from] + "_out"
                             : !flat_names[i].empty() ? flat_names[i]
                                                      : default_output_name(i, o);
    const std::string before = flat[i]->name();
    builder_.name_output(flat[i], name);
    if (!before.empty() && flat[i]->name() != before) rename_onnx_value(stats_.value_names, before, flat[i]->name());
    if (flat[i]->is_sequence()) {  // a list whose length is only known at run time: an ONNX sequence
      model_.outputs.push_back(GraphIO{name, flat[i]->type(), true});
      continue;
    }
    if (flat[i]->is_optional()) {  // None on some paths
      GraphIO io{name, flat[i]->type()};
      io.optional = true;
      apply_dynamic_axes(io.type, name, o);
      model_.outputs.push_back(io);
      continue;
    }
    if (flat[i]->is_complex())
      stats_.warnings.push_back("output '" + name + "' is complex: written as " + flat[i]->type().str() +
                                ", its real and imaginary parts in the last dimension (torch.view_as_real)");
    TensorType type = flat[i]->type();
    if (auto it = model_.value_types.find(name); it != model_.value_types.end()) type = from_type_proto(it->second);
    if (!type.shape && i < graph.outputs().size()) {  // e.g. merged from branches of different shapes
      TensorType recorded = real_pair_type(tensor_type_of(graph.outputs()[i], false));
      if (recorded.shape) type.shape = recorded.shape;
    }
    apply_dynamic_axes(type, name, o);
    model_.outputs.push_back(GraphIO{name, type});
  }
  if (o.output_names.size() > flat.size())
    throw ConfigError(std::to_string(o.output_names.size()) + " output names given, the model has " +
                      std::to_string(flat.size()) + " outputs");
  const size_t declared = model_.outputs.size();
  stats_.extra_outputs = add_extra_outputs(o.extra_outputs, stats_.value_names, builder_, model_);
  for (size_t i = declared; i < model_.outputs.size(); ++i)
    if (!model_.outputs[i].sequence) apply_dynamic_axes(model_.outputs[i].type, model_.outputs[i].name, o);
  check_dynamic_axes(model_, o, stats_.warnings);
  note_unchecked_ops(model_, stats_);
  note_later_opset_forms(model_, o.opset_version, stats_);
  return stats_;
}

void Converter::convert_block(const torch::jit::Block* block) {
  for (const auto* n : block->nodes()) convert_node(n);
}

void Converter::convert_node(const torch::jit::Node* n) {
  if (is_constant_node(n)) {
    auto iv = torch::jit::toIValue(n->output());
    env_[n->output()] = constants_->map(*iv);
    return;
  }
  if (n->kind() == c10::prim::GetAttr && attributes_.count(n->input())) {
    const auto& [owner_path, owner] = attributes_.at(n->input());
    const std::string path = (owner_path.empty() ? "" : owner_path + ".") + n->s(c10::attr::name);
    c10::IValue value = owner.toObjectRef().getAttr(n->s(c10::attr::name));
    if (value.isObject())
      attributes_[n->output()] = {path, value};
    else
      env_[n->output()] = constants_->map_attribute(path, value);
    attribute_paths_[n->output()] = path;
    return;
  }
  if (convert_maybe_none_reader(n)) return;
  if (n->kind() == c10::prim::If || n->kind() == c10::prim::Loop || n->kind() == c10::prim::Uninitialized)
    count_core_op(n);
  if (n->kind() == c10::prim::If) return convert_if(n);
  if (n->kind() == c10::prim::Loop) return convert_loop(n);
  if (n->kind() == c10::prim::Uninitialized) {
    Value* placeholder = builder_.own(CoreValue::make_none_value());
    uninitialized.insert(placeholder);
    env_[n->output()] = placeholder;
    return;
  }
  std::vector<Value*> args;
  for (const auto* in : n->inputs()) args.push_back(lookup(in));
  if (observed_appends && (n->kind() == c10::aten::append || n->kind() == c10::aten::insert) &&
      args.back()->is_tensor())
    (*observed_appends)[root_of(n->inputs()[0])] = args.back()->dtype();
  std::vector<Value*> outs = run_symbolic(n, args);
  const bool top_level = n->owningBlock() == prepared_.graph->block();
  for (size_t i = 0; i < n->outputs().size(); ++i) {
    env_[n->outputs()[i]] = outs[i];
    if (top_level && outs[i]->is_tensor() && !outs[i]->name().empty())
      stats_.value_names.emplace_back(n->outputs()[i], outs[i]->name());
  }
  apply_mutations(n, outs, n->outputs().size());
}

std::vector<Value*> Converter::run_symbolic(const torch::jit::Node* n, const std::vector<Value*>& args) {
  const ExportOptions& o = ctx_.options;
  const std::string kind = kind_of(n);
  const ResolvedOp& resolved = ctx_.resolution.of(n);
  const bool complex = touches_complex(n, args);
  const RegistryEntry* entry = complex ? complex_entry(n) : resolved.entry;
  const bool fallback = !complex && resolved.fallback;
  if (!entry && !fallback)
    throw UnsupportedOpError(kind + " has no mapping at opset " + std::to_string(o.opset_version), error_context(n));
  TorchNode view = view_of(n, static_dims_, origin_source(n), schema_texts_);
  if (view.module_path.empty()) view.module_path = module_path_from_params(n, prepared_, attribute_paths_);
  const AliasInfo alias = alias_info_of(n);
  for (size_t i : alias.written_inputs)
    if (alias.output_aliases_input != i) view.updated_inputs.push_back(i);
  const std::string pack_id = fallback ? operator_export_type_name(o.operator_export_type) : entry->pack.id;
  ErrorContext ec{ctx_.model_file,      kind, fallback ? pack_id : entry->pack.describe(), view.module_path,
                  view.source_location, {}};
  builder_.set_origin(
      NodeOrigin{pack_id, fallback ? "" : entry->pack.file, kind, view.module_path, view.source_location});
  std::vector<Value*> outs;
  try {
    if (fallback) {
      const auto* schema = n->maybeSchema();
      outs = emit_fallback(builder_, view, Args(args, view), o, schema ? schema->overload_name() : "");
      ++stats_.fallback_ops[kind];
    } else if (const size_t written = out_arguments(n)) {
      // An out= overload is mapped as its functional op, given the arguments before the out
      // tensors; each result is then written to its out tensor (rebind casts it to that dtype).
      TorchNode functional = view;
      functional.num_inputs -= written;
      functional.input_names.resize(std::min(functional.input_names.size(), functional.num_inputs));
      functional.updated_inputs.clear();
      const std::vector<Value*> functional_args(args.begin(), args.end() - static_cast<std::ptrdiff_t>(written));
      outs = entry->fn(builder_, functional, Args(functional_args, functional));
      // The out tensors after the first, which output 0 aliases, take their outputs as updated inputs.
      for (size_t i = 1; i < written && i < outs.size(); ++i) outs.push_back(outs[i]);
    } else {
      outs = entry->fn(builder_, view, Args(args, view));
    }
  } catch (Error& e) {
    ec.source = sources_.of(n);
    e.add_context(ec);
    throw;
  } catch (const c10::Error& e) {
    ec.source = sources_.of(n);
    throw ExportError(std::string("symbolic failed: ") + e.what_without_backtrace(), ec);
  } catch (const std::exception& e) {
    ec.source = sources_.of(n);
    ec.hint = "this is a bug in the op pack";
    throw ExportError(std::string("symbolic threw: ") + e.what(), ec);
  }
  const size_t want = n->outputs().size() + view.updated_inputs.size();
  if (outs.size() != want) {
    ec.source = sources_.of(n);
    ec.hint = view.updated_inputs.empty()
                  ? "the symbolic must return one value per TorchScript output"
                  : "the symbolic must return one value per TorchScript output, then the new value of each input it "
                    "updates in place (TorchNode::updated_inputs)";
    throw ExportError("symbolic returned " + std::to_string(outs.size()) + " values for " + std::to_string(want) +
                          (view.updated_inputs.empty() ? " outputs" : " outputs and updated inputs"),
                      ec);
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i]) {
      ec.source = sources_.of(n);
      ec.hint = "return g.none() for a None output";
      throw ExportError("symbolic returned a null value for output " + std::to_string(i), ec);
    }
    if (i >= view.output_types.size()) continue;
    auto* cv = static_cast<CoreValue*>(outs[i]);
    if (cv->is_tensor() && !cv->is_constant()) {
      fill_missing_type(*cv, view.output_types[i], model_);
      if (static_dims_ && view.output_types[i].shape) refine_unknown_dims(*cv, *view.output_types[i].shape, model_);
      if (i < n->outputs().size())
        if (auto dims = prepared_.program_dims.find(n->outputs()[i]->debugName()); dims != prepared_.program_dims.end())
          refine_unknown_dims(*cv, dims->second, model_);
    }
    if (view.output_is_scalar[i]) cv->set_scalar(true);
  }
  if (!passes_values_through(n))
    for (size_t i = 0; i < n->outputs().size(); ++i) outs[i] = with_complex_flag(n->outputs()[i], outs[i], args);
  return outs;
}

const RegistryEntry* Converter::complex_entry(const torch::jit::Node* n) {
  const std::string kind = kind_of(n);
  const std::string key = dispatch_key(n);
  const RegistryEntry* entry = key != kind ? ctx_.resolution.helper(Registrar::complex_key(key)) : nullptr;
  if (!entry) entry = ctx_.resolution.helper(Registrar::complex_key(kind));
  if (entry) return entry;
  const int opset = ctx_.options.opset_version;
  ErrorContext ec = error_context(n);
  const auto from = ctx_.resolution.registry().earliest_opset(Registrar::complex_key(kind));
  ec.hint = from && *from > opset ? "raise --opset to " + std::to_string(*from) + " or later"
                                  : "compute it on real tensors (torch.view_as_real) before the op; `onnxport ops` "
                                    "lists the ops mapped for complex values as op[complex]";
  throw UnsupportedOpError(kind + " on complex values has no mapping at opset " + std::to_string(opset) +
                               (from && *from > opset ? " (supported from opset " + std::to_string(*from) + ")" : ""),
                           ec);
}

Value* Converter::with_complex_flag(const torch::jit::Value* torch_value, Value* v, const std::vector<Value*>& args) {
  if (!v->is_tensor()) return v;
  const auto complex = holds_complex_tensor(torch_value);
  if (!complex || v->is_complex() == *complex) return v;
  // A value the symbolic handed on (view_as_real returns its input) keeps its own flag for its
  // other readers: the output is a new value.
  const bool handed_on = v->is_constant() || std::find(args.begin(), args.end(), v) != args.end();
  if (handed_on) v = builder_.op("Identity", {v});
  static_cast<CoreValue*>(v)->set_complex(*complex);
  return v;
}

Value* Converter::call_symbolic(const std::string& kind, const torch::jit::Node* origin,
                                const std::vector<Value*>& args) {
  const RegistryEntry* entry = ctx_.resolution.helper(kind);
  if (!entry) {
    ErrorContext ec = error_context(origin);
    ec.hint = "writes through views need " + kind + "; raise --opset or add an op pack that maps it";
    throw UnsupportedOpError(kind + " has no mapping at opset " + std::to_string(ctx_.options.opset_version) +
                                 " (needed to write back through " + kind_of(origin) + ")",
                             ec);
  }
  TorchNode view;
  view.kind = kind;
  view.num_inputs = args.size();
  view.output_types.resize(1);
  view.output_is_scalar.push_back(false);
  view.module_path = module_path(origin);
  // The source line only when recorded: the lookup searches the model's source text, and writes
  // through views call here for every node that makes a view (errors look it up below).
  view.source_location = origin_source(origin);
  try {
    auto outs = entry->fn(builder_, view, Args(args, view));
    if (outs.size() != 1 || !outs[0]) throw ExportError(kind + " returned " + std::to_string(outs.size()) + " values");
    return outs[0];
  } catch (Error& e) {
    ErrorContext ec = error_context(origin);
    ec.pack = entry->pack.describe();
    e.add_context(ec);
    throw;
  }
}

namespace {
BuilderOptions builder_options(const ConvertContext& ctx) {
  const ExportOptions& o = ctx.options;
  BuilderOptions bo;
  bo.opset = o.opset_version;
  bo.training = o.training == TrainingMode::Train;
  bo.strict = o.strict;
  bo.evaluate = evaluate_constant_node;
  for (const auto& [domain, entry] : ctx.resolution.registry().domains()) bo.custom_domains[domain] = entry.version;
  for (const RegistryEntry* e : ctx.resolution.registry().entries())
    if (e->exact_opset) bo.packs_with_open_domains.insert(e->pack.id);
  if (o.operator_export_type == OperatorExportType::OnnxAten ||
      o.operator_export_type == OperatorExportType::OnnxAtenFallback)
    bo.custom_domains[kAtenDomain] = 1;
  for (const auto& [domain, version] : o.custom_opsets) bo.custom_domains[domain] = version;
  // onnx_fallthrough: a domain per torch namespace of the ops kept as they are
  for (const auto& domain : ctx.resolution.fallthrough_domains(o.operator_export_type))
    bo.custom_domains.emplace(domain, 1);
  return bo;
}
}  // namespace

ConvertStats convert_to_onnx(const PreparedGraph& prepared, const ConvertContext& ctx, OnnxModel& model) {
  GraphBuilder builder(model, builder_options(ctx));
  Converter converter(prepared, ctx, builder, model);
  return converter.run();
}

}  // namespace onnxport::core
