#include "onnxport/registrar.h"

#include <set>

#include "onnxport/errors.h"
#include "onnxport/helpers.h"

namespace onnxport {

void Registrar::add_symbolic(const std::string& torch_op, int since_opset, Symbolic fn, bool is_override) {
  if (torch_op.find("::") == std::string::npos)
    throw RegistryError("cannot register '" + torch_op + "': a torch op is namespace::name, e.g. aten::relu");
  if (since_opset < 1)
    throw RegistryError("cannot register '" + torch_op + "' for since-opset " + std::to_string(since_opset));
  if (!fn) throw RegistryError("cannot register '" + torch_op + "': empty symbolic");
  registrations_.push_back(Registration{torch_op, since_opset, std::move(fn), is_override});
}

namespace {

// The real or the imaginary part of each complex value among `values` (list elements too).
std::vector<Value*> parts_of(Graph& g, const TorchNode& n, const std::vector<Value*>& values, bool imaginary) {
  // expand_as, reshape_as, view_as read only the shape of their real argument.
  const bool shape_only = n.kind.size() > 3 && n.kind.compare(n.kind.size() - 3, 3, "_as") == 0;
  std::vector<Value*> out;
  for (Value* v : values) {
    if (v->is_list()) {
      out.push_back(g.list(parts_of(g, n, v->elements(), imaginary)));
    } else if (v->is_complex()) {
      auto [re, im] = helpers::complex_parts(g, v);
      out.push_back(imaginary ? im : re);
    } else if (v->is_tensor() && !v->is_scalar() && is_floating(v->dtype()) && !shape_only) {
      throw ArgumentError(n.kind + ": mixes complex and real floating-point tensors (" + v->describe() +
                          "), which onnxport converts only for complex arithmetic; make the real one complex "
                          "first (torch.complex(x, torch.zeros_like(x)))");
    } else {
      out.push_back(v);
    }
  }
  return out;
}

// `rank`: the complex output's, from the node, for parts whose rank inference lost.
Value* pair_of(Graph& g, Value* re, Value* im, std::optional<int64_t> rank) {
  if (re->is_list()) {
    std::vector<Value*> items;
    for (size_t i = 0; i < re->elements().size(); ++i)
      items.push_back(pair_of(g, re->elements()[i], im->elements()[i], std::nullopt));
    return g.list(items);
  }
  if (re->rank() || !rank) return helpers::complex_from_parts(g, re, im);
  return helpers::concat(g, {helpers::unsqueeze(g, re, {*rank}), helpers::unsqueeze(g, im, {*rank})}, *rank);
}

bool complex_type(DType t) { return t == DType::Complex64 || t == DType::Complex128; }

Symbolic componentwise(Symbolic fn) {
  return [fn = std::move(fn)](Graph& g, const TorchNode& n, const Args& a) {
    // The symbolic sees the node as if it were real: complex outputs typed as their parts.
    TorchNode real = n;
    for (TensorType& t : real.output_types)
      if (complex_type(t.dtype)) t.dtype = t.dtype == DType::Complex64 ? DType::Float : DType::Double;
    std::vector<Value*> values;
    for (size_t i = 0; i < a.size(); ++i) values.push_back(a.at(i));
    bool reads_complex = false;
    for (const Value* v : values) reads_complex = reads_complex || v->is_complex();
    const auto re = fn(g, real, Args(parts_of(g, n, values, false), real));
    const auto im = fn(g, real, Args(parts_of(g, n, values, true), real));
    std::vector<Value*> out;
    for (size_t i = 0; i < re.size(); ++i) {
      // A list output (split, unbind) has no dtype of its own: its tensors are complex like the input.
      const bool complex_output = i < n.output_types.size() && (complex_type(n.output_types[i].dtype) ||
                                                                 (re[i]->is_list() && reads_complex));
      out.push_back(complex_output ? pair_of(g, re[i], im[i], n.output_types[i].rank()) : re[i]);
    }
    return out;
  };
}

}  // namespace

void Registrar::add_complex_componentwise(const std::vector<std::string>& torch_ops) {
  const std::set<std::string> wanted(torch_ops.begin(), torch_ops.end());
  std::set<std::string> found;
  const size_t registered = registrations_.size();
  for (size_t i = 0; i < registered; ++i) {
    const Registration r = registrations_[i];  // a copy: add_symbolic grows the vector
    if (!wanted.count(r.torch_op)) continue;
    found.insert(r.torch_op);
    add_symbolic(complex_key(r.torch_op), r.since_opset, componentwise(r.fn), r.is_override);
  }
  for (const auto& op : wanted)
    if (!found.count(op))
      throw RegistryError("add_complex_componentwise: '" + op + "' is not registered by this pack (register it first)");
}

void Registrar::declare_domain(const std::string& domain, int version) {
  if (domain.empty() || domain == "ai.onnx")
    throw RegistryError("declare_domain: '" + domain +
                        "' is the standard ONNX domain; only custom domains are declared");
  if (version < 1) throw RegistryError("declare_domain('" + domain + "'): version must be >= 1");
  domains_.push_back(DomainDecl{domain, version});
}

void Registrar::add_evaluator(const std::string& domain, const std::string& op_type, OpEvaluator fn) {
  if (domain.empty() || domain == "ai.onnx")
    throw RegistryError("add_evaluator('" + op_type + "'): evaluators are for custom domains; '" + domain +
                        "' is the standard ONNX domain, which onnxport evaluates itself");
  if (op_type.empty() || !fn) throw RegistryError("add_evaluator('" + domain + "'): needs an op type and a function");
  evaluators_.push_back(EvaluatorDecl{domain, op_type, std::move(fn)});
}

void Registrar::add_schema(CustomOpSchema schema) {
  schema.validate();
  schemas_.push_back(std::move(schema));
}

}  // namespace onnxport
