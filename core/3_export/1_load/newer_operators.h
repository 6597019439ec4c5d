#pragma once
// Operators that a newer PyTorch writes into TorchScript files and the libtorch onnxport runs on may
// lack (libtorch 1.13 has no aten::scaled_dot_product_attention): before a model is loaded, each one
// the dispatcher does not know is registered with its schema exactly as the newer release declares
// it and a kernel made of ATen ops, for the run that records types. Their ONNX mappings live in op
// packs, like any other operator's. On a libtorch that has an operator, its entry registers nothing.
#include <torch/library.h>

#include <string>
#include <vector>

namespace onnxport::core {

struct NewerOperator {
  const char* schema;              // "aten::name.overload(...) -> ...", as the newer release declares it
  const char* since;               // the PyTorch release that introduced it ("2.0")
  torch::CppFunction (*kernel)();  // its kernel (runs on any device: CompositeImplicitAutograd)
};

// The table: the one place an operator is added.
const std::vector<NewerOperator>& newer_operators();

struct NewerOperatorStatus {
  enum class Outcome {
    Registered,       // the dispatcher lacked it: registered now
    Known,            // the dispatcher has it with this schema
    KnownDifferently  // the dispatcher has an operator of this name with another schema: left alone
  };
  std::string op;  // "aten::scaled_dot_product_attention"
  Outcome outcome;
  std::string known_schema;  // KnownDifferently: the schema the dispatcher has
};

// Registers the operators of `table` that neither the dispatcher nor TorchScript's operator table
// knows; the registrations last as long as the process. One status per entry, in table order.
std::vector<NewerOperatorStatus> register_newer_operators(const std::vector<NewerOperator>& table);

// Where an operator this libtorch may lack comes from: " (an operator of PyTorch 2.14; 2.6 has none of
// that name)" for "aten::linalg_matrix_sqrth", from the first of the compared releases (1.13.1,
// 2.6.0, 2.14.1: docs/newer-operators.md) that declares it; "" for one they do not tell.
std::string operator_release_note(const std::string& op);

// register_newer_operators(newer_operators()) the first time it is called; later calls return
// the first call's statuses. Called before a TorchScript file is loaded.
const std::vector<NewerOperatorStatus>& register_newer_operators_once();

}  // namespace onnxport::core
