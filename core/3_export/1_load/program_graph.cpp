#include "3_export/1_load/program_graph.h"

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <nlohmann/json.hpp>
#include <limits>
#include <set>

#include "1_base/torch_release.h"
#include "1_base/torch_tensors.h"
#include "3_export/1_load/example_arguments.h"
#include "3_export/1_load/newer_operators.h"
#include "onnxport/errors.h"
#include "onnxport/export.h"

namespace onnxport::core {

namespace {

using nlohmann::json;
using torch::jit::Value;

// The member a union of the program's schema holds ("as_tensor", "parameter", ...).
std::string kind_of(const json& union_value) {
  return union_value.is_object() && !union_value.empty() ? union_value.begin().key() : std::string("?");
}

const json& graph_of(const ProgramArchive& archive) { return archive.program().at("graph_module").at("graph"); }
const json& signature_of(const ProgramArchive& archive) {
  return archive.program().at("graph_module").at("signature");
}

// The tensor name a user input or output spec gives ("" when it is not a tensor).
std::string tensor_name_of(const json& argument) {
  if (argument.contains("as_tensor")) return argument.at("as_tensor").at("name").get<std::string>();
  return "";
}

// The name of a user input: a tensor's, or a symbolic int's ("" for any other kind).
std::string user_input_name(const json& argument) {
  if (argument.contains("as_sym_int")) return argument.at("as_sym_int").value("as_name", "");
  return tensor_name_of(argument);
}

std::vector<std::string> user_input_names(const ProgramArchive& archive) {
  std::vector<std::string> names;
  for (const auto& spec : signature_of(archive).at("input_specs"))
    if (spec.contains("user_input")) names.push_back(user_input_name(spec.at("user_input").at("arg")));
  return names;
}

// The archive's example inputs at the program's tensor inputs: its saved arguments flattened hold
// the constant inputs' values too, in input-spec order.
std::vector<c10::IValue> example_tensor_inputs(ProgramArchive& archive) {
  std::vector<c10::IValue> saved = archive.read_example_inputs();
  std::vector<bool> is_tensor;
  for (const auto& spec : signature_of(archive).at("input_specs"))
    if (spec.contains("user_input") || spec.contains("constant_input")) is_tensor.push_back(spec.contains("user_input"));
  if (saved.size() != is_tensor.size()) return saved;  // the input count check says what is wrong
  std::vector<c10::IValue> tensors;
  for (size_t i = 0; i < saved.size(); ++i)
    if (is_tensor[i]) tensors.push_back(std::move(saved[i]));
  return tensors;
}

std::vector<std::string> user_output_names(const ProgramArchive& archive) {
  std::vector<std::string> names;
  for (const auto& spec : signature_of(archive).at("output_specs"))
    if (spec.contains("user_output")) names.push_back(tensor_name_of(spec.at("user_output").at("arg")));
  return names;
}

c10::TensorTypePtr tensor_type(const json& meta, const std::string& where) {
  const auto sizes = program_ints(meta.at("sizes"), where);
  const auto strides = program_ints(meta.at("strides"), where);
  const at::ScalarType dtype = program_scalar_type(meta.at("dtype").get<int>(), where);
  // A meta tensor has the sizes and strides and no storage: TensorType computes its stride
  // properties as for the tensors a run records.
  const at::Tensor shape_only = at::empty_strided(sizes, strides, at::TensorOptions().dtype(dtype).device(at::kMeta));
  return c10::TensorType::create(shape_only)->withDevice(c10::Device(c10::kCPU))->withRequiresGrad(false);
}

// Builds the graph node by node.
class ProgramGraphBuilder {
 public:
  ProgramGraphBuilder(ProgramArchive& archive, LoadedModel& loaded)
      : archive_(archive), loaded_(loaded), graph_(std::make_shared<torch::jit::Graph>()),
        values_json_(&graph_of(archive).at("tensor_values")) {}

  std::shared_ptr<torch::jit::Graph> build() {
    add_inputs();
    for (const auto& node : graph_of(archive_).at("nodes")) add_node(node);
    add_outputs();
    return graph_;
  }

 private:
  [[noreturn]] void refuse(const std::string& what, const std::string& hint) const {
    throw ModelError("'" + archive_.path() + "': " + what, ErrorContext::for_file(archive_.path(), hint));
  }

  Value* named(const std::string& name) const {
    const auto found = values_.find(name);
    if (found == values_.end()) refuse("the program reads '" + name + "' before it is made", "save the program again");
    return found->second;
  }

