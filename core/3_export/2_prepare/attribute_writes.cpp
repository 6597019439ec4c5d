#include "3_export/2_prepare/attribute_writes.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <map>
#include <optional>
#include <set>

#include "onnxport/errors.h"
#include "3_export/2_prepare/torch_graph.h"

namespace onnxport::core {

namespace {

// "sub.attr" for a value reached from self by prim::GetAttr (self itself is ""), if it is one.
std::optional<std::string> attribute_path(const torch::jit::Value* v, const torch::jit::Value* self) {
  if (v == self) return std::string();
  const torch::jit::Node* n = v->node();
  if (n->kind() != c10::prim::GetAttr) return std::nullopt;
  auto owner = attribute_path(n->input(0), self);
  if (!owner) return std::nullopt;
  return owner->empty() ? n->s(c10::attr::name) : *owner + "." + n->s(c10::attr::name);
}

std::optional<std::string> written_path(const torch::jit::Node* n, const torch::jit::Value* self) {
  if (n->kind() != c10::prim::SetAttr) return std::nullopt;
  auto owner = attribute_path(n->input(0), self);
  if (!owner) return std::nullopt;
  return owner->empty() ? n->s(c10::attr::name) : *owner + "." + n->s(c10::attr::name);
}

// Every attribute path some node in `block` (or a block inside it) assigns.
void collect_writes(const torch::jit::Block* block, const torch::jit::Value* self, std::set<std::string>& written) {
  for (const auto* n : block->nodes()) {
    if (auto path = written_path(n, self)) written.insert(*path);
    for (const auto* b : n->blocks()) collect_writes(b, self, written);
  }
}

c10::IValue loaded_value(const torch::jit::Module& self, const std::string& path) {
  const auto [owner, name] = attribute_owner(self, path);
  return owner.attr(name);
}

using Current = std::map<std::string, torch::jit::Value*>;

// The type a value merged from `a` and `b` has (a Tensor and None merge to Optional[Tensor]).
c10::TypePtr merged_type(const c10::TypePtr& a, const c10::TypePtr& b) {
  if (auto unified = c10::unifyTypes(a, b)) return *unified;
  return a;
}

void thread_block(torch::jit::Block* block, const torch::jit::Value* self, Current& current);

// A branch or loop that assigns attributes: each assigned one becomes an extra If output (its
// value at the end of each branch) or loop-carried value, so reads after it see the path taken.
void thread_if(torch::jit::Node* n, const torch::jit::Value* self, Current& current) {
  std::set<std::string> inner;
  for (const auto* b : n->blocks()) collect_writes(b, self, inner);
  std::vector<Current> at_end;
  for (auto* b : n->blocks()) {
    Current local = current;
    thread_block(b, self, local);
    for (const auto& path : inner) b->registerOutput(local.at(path));
    at_end.push_back(std::move(local));
  }
  for (const auto& path : inner)
    current[path] = n->addOutput()->setType(merged_type(at_end[0].at(path)->type(), at_end[1].at(path)->type()));
}

void thread_loop(torch::jit::Node* n, const torch::jit::Value* self, Current& current) {
  std::set<std::string> inner;
  torch::jit::Block* body = n->blocks()[0];
  collect_writes(body, self, inner);
  Current local = current;
  for (const auto& path : inner) {
    n->addInput(current.at(path));
    local[path] = body->addInput()->setType(current.at(path)->type());
  }
  thread_block(body, self, local);
  for (const auto& path : inner) {
    body->registerOutput(local.at(path));
    current[path] = n->addOutput()->setType(current.at(path)->type());
  }
}

// Rewrites `block`'s reads of the assigned attributes to their current values and its writes to
// new current values; `current` holds each path's value on entry and on exit.
void thread_block(torch::jit::Block* block, const torch::jit::Value* self, Current& current) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    torch::jit::Node* n = *it++;
    if (auto path = written_path(n, self); path && current.count(*path)) {
      current[*path] = n->input(1);
      n->destroy();
      continue;
    }
    if (n->kind() == c10::prim::GetAttr) {
      auto path = attribute_path(n->output(), self);
      if (path && current.count(*path)) {
        n->output()->replaceAllUsesWith(current.at(*path));
        n->destroy();
      }
      continue;
    }
    std::set<std::string> inner;
    for (const auto* b : n->blocks()) collect_writes(b, self, inner);
    if (n->kind() == c10::prim::If && !inner.empty()) {
      thread_if(n, self, current);
    } else if (n->kind() == c10::prim::Loop && !inner.empty()) {
      thread_loop(n, self, current);
    } else if (!inner.empty()) {
      throw ModelError("forward assigns self." + *inner.begin() + " inside a " + n->kind().toQualString() +
                           (source_of(n).empty() ? "" : " (" + source_of(n) + ")") + ", which onnxport cannot export",
                       ErrorContext::with_hint("assign it outside that block, or return the value instead"));
    } else {
      for (auto* b : n->blocks()) {
        Current local = current;  // reads only
        thread_block(b, self, local);
      }
    }
  }
}

}  // namespace

std::set<std::string> assigned_attributes(const torch::jit::Graph& graph) {
  std::set<std::string> written;
  if (!graph.inputs().empty()) collect_writes(graph.block(), graph.inputs()[0], written);
  return written;
}

std::set<std::string> assigned_attributes(const torch::jit::Method& method) {
  auto graph = torch::jit::toGraphFunction(method.function()).graph()->copy();
  torch::jit::Inline(*graph);
  return assigned_attributes(*graph);
}

std::pair<torch::jit::Module, std::string> attribute_owner(const torch::jit::Module& module, const std::string& path) {
  torch::jit::Module owner = module;
  size_t start = 0;
  for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', start = dot + 1)) {
    const std::string part = path.substr(start, dot - start);
    if (!owner.hasattr(part) || !owner.attr(part).isModule()) return {owner, ""};
    owner = owner.attr(part).toModule();
  }
  return {owner, path.substr(start)};
}

at::Tensor attribute_tensor(const torch::jit::Module& module, const std::string& path) {
  const auto [owner, name] = attribute_owner(module, path);
  if (name.empty() || !owner.hasattr(name) || !owner.attr(name).isTensor()) return {};
  return owner.attr(name).toTensor();
}

void set_attribute_tensor(const torch::jit::Module& module, const std::string& path, const at::Tensor& value) {
  auto [owner, name] = attribute_owner(module, path);
  owner.setattr(name, value);
}

size_t fold_attribute_writes(torch::jit::Graph& graph, const torch::jit::Module& self_module, WrittenState& state) {
  if (graph.inputs().empty()) return 0;
  const torch::jit::Value* self = graph.inputs()[0];
  const std::set<std::string> written = assigned_attributes(graph);
  if (written.empty()) return 0;

  Current current;
  {
    torch::jit::WithInsertPoint at_start(graph.block()->nodes().front());
    for (const auto& path : written) {
      const c10::IValue value = loaded_value(self_module, path);
      if (!value.isTensor()) {
        current[path] = graph.insertConstant(value);
        continue;
      }
      state.paths.push_back(path);
      state.loaded.push_back(value.toTensor());
      if (!state.as_io) {
        current[path] = graph.insertConstant(value);
        continue;
      }
      torch::jit::Value* input = graph.addInput();
      input->setType(c10::TensorType::create(value.toTensor()));
      current[path] = input;
    }
  }
  thread_block(graph.block(), self, current);
  if (state.as_io)
    for (const auto& path : state.paths) graph.registerOutput(current.at(path));
  return written.size();
}

}  // namespace onnxport::core
