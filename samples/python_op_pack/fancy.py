# A Python op pack: torch.onnx symbolic functions, registered as for torch.onnx.export. Dropped
# in a --plugin-dir, onnxport runs this file once and exports vendor::fancy with the symbolic.
import torch
from torch.onnx import register_custom_op_symbolic, symbolic_helper


@symbolic_helper.parse_args("v", "f")
def fancy(g, x, alpha):
    # vendor::fancy(x, alpha) = x * sigmoid(alpha * x), in standard ONNX ops
    scaled = g.op("Mul", x, g.op("Constant", value_t=torch.tensor(alpha, dtype=torch.float32)))
    return g.op("Mul", x, g.op("Sigmoid", scaled))


register_custom_op_symbolic("vendor::fancy", fancy, 9)