  void type_value(Value* v, const std::string& name) {
    v->setDebugName(name);  // Python identifiers, valid TorchScript names
    if (values_json_->contains(name)) {
      const json& meta = values_json_->at(name);
      v->setType(tensor_type(meta, "'" + archive_.path() + "': " + name));
      std::vector<Dim> dims;
      for (const auto& size : meta.at("sizes")) {
        const std::string symbol = program_symbol(size);
        dims.push_back(size.contains("as_int") ? Dim::fixed(size.at("as_int").get<int64_t>())
                       : symbol.empty()        ? Dim::unknown()
                                               : Dim::named(symbol));
      }
      loaded_.program_dims[v->debugName()] = std::move(dims);
    }
    values_[name] = v;
  }

  Value* constant_tensor(const at::Tensor& t, const std::string& name, const std::string& path) {
    Value* v = graph_->insertConstant(t.detach());
    loaded_.traced_parameter_names.emplace(t.data_ptr(), path);
    values_[name] = v;
    return v;
  }

  void add_inputs() {
    const auto state = archive_.read_state();
    const auto constants = archive_.read_constants();
    const auto tensor = [&](const std::string& key, const std::string& kind) -> const at::Tensor& {
      if (auto it = state.find(key); it != state.end()) return it->second;
      if (auto it = constants.find(key); it != constants.end()) return it->second;
      refuse("the program's " + kind + " '" + key + "' is not among the archive's tensors", "save the program again");
    };
    for (const auto& spec : signature_of(archive_).at("input_specs")) {
      const std::string kind = kind_of(spec);
      const json& body = spec.at(kind);
      if (kind == "parameter") {
        const std::string path = body.at("parameter_name");
        constant_tensor(tensor(path, "parameter"), body.at("arg").at("name"), path);
      } else if (kind == "buffer") {
        const std::string path = body.at("buffer_name");
        constant_tensor(tensor(path, "buffer"), body.at("arg").at("name"), path);
      } else if (kind == "tensor_constant") {
        const std::string path = body.at("tensor_constant_name");
        constant_tensor(tensor(path, "constant"), body.at("arg").at("name"), path);
      } else if (kind == "user_input" && body.at("arg").contains("as_sym_int")) {
        // An int argument torch.export keeps symbolic (Dim.DYNAMIC): a number input of the graph,
        // which the export makes a 0-d int64 input as --dynamic-numbers does.
        Value* number = graph_->addInput();
        number->setType(c10::IntType::get());
        const std::string name = body.at("arg").at("as_sym_int").value("as_name", "");
        if (name.empty()) refuse("a symbolic int input without a name (" + body.dump() + ")", kHint);
        number->setDebugName(name);
        values_[name] = number;
      } else if (kind == "user_input") {
        const std::string name = tensor_name_of(body.at("arg"));
        if (name.empty())
          refuse("the program takes a user input that is neither a tensor nor a symbolic int (" +
                     body.at("arg").dump() + ")",
                 "export the program with that argument fixed (left out of dynamic_shapes), which makes it a "
                 "constant");
        type_value(graph_->addInput(), name);
      } else if (kind == "constant_input") {
        // A number, bool, string or None argument, specialized at export: the nodes that read it
        // hold its value, as a TorchScript export folds such an argument.
      } else {
        refuse("the program takes an input of kind '" + kind + "' (" + body.dump().substr(0, 120) +
                   "), which onnxport does not read",
               "export the program without it (custom objects and effect tokens have no ONNX form)");
      }
    }
  }

  // The operator `target` names: "torch.ops.aten.conv2d.default" -> aten::conv2d, overload "".
  const c10::FunctionSchema& schema_of(const std::string& target, c10::Symbol& symbol) {
    const std::string prefix = "torch.ops.";
    const std::string higher_order = prefix + "higher_order.";
    if (target.rfind(higher_order, 0) == 0) {
      const std::string op = target.substr(higher_order.size());
      refuse("the program uses the higher-order operator " + op +
                 ", which onnxport does not convert to ONNX control flow yet",
             "export the model without " + op + " (branch in Python before torch.export, or export each branch)");
    }
    const auto last_dot = target.rfind('.');
    const auto ns_dot = target.find('.', prefix.size());
    if (target.rfind(prefix, 0) != 0 || last_dot == std::string::npos || ns_dot == std::string::npos ||
        ns_dot >= last_dot)
      refuse("the program calls " + target + ", which is no operator onnxport can map",
             "export the program with only torch.ops operators");
    const std::string ns = target.substr(prefix.size(), ns_dot - prefix.size());
    const std::string op = target.substr(ns_dot + 1, last_dot - ns_dot - 1);
    std::string overload = target.substr(last_dot + 1);
    if (overload == "default") overload.clear();
    symbol = c10::Symbol::fromQualString(ns + "::" + op);
    for (const auto& candidate : torch::jit::getAllOperatorsFor(symbol))
      if (candidate->schema().overload_name() == overload) return candidate->schema();
    refuse("the program calls " + ns + "::" + op + (overload.empty() ? "" : "." + overload) +
               operator_release_note(ns + "::" + op) + ", which libtorch " + torch_release::kVersion +
               " does not define and onnxport does not register",
           "load the library that defines it with --load-op-library, or export with onnxport built on a newer "
           "libtorch");
  }

