// verify: the TorchScript model (libtorch) and the ONNX file (onnxport's evaluator) on the same
// inputs, several input sets, every output compared with rtol/atol.
#include "onnxport/verify.h"

#include <cmath>
#include <sstream>

#include "eval/evaluator.h"
#include "load.h"
#include "model_inputs.h"
#include "onnx_io.h"
#include "onnxport/errors.h"
#include "output_file.h"

namespace onnxport {

namespace {

using core::eval::EvalValue;

// The model's outputs as ONNX flattens them: tuples and lists give their elements, numbers
// become 0-d tensors.
void flatten_outputs(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) flatten_outputs(e, out);
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) flatten_outputs(e, out);
  } else if (v.isInt()) {
    out.push_back(at::scalar_tensor(v.toInt(), at::kLong));
  } else if (v.isDouble()) {
    out.push_back(at::scalar_tensor(v.toDouble(), at::kFloat));
  } else if (v.isBool()) {
    out.push_back(at::scalar_tensor(v.toBool(), at::kBool));
  } else if (!v.isNone()) {
    throw ExportError(std::string("verify: the model returns a ") + v.tagKind() + ", which has no ONNX output",
                      ErrorContext::with_hint("verify models that return tensors (or tuples/lists of them)"));
  }
}

OutputCheck compare(const std::string& name, const at::Tensor& onnx, const at::Tensor& torch, const VerifyOptions& o) {
  OutputCheck c;
  c.name = name;
  c.type = core::tensor_type_text(onnx);
  if (onnx.scalar_type() != torch.scalar_type() || !onnx.sizes().equals(torch.sizes())) {
    c.problem = "ONNX gives " + c.type + ", PyTorch " + core::tensor_type_text(torch);
    return c;
  }
  if (onnx.numel() == 0) {
    c.ok = true;
    return c;
  }
  if (!at::isFloatingType(torch.scalar_type()) && !at::isComplexType(torch.scalar_type())) {
    const auto differ = at::ne(onnx, torch);
    c.max_abs_error =
        differ.any().item<bool>() ? (onnx.to(at::kDouble) - torch.to(at::kDouble)).abs().max().item<double>() : 0;
    c.ok = c.max_abs_error == 0;
    return c;
  }
  const auto a = onnx.to(at::kDouble), e = torch.to(at::kDouble);
  const auto both_nan = at::logical_and(at::isnan(a), at::isnan(e));
  const auto error = at::where(both_nan, at::zeros_like(a), (a - e).abs().nan_to_num(INFINITY));
  c.max_abs_error = error.max().item<double>();
  const auto significant = e.abs() > o.atol;
  c.max_rel_error = significant.any().item<bool>()
                        ? at::where(significant, error / e.abs(), at::zeros_like(error)).max().item<double>()
                        : 0;
  c.ok = at::le(error, o.atol + o.rtol * e.abs()).all().item<bool>();
  return c;
}

std::string figure(double v) {
  std::ostringstream s;
  s.precision(2);
  s << std::scientific << v;
  return s.str();
}

}  // namespace

