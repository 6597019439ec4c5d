"""Rows for the quantized pack (plugins/quantized): quantize/dequantize, fake quantization and
quantized:: ops, exported as QuantizeLinear/DequantizeLinear around float ops. Every model ends
in float (dequantize), so ONNX Runtime's outputs compare with eager PyTorch's; the tolerance is
one quantization step of the output, since float rounding may tip a value to the next level."""
import torch.ao.nn.quantized as nnq  # noqa: F401

from op_cases import *  # noqa: F401,F403

QOPSETS = dict(since=10, fails={9: "opset 9"})  # opset 10 is not in op_cases.OPSETS
Q = torch.ops.quantized


def q8(x, scale=0.05, zero_point=128):
    return torch.quantize_per_tensor(x, scale, zero_point, torch.quint8)


def step(scale):
    """Tolerance of one quantization step."""
    return dict(rtol=0.0, atol=scale * 1.001)


# ---- entering and leaving the quantized domain

case("quantize_per_tensor", ["quantize_per_tensor", "dequantize"], [f32(3, 4, 5)],
     lambda x: torch.dequantize(q8(x)), **QOPSETS)
case("quantize_per_tensor_qint8", ["quantize_per_tensor", "dequantize"], [f32(3, 4)],
     lambda x: torch.quantize_per_tensor(x, 0.02, -3, torch.qint8).dequantize(), **QOPSETS)
case("quantize_per_tensor_qint32", ["quantize_per_tensor"], [f32(3, 4)],
     lambda x: torch.quantize_per_tensor(x, 0.02, 0, torch.qint32).dequantize(),
     opsets=[], fails={13: "only torch.quint8 and torch.qint8"})
case("quantize_per_channel", ["quantize_per_channel", "dequantize"], [f32(2, 3, 4)],
     lambda x: torch.quantize_per_channel(x, torch.tensor([0.02, 0.05, 0.1]), torch.tensor([0, 10, -5]), 1,
                                          torch.qint8).dequantize(), since=13, fails={11: "opset 11"})
case("fake_quantize_per_tensor", ["fake_quantize_per_tensor_affine"], [f32(3, 4, 5)],
     lambda x: (torch.fake_quantize_per_tensor_affine(x, 0.05, 128, 0, 255),
                torch.fake_quantize_per_tensor_affine(x, 0.02, 3, -128, 127),
                torch.fake_quantize_per_tensor_affine(x, 0.03, 60, 0, 127)), **QOPSETS)
case("fake_quantize_per_tensor_tensor_qparams", ["fake_quantize_per_tensor_affine"], [f32(3, 4)],
     lambda x: torch.fake_quantize_per_tensor_affine(x, torch.tensor(0.04), torch.tensor(100, dtype=torch.int32),
                                                     0, 255), **QOPSETS)
case("fake_quantize_per_tensor_range", ["fake_quantize_per_tensor_affine"], [f32(3, 4)],
     lambda x: torch.fake_quantize_per_tensor_affine(x, 0.05, 0, 0, 15),
     opsets=[], fails={13: "has no ONNX equivalent"})
case("fake_quantize_per_channel", ["fake_quantize_per_channel_affine"], [f32(2, 3, 4)],
     lambda x: (torch.fake_quantize_per_channel_affine(x, torch.tensor([0.02, 0.05, 0.1]),
                                                       torch.tensor([0, 10, -5], dtype=torch.int32), 1, -128, 127),
                torch.fake_quantize_per_channel_affine(x, torch.tensor([0.02, 0.05, 0.1, 0.04]),
                                                       torch.tensor([100, 10, 50, 0], dtype=torch.int32), 2, 0, 127)),
     since=13, fails={11: "opset 11"})

# ---- quantized:: ops without weights

case("quantized_add", ["quantized::add", "quantize_per_tensor", "dequantize"], [f32(3, 4), f32(3, 4)],
     lambda x, y: Q.add(q8(x), q8(y, 0.04, 120), 0.08, 128).dequantize(), **QOPSETS, **step(0.08))
case("quantized_add_broadcast", ["quantized::add"], [f32(2, 3, 4), f32(4)],
     lambda x, y: Q.add(q8(x), q8(y), 0.1, 100).dequantize(), **QOPSETS, **step(0.1))
case("quantized_add_relu", ["quantized::add_relu"], [f32(3, 4), f32(3, 4)],
     lambda x, y: Q.add_relu(q8(x), q8(y), 0.05, 0).dequantize(), **QOPSETS, **step(0.05))
case("quantized_mul", ["quantized::mul"], [f32(3, 4), f32(3, 4)],
     lambda x, y: Q.mul(q8(x), q8(y), 0.06, 128).dequantize(), **QOPSETS, **step(0.06))
case("quantized_cat", ["quantized::cat"], [f32(2, 3), f32(2, 5)],
     lambda x, y: (Q.cat([q8(x), q8(y, 0.04, 120)], 1, 0.05, 128).dequantize(),
                   Q.cat([q8(x), q8(x)], -2, None, None).dequantize()), **QOPSETS, **step(0.05))
case("quantized_sigmoid", ["quantized::sigmoid"], [f32(3, 4)],
     lambda x: Q.sigmoid(q8(x), 1 / 256, 0).dequantize(), **QOPSETS, **step(1 / 256))