  Value* list_constant_or_construct(const std::vector<Value*>& elements, const c10::TypePtr& element_type) {
    torch::jit::Node* list = graph_->insertNode(graph_->createList(element_type, elements));
    return list->output();
  }

  // The value of one argument as the schema argument `expected` takes it.
  Value* argument_value(const json& arg, const c10::Argument& expected, const std::string& where) {
    const std::string kind = kind_of(arg);
    const json& body = arg.at(kind);
    if (kind == "as_none") return graph_->insertConstant(c10::IValue());
    if (kind == "as_tensor") return named(body.at("name"));
    if (kind == "as_int") return graph_->insertConstant(body.get<int64_t>());
    if (kind == "as_float") return graph_->insertConstant(program_float(body));
    if (kind == "as_bool") return graph_->insertConstant(body.get<bool>());
    if (kind == "as_string") return graph_->insertConstant(body.get<std::string>());
    if (kind == "as_ints") return graph_->insertConstant(c10::List<int64_t>(body.get<std::vector<int64_t>>()));
    if (kind == "as_floats") {
      c10::List<double> floats;
      for (const auto& f : body) floats.push_back(program_float(f));
      return graph_->insertConstant(floats);
    }
    if (kind == "as_bools") {
      c10::List<bool> flags;
      for (const auto& b : body) flags.push_back(b.get<bool>());
      return graph_->insertConstant(flags);
    }
    if (kind == "as_strings")
      return graph_->insertConstant(c10::List<std::string>(body.get<std::vector<std::string>>()));
    if (kind == "as_scalar_type")
      return graph_->insertConstant(static_cast<int64_t>(program_scalar_type(body.get<int>(), where)));
    if (kind == "as_layout") {
      if (body.get<int>() != 7) refuse(where + ": a layout other than strided (code " + body.dump() + ")", kHint);
      return graph_->insertConstant(static_cast<int64_t>(c10::kStrided));
    }
    if (kind == "as_memory_format") {
      static const std::map<int, c10::MemoryFormat> formats = {{1, c10::MemoryFormat::Contiguous},
                                                               {2, c10::MemoryFormat::ChannelsLast},
                                                               {3, c10::MemoryFormat::ChannelsLast3d},
                                                               {4, c10::MemoryFormat::Preserve}};
      const auto found = formats.find(body.get<int>());
      if (found == formats.end()) refuse(where + ": an unknown memory format (code " + body.dump() + ")", kHint);
      return graph_->insertConstant(static_cast<int64_t>(found->second));
    }
    if (kind == "as_device") return graph_->insertConstant(c10::Device(c10::kCPU));
    if (kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") return symbolic(body);
    if (kind == "as_tensors") {
      std::vector<Value*> elements;
      for (const auto& t : body) elements.push_back(named(t.at("name")));
      return list_constant_or_construct(elements, c10::TensorType::get());
    }
    if (kind == "as_optional_tensors") {
      std::vector<Value*> elements;
      for (const auto& t : body)
        elements.push_back(t.contains("as_tensor") ? named(t.at("as_tensor").at("name"))
                                                   : graph_->insertConstant(c10::IValue()));
      return list_constant_or_construct(elements, c10::OptionalType::create(c10::TensorType::get()));
    }
    if (kind == "as_sym_ints" || kind == "as_sym_floats" || kind == "as_sym_bools") {
      std::vector<Value*> elements;
      for (const auto& s : body) elements.push_back(symbolic(s));
      const c10::TypePtr element = kind == "as_sym_ints"     ? c10::TypePtr(c10::IntType::get())
                                   : kind == "as_sym_floats" ? c10::TypePtr(c10::FloatType::get())
                                                             : c10::TypePtr(c10::BoolType::get());
      return list_constant_or_construct(elements, element);
    }
    refuse(where + ": an argument of kind " + kind + " (" + expected.name() + "), which onnxport does not read",
           kHint);
  }

  Value* symbolic(const json& body) {
    if (body.contains("as_name")) return named(body.at("as_name"));
    if (body.contains("as_int")) return graph_->insertConstant(body.at("as_int").get<int64_t>());
    if (body.contains("as_float")) return graph_->insertConstant(program_float(body.at("as_float")));
    if (body.contains("as_bool")) return graph_->insertConstant(body.at("as_bool").get<bool>());
    refuse("a symbolic argument onnxport does not read (" + body.dump() + ")", kHint);
  }

  // Names a node output the program gives (a tensor, a symbolic number), typed from the program.
  void name_output(Value* v, const json& out) {
    const std::string kind = kind_of(out);
    if (kind == "as_tensor") {
      type_value(v, out.at("as_tensor").at("name"));
    } else if (kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") {
      if (out.at(kind).contains("as_name")) values_[out.at(kind).at("as_name")] = v;
    } else if (kind == "as_tensors") {
      // A Tensor[] return: its elements by name, through a ListUnpack.
      const json& elements = out.at("as_tensors");
      torch::jit::Node* unpack = graph_->insertNode(graph_->create(c10::prim::ListUnpack, {v}, elements.size()));
      for (size_t i = 0; i < elements.size(); ++i) type_value(unpack->outputs()[i], elements[i].at("name"));
    } else if (kind == "as_optional_tensors") {
      refuse("an operator returning a list of optional tensors, which onnxport does not read", kHint);
    }
  }

  // Targets read as another TorchScript operator: Python operators on symbolic sizes ("_operator.mul")
  // as TorchScript's int ops, aten::sym_size as aten::size; nullptr for any other target.
  const c10::FunctionSchema* read_as_operator(const std::string& target, c10::Symbol& symbol) {
    static const std::map<std::string, std::string> ops = {
        {"_operator.add", "aten::add.int"},       {"_operator.sub", "aten::sub.int"},
        {"_operator.mul", "aten::mul.int"},       {"_operator.floordiv", "aten::floordiv.int"},
        {"_operator.truediv", "aten::div.int"},   {"_operator.mod", "aten::remainder.int"},
        {"_operator.neg", "aten::neg.int"},       {"_operator.eq", "aten::eq.int"},
        {"_operator.ne", "aten::ne.int"},         {"_operator.lt", "aten::lt.int"},
        {"_operator.le", "aten::le.int"},         {"_operator.gt", "aten::gt.int"},
        {"_operator.ge", "aten::ge.int"},         {"torch.sym_max", "prim::max.int"},
        {"torch.sym_min", "prim::min.int"},       {"torch.ops.aten.sym_size.int", "aten::size.int"},
        {"torch.ops.aten.sym_numel.default", "aten::numel"},
        {"torch.ops.aten.reshape.default", "aten::reshape"},
        // Values are the same after it; the grad flag it clears has no ONNX form. torch.export writes it
        // on a lifted constant's fresh copy (torch.tensor(0) in the model).
        {"torch.ops.aten.detach_.default", "aten::detach"},
    };
    const auto found = ops.find(target);
    if (found == ops.end()) return nullptr;
    const std::string& qualified = found->second;
    const auto dot = qualified.find('.');
    symbol = c10::Symbol::fromQualString(qualified.substr(0, dot));
    const std::string overload = dot == std::string::npos ? "" : qualified.substr(dot + 1);
    for (const auto& candidate : torch::jit::getAllOperatorsFor(symbol))
      if (candidate->schema().overload_name() == overload) return &candidate->schema();
    return nullptr;
  }

  // Checks that only constrain what the program was traced for: they compute nothing.
  static bool is_check(const std::string& target) {
    for (const char* check : {"torch.ops.aten._assert_scalar.", "torch.ops.aten.sym_constrain_range",
                              "torch.ops.aten._assert_tensor_metadata.", "torch.ops.aten._assert_async."})
      if (target.rfind(check, 0) == 0) return true;
    return false;
  }

  // A subgraph of a higher-order operator (a cond branch, a wrapped region), read into the current
  // insertion point with `operands` as its inputs; its values live in a scope of their own (torch.export
  // passes every value a subgraph reads as an operand). Returns its outputs.
  std::vector<Value*> add_subgraph(const json& subgraph, const std::vector<Value*>& operands, const std::string& where) {
    const json& inputs = subgraph.at("inputs");
    if (inputs.size() != operands.size())
      refuse(where + ": its subgraph takes " + std::to_string(inputs.size()) + " inputs, the node gives " +
                 std::to_string(operands.size()),
             "save the program again");
    std::map<std::string, Value*> outer = std::move(values_);
    const json* outer_types = values_json_;
    values_.clear();
    values_json_ = &subgraph.at("tensor_values");
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::string name = tensor_name_of(inputs[i]);
      if (name.empty()) refuse(where + ": a subgraph input that is no tensor (" + inputs[i].dump() + ")", kHint);
      values_[name] = operands[i];
    }
    for (const auto& node : subgraph.at("nodes")) add_node(node);
    std::vector<Value*> outputs;
    for (const auto& out : subgraph.at("outputs")) {
      const std::string name = tensor_name_of(out);
      if (name.empty()) refuse(where + ": a subgraph output that is no tensor (" + out.dump() + ")", kHint);
      outputs.push_back(named(name));
    }
    values_ = std::move(outer);
    values_json_ = outer_types;
    return outputs;
  }