VerifyResult verify_onnx_file(const std::string& model_path, const std::string& onnx_path,
                              const VerifyOptions& options) {
  if (options.samples < 1)
    throw ConfigError("--samples " + std::to_string(options.samples) + ": at least one input set is needed",
                      ErrorContext::with_hint("give --samples 1 or more"));
  if (!(options.rtol >= 0) || !(options.atol >= 0))
    throw ConfigError("--rtol/--atol must be non-negative numbers",
                      ErrorContext::with_hint("e.g. --rtol 1e-3 --atol 1e-5"));
  torch::jit::Module module = core::load_torchscript_file(model_path);
  module.eval();
  const onnx::ModelProto model = core::read_model_file(onnx_path);
  VerifyResult result;
  try {
    core::eval::ModelEvaluator evaluator(model, core::directory_of(onnx_path));
    if (auto missing = evaluator.unsupported_nodes(); !missing.empty()) {
      std::string list;
      for (const auto& m : missing) list += (list.empty() ? "" : "; ") + m;
      throw ExportError("verify: onnxport's evaluator has no kernel for " + list + " in '" + onnx_path + "'",
                        ErrorContext::with_hint("compare in ONNX Runtime instead"));
    }
    const auto& schema = module.get_method("forward").function().getSchema();
    const size_t forward_args = schema.arguments().size() - 1;  // without self
    if (forward_args != evaluator.input_names().size())
      throw ConfigError("verify: forward() of '" + model_path + "' takes " + std::to_string(forward_args) +
                            " arguments, '" + onnx_path + "' has " + std::to_string(evaluator.input_names().size()) +
                            " inputs",
                        ErrorContext::with_hint("verify compares models whose forward takes one tensor per graph "
                                                "input (tuple arguments are not supported yet)"));
    torch::NoGradGuard no_grad;
    const core::ModelInputs first =
        core::inputs_for_model(model.graph(), evaluator.input_names(), options.inputs, options.seed);
    for (int k = 0; k < options.samples; ++k) {
      const core::ModelInputs inputs =
          k == 0 ? first : core::redrawn_inputs(model.graph(), evaluator.input_names(), first, options.seed + k, k);
      std::vector<c10::IValue> args(inputs.tensors.begin(), inputs.tensors.end());
      std::vector<at::Tensor> expected;
      flatten_outputs(module.forward(args), expected);
      const auto actual = evaluator.run(std::vector<EvalValue>(inputs.tensors.begin(), inputs.tensors.end()));
      SampleCheck sample;
      sample.inputs = inputs.described;
      if (actual.size() < expected.size())
        throw ExportError("verify: the model returns " + std::to_string(expected.size()) + " tensors, '" + onnx_path +
                              "' has " + std::to_string(actual.size()) + " outputs",
                          ErrorContext::with_hint("verify the ONNX file exported from this model"));
      sample.ok = true;
      for (size_t i = 0; i < actual.size(); ++i) {
        const std::string& name = evaluator.output_names()[i];
        if (i >= expected.size()) {
          sample.unchecked.push_back(name);
          continue;
        }
        if (actual[i].is_sequence())
          throw ExportError("verify: output '" + name + "' is a sequence; comparing sequences is not supported yet",
                            ErrorContext::with_hint("compare it in ONNX Runtime"));
        sample.outputs.push_back(compare(name, actual[i].tensor, expected[i], options));
        sample.ok = sample.ok && sample.outputs.back().ok;
      }
      result.samples.push_back(std::move(sample));
    }
  } catch (const core::eval::EvalError& e) {
    throw ExportError(std::string("verify: running '") + onnx_path + "': " + e.what(),
                      ErrorContext::with_hint("this node cannot be evaluated by onnxport; compare in ONNX Runtime"));
  }
  result.ok = true;
  for (size_t k = 0; k < result.samples.size() && result.ok; ++k)
    for (const auto& out : result.samples[k].outputs)
      if (!out.ok) {
        result.ok = false;
        result.verdict = "MISMATCH: output '" + out.name + "' of input set " + std::to_string(k + 1) + ": " +
                         (out.problem.empty() ? "max abs error " + figure(out.max_abs_error) + ", max rel error " +
                                                    figure(out.max_rel_error) + " (rtol " + figure(options.rtol) +
                                                    ", atol " + figure(options.atol) + ")"
                                              : out.problem);
        break;
      }
  if (result.ok) {
    double worst = 0;
    for (const auto& s : result.samples)
      for (const auto& out : s.outputs) worst = std::max(worst, out.max_abs_error);
    result.verdict = "ok: " + std::to_string(result.samples.size()) + " input sets, " +
                     std::to_string(result.samples.empty() ? 0 : result.samples[0].outputs.size()) +
                     " outputs each, max abs error " + figure(worst) + " (rtol " + figure(options.rtol) + ", atol " +
                     figure(options.atol) + ")";
  }
  return result;
}

}  // namespace onnxport