case("quantized_hardswish", ["quantized::hardswish"], [f32(3, 4, low=-4, high=4)],
     lambda x: Q.hardswish(q8(x), 0.03, 20).dequantize(), **QOPSETS, **step(0.03))
case("quantized_leaky_relu", ["quantized::leaky_relu"], [f32(3, 4)],
     lambda x: Q.leaky_relu(q8(x), 0.1, False, 0.04, 30).dequantize(), **QOPSETS, **step(0.04))
case("quantized_layer_norm", ["quantized::layer_norm"], [f32(2, 3, 4)],
     lambda x: (Q.layer_norm(q8(x), [4], torch.linspace(0.5, 1.5, 4), torch.linspace(-0.2, 0.2, 4), 1e-5,
                             0.03, 128).dequantize(),
                Q.layer_norm(q8(x), [3, 4], None, None, 1e-5, 0.03, 128).dequantize()),
     **QOPSETS, **step(0.03))
case("quantized_group_norm", ["quantized::group_norm"], [f32(2, 4, 3, 3)],
     lambda x: Q.group_norm(q8(x), 2, torch.linspace(0.5, 1.5, 4), torch.linspace(-0.2, 0.2, 4), 1e-5,
                            0.03, 128).dequantize(), **QOPSETS, **step(0.03))
case("quantized_instance_norm", ["quantized::instance_norm"], [f32(2, 3, 5)],
     lambda x: Q.instance_norm(q8(x), torch.linspace(0.5, 1.5, 3), torch.linspace(-0.2, 0.2, 3), 1e-5,
                               0.03, 128).dequantize(), **QOPSETS, **step(0.03))


# ---- eager-mode quantized modules (torch.ao.quantization prepare/convert)

class QuantizedBlock(nn.Module):
    """QuantStub -> FloatFunctional add/mul/cat -> DeQuantStub, calibrated on random data."""

    def __init__(self):
        super().__init__()
        self.quant = torch.ao.quantization.QuantStub()
        self.dequant = torch.ao.quantization.DeQuantStub()
        self.add = nn.quantized.FloatFunctional()
        self.add_relu = nn.quantized.FloatFunctional()
        self.mul = nn.quantized.FloatFunctional()
        self.cat = nn.quantized.FloatFunctional()

    def forward(self, x):
        q = self.quant(x)
        y = self.add_relu.add_relu(self.add.add(q, q), q)
        return self.dequant(self.cat.cat([self.mul.mul(y, q), q], 1))


def converted(model, *shape):
    model.eval()
    model.qconfig = torch.ao.quantization.get_default_qconfig("qnnpack")
    torch.ao.quantization.prepare(model, inplace=True)
    model(torch.randn(*shape))
    return torch.ao.quantization.convert(model, inplace=True)


case("quantized_eager_block", ["quantize_per_tensor", "quantized::add", "quantized::add_relu", "quantized::mul",
                               "quantized::cat", "dequantize"], [f32(2, 3, 4)],
     module=lambda: converted(QuantizedBlock(), 2, 3, 4), **QOPSETS, rtol=0.0, atol=0.1)


# ---- ops with prepacked weights: their weights are TorchScript custom-class objects
# (Conv2dPackedParamsBase, LinearPackedParamsBase) that the core cannot yet turn into values.

class QuantizedConvLinear(nn.Module):
    def __init__(self, relu):
        super().__init__()
        self.quant = torch.ao.quantization.QuantStub()
        self.dequant = torch.ao.quantization.DeQuantStub()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.relu = nn.ReLU() if relu else nn.Identity()
        self.linear = nn.Linear(4, 5)

    def forward(self, x):
        y = self.relu(self.conv(self.quant(x)))
        return self.dequant(self.linear(y.permute(0, 2, 3, 1).reshape(-1, 4)))


PACKED = "unsupported TorchScript constant of type __torch__.torch.classes.quantized"
case("quantized_conv2d_linear", ["quantized::conv2d", "quantized::linear"], [f32(1, 3, 5, 5)],
     module=lambda: converted(QuantizedConvLinear(False), 1, 3, 5, 5), opsets=[], fails={13: PACKED})


class QuantizedConvReluLinearRelu(QuantizedConvLinear):
    def __init__(self):
        super().__init__(True)
        self.linear = nn.Sequential(nn.Linear(4, 5), nn.ReLU())

    def fuse(self):
        torch.ao.quantization.fuse_modules(self, [["conv", "relu"], ["linear.0", "linear.1"]], inplace=True)
        return self


case("quantized_conv2d_relu_linear_relu", ["quantized::conv2d_relu", "quantized::linear_relu"], [f32(1, 3, 5, 5)],
     module=lambda: converted(QuantizedConvReluLinearRelu().eval().fuse(), 1, 3, 5, 5), opsets=[], fails={13: PACKED})

for op in ("quantized::conv2d", "quantized::conv2d_relu", "quantized::linear", "quantized::linear_relu"):
    UNREACHABLE[op] = ("its prepacked weights reach the core as a TorchScript custom-class constant that "
                       "core/src/convert.cpp's ConstantMapper rejects (rows quantized_conv2d_* expect that error)")