  // The tensors a higher-order operator's arguments give after its subgraphs, flattened in order.
  std::vector<Value*> operands_after_graphs(const json& inputs, size_t first) {
    std::vector<Value*> operands;
    for (size_t i = first; i < inputs.size(); ++i) {
      const json& arg = inputs[i].at("arg");
      if (arg.contains("as_tensors"))
        for (const auto& t : arg.at("as_tensors")) operands.push_back(named(t.at("name")));
      else if (arg.contains("as_tensor"))
        operands.push_back(named(arg.at("as_tensor").at("name")));
      else
        refuse("a higher-order operator's operand that is no tensor (" + arg.dump() + ")", kHint);
    }
    return operands;
  }

  // The output names of a node whose outputs are one list ([{"as_tensors": [...]}]) or several.
  std::vector<std::string> output_names(const json& outputs) {
    std::vector<std::string> names;
    for (const auto& out : outputs) {
      if (out.contains("as_tensors"))
        for (const auto& t : out.at("as_tensors")) names.push_back(t.at("name"));
      else
        names.push_back(tensor_name_of(out));
    }
    return names;
  }

  // torch.cond(pred, true_fn, false_fn, operands) as prim::If, its branches the two subgraphs.
  void add_cond(const json& node) {
    const json& inputs = node.at("inputs");
    if (inputs.size() < 4 || !inputs[1].at("arg").contains("as_graph") || !inputs[2].at("arg").contains("as_graph"))
      refuse("a torch.cond node that is not (pred, true graph, false graph, operands)", kHint);
    Value* pred = as_condition(argument_value(inputs[0].at("arg"), c10::Argument("pred"), "torch.cond"));
    const std::vector<Value*> operands = operands_after_graphs(inputs, 3);
    const std::vector<std::string> names = output_names(node.at("outputs"));
    torch::jit::Node* branch = graph_->insertNode(graph_->create(c10::prim::If, {pred}, names.size()));
    for (size_t b = 0; b < 2; ++b) {
      torch::jit::Block* block = branch->addBlock();
      const torch::jit::WithInsertPoint inside(block);
      for (Value* out : add_subgraph(inputs[1 + b].at("arg").at("as_graph").at("graph"), operands,
                                     b == 0 ? "torch.cond's true branch" : "torch.cond's false branch"))
        block->registerOutput(out);
      if (block->outputs().size() != names.size())
        refuse("a torch.cond branch gives " + std::to_string(block->outputs().size()) + " outputs, the node " +
                   std::to_string(names.size()),
               "save the program again");
    }
    for (size_t i = 0; i < names.size(); ++i) type_value(branch->outputs()[i], names[i]);
  }

