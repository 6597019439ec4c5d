// Padding complex values: ONNX Pad on the pair with nothing added to its last axis. Only zero is
// a constant both parts can share (v + 0i would need a different value per part).
#include "onnxport/helpers.h"
#include "spectral.h"

namespace onnxport::spectral {
namespace {

using namespace helpers;

Value* pad_pair(Graph& g, const TorchNode& n, Value* z, const std::vector<int64_t>& torch_pads, const std::string& mode,
                std::optional<double> value) {
  if (!z->is_complex()) throw ArgumentError(n.kind + ": expected a complex tensor, got " + z->describe());
  if (value && *value != 0.0)
    throw ArgumentError(n.kind + ": padding complex values with " + std::to_string(*value) +
                        " is not supported (only 0)");
  const int64_t rank = rank_of(z, n.kind + " input");  // the pair's rank: one more than torch's
  if (torch_pads.size() % 2 || static_cast<int64_t>(torch_pads.size()) > 2 * (rank - 1))
    throw ArgumentError(n.kind + ": " + std::to_string(torch_pads.size()) + " pad sizes for a tensor of rank " +
                        std::to_string(rank - 1));
  std::vector<int64_t> pads(static_cast<size_t>(2 * rank), 0);
  for (size_t i = 0; i < torch_pads.size() / 2; ++i) {
    const int64_t dim = rank - 2 - static_cast<int64_t>(i);
    pads[static_cast<size_t>(dim)] = torch_pads[2 * i];
    pads[static_cast<size_t>(rank + dim)] = torch_pads[2 * i + 1];
  }
  const std::string onnx_mode = mode == "constant" ? "constant" : mode == "reflect" ? "reflect" : mode == "replicate" ? "edge" : "";
  if (onnx_mode.empty()) throw ArgumentError(n.kind + ": pad mode '" + mode + "' is not supported for complex values");
  return g.op("Pad", {z, g.constant_ints(pads)}, {{"mode_s", onnx_mode}});
}

}  // namespace

void add_complex_layout(Registrar& r) {
  r.add_complex("aten::constant_pad_nd", 11, [](Graph& g, const TorchNode& n, const Args& a) {
    return pad_pair(g, n, a.tensor(0), a.is(1), "constant", a.size() > 2 ? a.opt_f(2) : std::nullopt);
  });
  r.add_complex("aten::pad", 11, [](Graph& g, const TorchNode& n, const Args& a) {
    return pad_pair(g, n, a.tensor(0), a.is(1), a.is_none(2) ? "constant" : a.s(2), a.size() > 3 ? a.opt_f(3) : std::nullopt);
  });
}

}  // namespace onnxport::spectral
