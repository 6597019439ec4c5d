#include "4_tools/tensor_compare.h"

#include <cmath>
#include <sstream>

#include "4_tools/model_inputs.h"

namespace onnxport::core {

TensorDifference compare_tensors(const at::Tensor& onnx, const at::Tensor& torch, double rtol, double atol) {
  if (torch.is_complex() && !onnx.is_complex())  // a complex output is written as its real pair
    return compare_tensors(onnx, at::view_as_real(torch.resolve_conj()), rtol, atol);
  TensorDifference d;
  d.type = tensor_type_text(onnx);
  if (onnx.scalar_type() != torch.scalar_type() || !onnx.sizes().equals(torch.sizes())) {
    d.problem = "ONNX gives " + d.type + ", PyTorch " + tensor_type_text(torch);
    return d;
  }
  if (onnx.numel() == 0) {
    d.ok = true;
    return d;
  }
  if (!at::isFloatingType(torch.scalar_type()) && !at::isComplexType(torch.scalar_type())) {
    const bool differ = at::ne(onnx, torch).any().item<bool>();
    d.max_abs_error = differ ? (onnx.to(at::kDouble) - torch.to(at::kDouble)).abs().max().item<double>() : 0;
    d.ok = !differ;
    return d;
  }
  const auto a = onnx.to(at::kDouble), e = torch.to(at::kDouble);
  const auto both_nan = at::logical_and(at::isnan(a), at::isnan(e));
  const auto error = at::where(both_nan, at::zeros_like(a), (a - e).abs().nan_to_num(INFINITY));
  d.max_abs_error = error.max().item<double>();
  const auto significant = e.abs() > atol;
  d.max_rel_error = significant.any().item<bool>()
                        ? at::where(significant, error / e.abs(), at::zeros_like(error)).max().item<double>()
                        : 0;
  d.ok = at::logical_or(both_nan, at::le(error, atol + rtol * e.abs())).all().item<bool>();
  return d;
}

std::string error_figure(double v) {
  std::ostringstream s;
  s.precision(2);
  s << std::scientific << v;
  return s.str();
}

}  // namespace onnxport::core