  // The bool a 0-d tensor predicate gives (torch.cond's and while_loop's conditions are tensors).
  Value* as_condition(Value* pred) {
    if (pred->type()->kind() != c10::TypeKind::TensorType) return pred;
    torch::jit::Node* as_bool = graph_->insertNode(graph_->create(c10::aten::Bool, {pred}));
    as_bool->output()->setType(c10::BoolType::get());
    return as_bool->output();
  }

  // torch.while_loop(cond, body, carried, additional) as prim::Loop (ONNX Loop): the condition read
  // once before the loop and again at the end of each turn, on the values the body carries on;
  // `additional` (the parameters the functions read) is read from the enclosing graph.
  void add_while_loop(const json& node) {
    const json& inputs = node.at("inputs");
    if (inputs.size() != 4 || !inputs[0].at("arg").contains("as_graph") || !inputs[1].at("arg").contains("as_graph"))
      refuse("a while_loop node that is not (cond graph, body graph, carried, additional)", kHint);
    const json& cond = inputs[0].at("arg").at("as_graph").at("graph");
    const json& body = inputs[1].at("arg").at("as_graph").at("graph");
    const std::vector<Value*> additional = operands_after_graphs(inputs, 3);
    std::vector<Value*> start = operands_after_graphs(inputs, 2);  // the carried values, then `additional`
    start.resize(start.size() - additional.size());
    const size_t carried_count = start.size();
    const auto with_additional = [&](std::vector<Value*> values) {
      values.insert(values.end(), additional.begin(), additional.end());
      return values;
    };
    const auto condition = [&](const std::vector<Value*>& state) {
      const auto out = add_subgraph(cond, with_additional(state), "while_loop's condition");
      if (out.size() != 1) refuse("while_loop's condition gives " + std::to_string(out.size()) + " outputs", kHint);
      return as_condition(out[0]);
    };
    Value* first = condition(start);
    std::vector<Value*> loop_inputs{graph_->insertConstant(std::numeric_limits<int64_t>::max()), first};
    loop_inputs.insert(loop_inputs.end(), start.begin(), start.end());
    torch::jit::Node* loop = graph_->insertNode(graph_->create(c10::prim::Loop, loop_inputs, carried_count));
    torch::jit::Block* block = loop->addBlock();
    block->addInput()->setType(c10::IntType::get());  // the turn count, unread
    std::vector<Value*> state;
    for (Value* v : start) state.push_back(block->addInput()->setType(v->type()));
    {
      const torch::jit::WithInsertPoint inside(block);
      const std::vector<Value*> next = add_subgraph(body, with_additional(state), "while_loop's body");
      if (next.size() != carried_count)
        refuse("while_loop's body gives " + std::to_string(next.size()) + " values for " +
                   std::to_string(carried_count) + " carried",
               "save the program again");
      block->registerOutput(condition(next));
      for (Value* v : next) block->registerOutput(v);
    }
    const std::vector<std::string> names = output_names(node.at("outputs"));
    if (names.size() != carried_count) refuse("while_loop: outputs do not match its carried values", kHint);
    for (size_t i = 0; i < names.size(); ++i) type_value(loop->outputs()[i], names[i]);
  }

