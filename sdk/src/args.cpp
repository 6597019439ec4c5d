#include "onnxport/args.h"

#include "onnxport/errors.h"

namespace onnxport {

void Args::fail(size_t i, const std::string& expected) const {
  std::string arg = "argument " + std::to_string(i);
  if (i < node_->input_names.size() && !node_->input_names[i].empty()) arg += " (" + node_->input_names[i] + ")";
  const std::string found = i < values_.size() ? values_[i]->describe()
                                               : "nothing (the node has " + std::to_string(values_.size()) + " inputs)";
  ErrorContext ctx;
  ctx.torch_op = node_->kind;
  ctx.module_path = node_->module_path;
  ctx.source = node_->source_location;
  throw ArgumentError(node_->kind + ": " + arg + " expected " + expected + ", found " + found, ctx);
}

Value* Args::at(size_t i) const {
  if (i >= values_.size()) fail(i, "a value");
  return values_[i];
}

Value* Args::tensor(size_t i) const {
  Value* v = at(i);
  if (!v->is_tensor()) fail(i, "a tensor");
  return v;
}

Value* Args::optional_tensor(size_t i) const {
  if (i >= values_.size() || values_[i]->is_none()) return nullptr;
  return tensor(i);
}

bool Args::is_none(size_t i) const { return i >= values_.size() || values_[i]->is_none(); }

int64_t Args::i(size_t i) const {
  if (auto v = at(i)->maybe_int()) return *v;
  fail(i, "a constant int");
}

double Args::f(size_t i) const {
  if (auto v = at(i)->maybe_float()) return *v;
  fail(i, "a constant float");
}

bool Args::b(size_t i) const {
  if (auto v = at(i)->maybe_bool()) return *v;
  fail(i, "a constant bool");
}

std::string Args::s(size_t i) const {
  if (auto v = at(i)->maybe_string()) return *v;
  fail(i, "a constant string");
}

std::vector<int64_t> Args::is(size_t i) const {
  Value* v = at(i);
  if (auto l = v->maybe_ints()) return *l;
  if (auto one = v->maybe_int()) return {*one};
  fail(i, "a constant int list");
}

std::vector<double> Args::fs(size_t i) const {
  Value* v = at(i);
  if (auto l = v->maybe_floats()) return *l;
  if (auto one = v->maybe_float()) return {*one};
  fail(i, "a constant float list");
}

const Tensor& Args::t(size_t i) const {
  if (const Tensor* t = at(i)->maybe_tensor()) return *t;
  fail(i, "a constant tensor");
}

std::vector<Value*> Args::list(size_t i) const {
  Value* v = at(i);
  if (!v->is_list()) fail(i, "a list");
  return v->elements();
}

std::optional<int64_t> Args::opt_i(size_t i) const {
  if (is_none(i)) return std::nullopt;
  return this->i(i);
}

std::optional<double> Args::opt_f(size_t i) const {
  if (is_none(i)) return std::nullopt;
  return f(i);
}

std::optional<std::vector<int64_t>> Args::opt_is(size_t i) const {
  if (is_none(i)) return std::nullopt;
  return is(i);
}

}  // namespace onnxport