  // A region run with grad on or off (torch.no_grad in the model): the same computation for an
  // inference graph, so its subgraph is read in place.
  void add_wrapped(const json& node) {
    const json& inputs = node.at("inputs");
    size_t body = 0;
    while (body < inputs.size() && !inputs[body].at("arg").contains("as_graph")) ++body;
    if (body == inputs.size()) refuse("a wrap_with_set_grad_enabled node without its subgraph", kHint);
    const auto outputs = add_subgraph(inputs[body].at("arg").at("as_graph").at("graph"),
                                      operands_after_graphs(inputs, body + 1), "wrap_with_set_grad_enabled");
    const std::vector<std::string> names = output_names(node.at("outputs"));
    if (names.size() != outputs.size()) refuse("wrap_with_set_grad_enabled: outputs do not match its subgraph's", kHint);
    for (size_t i = 0; i < names.size(); ++i) values_[names[i]] = outputs[i];
  }

  void add_node(const json& node) {
    const std::string target = node.at("target");
    if (is_check(target)) return;
    if (target == "torch.ops.higher_order.cond") return add_cond(node);  // the higher-order operators reads_higher_order names
    if (target == "torch.ops.higher_order.wrap_with_set_grad_enabled") return add_wrapped(node);
    if (target == "torch.ops.higher_order.while_loop") return add_while_loop(node);
    c10::Symbol symbol;
    const c10::FunctionSchema* schema = read_as_operator(target, symbol);
    // A view is a reshape that also promises its input's strides allow it. The strides are those of
    // the PyTorch that traced the program (its sdpa kernels' outputs are laid out for the permute and
    // view that follow); libtorch here may lay a kernel's output out otherwise, and ONNX has no
    // strides: the export reads every view as the reshape it computes.
    if (target == "torch.ops.aten.view.default") schema = read_as_operator("torch.ops.aten.reshape.default", symbol);
    if (!schema) schema = &schema_of(target, symbol);
    const std::string where = "node " + target;
    std::map<std::string, const json*> given;
    std::vector<const json*> positional;  // Python operators' arguments have no names
    for (const auto& input : node.at("inputs")) {
      const std::string name = input.value("name", "");
      if (name.empty() || target.rfind("_operator.", 0) == 0 || target.rfind("torch.sym_", 0) == 0)
        positional.push_back(&input.at("arg"));
      else
        given[name] = &input.at("arg");
    }
    if (target == "torch.ops.aten.view.default" && given.count("size")) given["shape"] = given.at("size");
    std::vector<Value*> inputs;
    const auto& arguments = schema->arguments();
    for (size_t i = 0; i < arguments.size(); ++i) {
      const c10::Argument& expected = arguments[i];
      const json* arg = i < positional.size() ? positional[i] : nullptr;
      if (!arg)
        if (auto it = given.find(expected.name()); it != given.end()) arg = it->second;
      if (arg) {
        inputs.push_back(argument_value(*arg, expected, where));
      } else if (expected.default_value()) {
        inputs.push_back(graph_->insertConstant(*expected.default_value()));
      } else {
        refuse(where + " gives no argument '" + expected.name() + "', which " + schema->name() +
                   " in libtorch " + torch_release::kVersion + " requires (" + c10::toString(*schema) + ")",
               "the program was written by a PyTorch whose " + schema->name() +
                   " differs; export it with onnxport built on that release");
      }
    }
    torch::jit::Node* n = graph_->insertNode(graph_->create(symbol, inputs, schema->returns().size()));
    const json& outputs = node.at("outputs");
    if (!n->maybeSchema())
      refuse(where + ": its arguments do not fit " + c10::toString(*schema) + " in libtorch " +
                 torch_release::kVersion,
             "export it with onnxport built on the PyTorch that wrote the program");
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      n->outputs()[i]->setType(schema->returns()[i].type());
      if (i < outputs.size()) name_output(n->outputs()[i], outputs[i]);
    }
  }

  void add_outputs() {
    std::vector<Value*> outputs;
    for (const auto& spec : signature_of(archive_).at("output_specs")) {
      const std::string kind = kind_of(spec);
      if (kind == "buffer_mutation" || kind == "user_input_mutation") {
        mutations_.push_back(spec.at(kind).value("buffer_name", spec.at(kind).value("user_input_name", "?")));
        continue;
      }
      if (kind != "user_output")
        refuse("the program has an output of kind '" + kind + "', which an ONNX inference graph has no place for",
               "export the model in eval mode for inference");
      const json& arg = spec.at(kind).at("arg");
      const std::string name = tensor_name_of(arg);
      if (name.empty()) {
        if (arg.contains("as_none")) continue;
        outputs.push_back(argument_value(arg, c10::Argument("output"), "an output"));
      } else {
        outputs.push_back(named(name));
      }
    }
    if (!mutations_.empty()) {
      std::string names;
      for (const auto& m : mutations_) names += (names.empty() ? "" : ", ") + m;
      loaded_.warnings.push_back("the program updates " + names +
                                 " as it runs (training-mode statistics or state): the ONNX file computes "
                                 "with the values saved in the archive and drops the updates");
    }
    if (outputs.size() == 1) {
      graph_->registerOutput(outputs[0]);
    } else {
      graph_->registerOutput(graph_->insertNode(graph_->createTuple(outputs))->output());
    }
  }

  static constexpr const char* kHint = "export the program with the operators of torch.export's ATen form";

  ProgramArchive& archive_;
  LoadedModel& loaded_;
  std::shared_ptr<torch::jit::Graph> graph_;
  const json* values_json_;               // the tensor_values of the graph being read
  std::map<std::string, Value*> values_;  // its values by name
  std::vector<std::string> mutations_;
};

}  // namespace

bool reads_higher_order(const std::string& target) {
  return target == "torch.ops.higher_order.cond" || target == "torch.ops.higher_order.wrap_with_set_grad_enabled" ||
         target == "torch.ops.higher_order.while_loop";
}

ExportOptions options_for_program(const ProgramArchive& archive, const ExportOptions& options) {
  ExportOptions out = options;
  const json& values = graph_of(archive).at("tensor_values");
  const auto inputs = user_input_names(archive);
  std::map<std::string, int64_t> symbolic_ints;  // symbolic int values with their example value
  if (graph_of(archive).contains("sym_int_values"))
    for (const auto& [name, value] : graph_of(archive).at("sym_int_values").items())
      if (value.contains("as_int") || (value.contains("as_expr") && value.at("as_expr").contains("hint")))
        symbolic_ints[name] = program_ints(json::array({value}), name).front();
  if (out.inputs.empty())
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::string& name = inputs[i];
      InputSpec spec;
      spec.name = i < options.input_names.size() ? options.input_names[i] : name;
      if (values.contains(name)) {
        spec.shape = program_ints(values.at(name).at("sizes"), name);
        spec.dtype = dtype_of(program_scalar_type(values.at(name).at("dtype").get<int>(), name));
      } else if (symbolic_ints.count(name)) {
        spec.kind = InputSpec::Kind::Value;
        spec.value_type = "int";
        spec.values = {std::to_string(symbolic_ints.at(name))};
      }
      out.inputs.push_back(spec);
    }
  if (out.output_names.empty()) out.output_names = user_output_names(archive);
  // A program's torch.cond is control flow its author wrote to be kept: a trace would fix the branch
  // the example inputs take; so would it the numbers a symbolic int input gives. Graphs without
  // either have nothing --mode could change.
  for (const auto& node : graph_of(archive).at("nodes"))
    if (node.at("target") == "torch.ops.higher_order.cond" || node.at("target") == "torch.ops.higher_order.while_loop")
      out.mode = ExportMode::Script;
  for (const auto& name : inputs)
    if (symbolic_ints.count(name)) out.mode = ExportMode::Script;
  if (out.dynamic_axes.empty()) {
    const auto add_symbols = [&](const std::string& graph_name, const std::string& value_name) {
      if (!values.contains(value_name)) return;
      const json& sizes = values.at(value_name).at("sizes");
      for (size_t d = 0; d < sizes.size(); ++d)
        if (const std::string symbol = program_symbol(sizes[d]); !symbol.empty())
          out.dynamic_axes[graph_name][static_cast<int64_t>(d)] = symbol;
    };
    for (size_t i = 0; i < inputs.size() && i < out.inputs.size(); ++i) add_symbols(out.inputs[i].name, inputs[i]);
    const auto outputs = user_output_names(archive);
    for (size_t i = 0; i < outputs.size() && i < out.output_names.size(); ++i)
      add_symbols(out.output_names[i], outputs[i]);
  }
  return out;
}

LoadedModel load_program(ProgramArchive& archive, const ExportOptions& options_as_given,
                         std::vector<torch::jit::IValue> inputs) {
  register_newer_operators_once();  // a newer PyTorch's program may call them
  LoadedModel loaded;
  loaded.traced_graph = ProgramGraphBuilder(archive, loaded).build();
  loaded.program = "torch.export program, schema " + archive.version_text();
  if (const std::string ranges = program_dim_ranges(archive.program()); !ranges.empty())
    loaded.program += "; symbolic dims " + ranges;
  const size_t expected = user_input_names(archive).size();
  if (!inputs.empty())
    loaded.inputs = std::move(inputs);
  else if (!options_as_given.inputs.empty())
    loaded.inputs = make_example_inputs(options_as_given.inputs, options_as_given.seed);
  else
    loaded.inputs = example_tensor_inputs(archive);
  if (loaded.inputs.size() != expected)
    throw ConfigError("the program takes " + std::to_string(expected) + " inputs; " +
                          std::to_string(loaded.inputs.size()) +
                          (options_as_given.inputs.empty() ? " example inputs are saved in the archive"
                                                           : " example inputs were given"),
                      ErrorContext::for_file(archive.path(), "give one --input per program input, in order"));
  return loaded;
}

torch::jit::Module program_module(ProgramArchive& archive) {
  register_newer_operators_once();
  LoadedModel loaded;
  const std::shared_ptr<torch::jit::Graph> graph = ProgramGraphBuilder(archive, loaded).build();
  torch::jit::Module module(c10::QualifiedName("__torch__.onnxport.Program"));
  torch::jit::Value* self = graph->insertInput(0, "self");
  self->setType(module.type());
  std::vector<c10::Argument> arguments{c10::Argument("self", module.type())};
  const auto names = user_input_names(archive);
  for (size_t i = 1; i < graph->inputs().size(); ++i)
    arguments.emplace_back(i - 1 < names.size() ? names[i - 1] : "input" + std::to_string(i),
                           graph->inputs()[i]->type()->kind() == c10::TypeKind::IntType ? c10::TypePtr(c10::IntType::get())
                                                                                       : c10::TypePtr(c10::TensorType::get()));
  const c10::FunctionSchema schema("forward", "", std::move(arguments),
                                   {c10::Argument("", graph->outputs()[0]->type())});
  define_forward(module, graph, schema);
  module.eval();
  return module;
}

}  // namespace onnxport::core
