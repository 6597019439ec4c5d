"""nn pack rows: convolution, pooling, normalization, linear algebra, embedding, shuffles, softmax,
dropout, resizing, padding, pooling with indices, losses and the native_* / misc nn ops."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from op_framework import NEW_OPSETS, UNREACHABLE, With, case, f32, f64, grid, ints

# ---- nn: convolution

CONV_RTOL = dict(rtol=1e-3, atol=1e-4)
case("conv2d", ["_convolution"], [f32(1, 4, 8, 8)], module=lambda: nn.Conv2d(4, 6, 3, padding=1), **CONV_RTOL)
case("conv2d_strided_dilated_groups", ["_convolution"], [f32(2, 4, 9, 9)],
     module=lambda: nn.Conv2d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2, bias=False), **CONV_RTOL)
case("conv2d_depthwise", ["_convolution"], [f32(1, 4, 6, 6)],
     module=lambda: nn.Conv2d(4, 8, 3, groups=4, padding=(0, 1)), **CONV_RTOL)
case("conv2d_asymmetric", ["_convolution"], [f32(1, 2, 7, 9)],
     module=lambda: nn.Conv2d(2, 3, (3, 2), stride=(2, 1), padding=(1, 0)), **CONV_RTOL)
case("conv1d", ["_convolution"], [f32(1, 2, 9)], module=lambda: nn.Conv1d(2, 3, 3, stride=2), **CONV_RTOL)


def s_conv1d_groups_of_shape(x: torch.Tensor, w: torch.Tensor):
    # torchaudio's compute_deltas: groups=specgram.shape[1] of a tensor reshaped with a size of its own
    shape = x.size()
    x = x.reshape(1, -1, shape[-1])
    return F.conv1d(x, w, groups=x.shape[1])


def s_conv1d_groups_counted(x: torch.Tensor, w: torch.Tensor):
    # groups computed from values: a run-time number in the graph, but the only one the shapes allow
    groups = int((x[0, :, 0] == x[0, :, 0]).sum())
    return F.conv1d(x, w, groups=groups)


case("conv1d_groups_of_shape", ["conv1d"], [f32(2, 3, 10), f32(6, 1, 3)], s_conv1d_groups_of_shape, script=True,
     **CONV_RTOL)
case("conv1d_groups_counted", ["conv1d"], [f32(2, 4, 9), f32(8, 1, 3)], s_conv1d_groups_counted, script=True,
     **CONV_RTOL)
# The channel count dynamic: groups is known only at run time, which ONNX Conv's group attribute cannot be.
case("conv1d_groups_runtime", ["conv1d"], [f32(2, 3, 10), f32(6, 1, 3)], s_conv1d_groups_of_shape, script=True,
     dynamic={0: [1]}, opsets=[], fails={13: "groups is computed at run time"})
case("conv3d", ["_convolution"], [f32(1, 2, 4, 5, 4)], module=lambda: nn.Conv3d(2, 3, 2, padding=1), **CONV_RTOL)
case("conv_transpose2d", ["_convolution"], [f32(1, 4, 5, 5)],
     module=lambda: nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1, groups=2), **CONV_RTOL)
case("conv_transpose1d", ["_convolution"], [f32(1, 3, 6)],
     module=lambda: nn.ConvTranspose1d(3, 2, 4, stride=2, padding=1), **CONV_RTOL)
case("conv_transpose3d", ["_convolution"], [f32(1, 2, 3, 3, 3)],
     module=lambda: nn.ConvTranspose3d(2, 2, 2, stride=2, bias=False), **CONV_RTOL)
case("conv2d_same", ["_convolution_mode"], [f32(1, 2, 7, 7)],
     module=lambda: nn.Conv2d(2, 3, 4, padding="same"), **CONV_RTOL)
case("conv1d_same_dilated", ["_convolution_mode"], [f32(1, 2, 10)],
     module=lambda: nn.Conv1d(2, 3, 3, padding="same", dilation=2), **CONV_RTOL)
case("conv2d_valid", ["_convolution_mode"], [f32(1, 2, 6, 6)],
     module=lambda: nn.Conv2d(2, 3, 3, padding="valid"), **CONV_RTOL)


class ConvFunctional(nn.Module):
    """Scripted F.convNd / F.conv_transposeNd: the aten::convNd nodes tracing never records."""

    def __init__(self, nd, transposed, cin=2, cout=4, k=3):
        super().__init__()
        shape = (cin, cout // 2) if transposed else (cout, cin // 2)
        self.weight = nn.Parameter(torch.randn(*shape, *([k] * nd)) * 0.3)
        self.bias = nn.Parameter(torch.randn(cout) * 0.1)
        self.nd = nd
        self.transposed = transposed

    def forward(self, x):
        if self.transposed:
            if self.nd == 1:
                return torch.conv_transpose1d(x, self.weight, self.bias, 2, 1, 1, 2)
            if self.nd == 2:
                return torch.conv_transpose2d(x, self.weight, self.bias, 2, 1, 1, 2)
            return torch.conv_transpose3d(x, self.weight, self.bias, 2, 1, 1, 2)
        if self.nd == 1:
            return torch.conv1d(x, self.weight, self.bias, 1, 1, 1, 2)
        if self.nd == 2:
            return torch.conv2d(x, self.weight, self.bias, 2, 1, 1, 2)
        return torch.conv3d(x, self.weight, self.bias, 1, 0, 2, 2)


class ConvSame(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3, 2, 2, 3) * 0.3)

    def forward(self, x):
        return torch.conv2d(x, self.weight, None, 1, "same")


for nd, shape in [(1, (1, 2, 7)), (2, (1, 2, 6, 6)), (3, (1, 2, 5, 5, 5))]:
    case(f"conv{nd}d_scripted", [f"conv{nd}d"], [f32(*shape)],
         module=lambda nd=nd: ConvFunctional(nd, False), script=True, **CONV_RTOL)
    case(f"conv_transpose{nd}d_scripted", [f"conv_transpose{nd}d"], [f32(*shape)],
         module=lambda nd=nd: ConvFunctional(nd, True), script=True, **CONV_RTOL)
case("conv2d_scripted_same", ["conv2d"], [f32(1, 2, 6, 5)], module=ConvSame, script=True, **CONV_RTOL)

# ---- nn: pooling

case("max_pool2d", ["max_pool2d"], [f32(1, 2, 9, 9)], lambda x: F.max_pool2d(x, 3, 2))
case("max_pool2d_pad_ceil", ["max_pool2d"], [f32(1, 2, 10, 10)],
     lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True))
case("max_pool2d_dilation", ["max_pool2d"], [f32(1, 2, 7, 7)], lambda x: F.max_pool2d(x, 2, 1, dilation=2),
     since=11, fails={9: "with dilation needs opset 10"})
case("max_pool2d_rect", ["max_pool2d"], [f32(2, 1, 6, 8)], lambda x: F.max_pool2d(x, (2, 3), (1, 2)))
case("max_pool1d", ["max_pool1d"], [f32(1, 2, 8)], lambda x: F.max_pool1d(x, 2))
case("max_pool1d_ceil", ["max_pool1d"], [f32(1, 2, 9)], lambda x: F.max_pool1d(x, 2, ceil_mode=True))
case("max_pool3d", ["max_pool3d"], [f32(1, 2, 5, 5, 5)], lambda x: F.max_pool3d(x, 2, 2, 1))
case("avg_pool2d", ["avg_pool2d"], [f32(1, 2, 9, 9)],
     lambda x: (F.avg_pool2d(x, 3, 2, 1), F.avg_pool2d(x, 3, 2, 1, count_include_pad=False)))
case("avg_pool2d_ceil", ["avg_pool2d"], [f32(1, 2, 5, 5)],
     lambda x: (F.avg_pool2d(x, 2, 2, 1, ceil_mode=True),
                F.avg_pool2d(x, 2, 2, 1, ceil_mode=True, count_include_pad=False)))
case("avg_pool2d_divisor", ["avg_pool2d"], [f32(1, 2, 4, 4)], lambda x: F.avg_pool2d(x, 2, divisor_override=3),
     opsets=[], fails={13: "divisor_override has no ONNX equivalent"})
case("avg_pool1d", ["avg_pool1d"], [f32(1, 2, 8)], lambda x: (F.avg_pool1d(x, 3, 1), F.avg_pool1d(x, 2, 2, 1)))
case("avg_pool1d_ceil_exclude_pad", ["avg_pool1d"], [f32(1, 2, 7)],
     lambda x: F.avg_pool1d(x, 2, 2, 1, ceil_mode=True, count_include_pad=False))
case("max_pool2d_pad_tuple_stride_default", ["max_pool2d"], [f32(1, 2, 7, 6)],
     lambda x: F.max_pool2d(x, (3, 2), padding=(1, 0)))
case("avg_pool3d", ["avg_pool3d"], [f32(1, 2, 4, 5, 6)], lambda x: F.avg_pool3d(x, 2, 2))
case("adaptive_avg_pool2d", ["adaptive_avg_pool2d"], [f32(1, 2, 6, 6)],
     lambda x: (F.adaptive_avg_pool2d(x, (2, 3)), F.adaptive_avg_pool2d(x, 1), F.adaptive_avg_pool2d(x, (6, None))))
# Uneven adaptive windows (a size that is not a multiple of its output size; torch.onnx refuses
# them): windows of different widths that overlap (7 -> 3: [0,3) [2,5) [4,7); 7 -> 4), more outputs
# than inputs (5 -> 7), mixed with even dims (6 -> 3, 4 -> 2, output 1) and unchanged ones, unbatched.
case("adaptive_avg_pool1d_uneven", ["adaptive_avg_pool1d"], [f32(2, 3, 7), f32(1, 2, 5), f32(3, 7)],
     lambda x, y, z: (F.adaptive_avg_pool1d(x, 3), F.adaptive_avg_pool1d(x, 4), F.adaptive_avg_pool1d(y, 7),
                      F.adaptive_avg_pool1d(z, 5)))
case("adaptive_avg_pool2d_uneven", ["adaptive_avg_pool2d"], [f32(1, 2, 7, 6), f32(2, 3, 5, 4), f32(2, 7, 9)],
     lambda x, y, z: (F.adaptive_avg_pool2d(x, (3, 4)), F.adaptive_avg_pool2d(x, (3, 3)),
                      F.adaptive_avg_pool2d(x, (None, 4)), F.adaptive_avg_pool2d(y, (7, 2)),
                      F.adaptive_avg_pool2d(y, (7, 1)), F.adaptive_avg_pool2d(z, (4, 5))))
case("adaptive_avg_pool3d_uneven", ["adaptive_avg_pool3d"], [f32(1, 2, 5, 7, 3), f32(2, 4, 6, 5)],
     lambda x, y: (F.adaptive_avg_pool3d(x, (2, 3, 2)), F.adaptive_avg_pool3d(x, (7, 4, 4)),
                   F.adaptive_avg_pool3d(x, (3, 1, 3)), F.adaptive_avg_pool3d(y, (3, 4, 2))))
case("adaptive_avg_pool2d_uneven_f64", ["adaptive_avg_pool2d"], [f64(1, 2, 7, 5)],
     lambda x: F.adaptive_avg_pool2d(x, (3, 7)))
case("adaptive_max_pool1d_uneven", ["adaptive_max_pool1d"], [f32(2, 3, 7), f32(1, 2, 5)],
     lambda x, y: (F.adaptive_max_pool1d(x, 3), F.adaptive_max_pool1d(x, 4), F.adaptive_max_pool1d(y, 7)))
case("adaptive_max_pool2d_uneven", ["adaptive_max_pool2d"], [f32(1, 2, 7, 6), f32(2, 7, 9)],
     lambda x, y: (F.adaptive_max_pool2d(x, (3, 4)), F.adaptive_max_pool2d(x, (3, 3)), F.adaptive_max_pool2d(x, (9, 1)),
                   F.adaptive_max_pool2d(y, (4, 5))))
case("adaptive_max_pool3d_uneven", ["adaptive_max_pool3d"], [f32(1, 2, 5, 7, 3)],
     lambda x: (F.adaptive_max_pool3d(x, (2, 3, 2)), F.adaptive_max_pool3d(x, (7, 1, 4))))
case("adaptive_pools_uneven_dynamic_batch", ["adaptive_avg_pool3d", "adaptive_max_pool2d"], [f32(2, 2, 5, 7, 3), f32(2, 3, 7, 6)],
     lambda x, y: (F.adaptive_avg_pool3d(x, (2, 3, 2)), F.adaptive_max_pool2d(y, (3, 4), return_indices=True)),
     dynamic={0: [0, 1], 1: [0]})
# The spatial size must be known at export; a dynamic one is refused, naming the op.
case("adaptive_avg_pool2d_uneven_dynamic", ["adaptive_avg_pool2d"], [f32(1, 2, 7, 6)],
     lambda x: F.adaptive_avg_pool2d(x, (3, 4)), dynamic={0: [2]}, opsets=[],
     fails={17: "aten::adaptive_avg_pool2d: output size other than 1 needs static input spatial sizes"})
case("adaptive_avg_pool1d", ["adaptive_avg_pool1d"], [f32(1, 2, 8)],
     lambda x: (F.adaptive_avg_pool1d(x, 4), F.adaptive_avg_pool1d(x, 1)))
case("adaptive_avg_pool3d", ["adaptive_avg_pool3d"], [f32(1, 2, 4, 4, 6)],
     lambda x: (F.adaptive_avg_pool3d(x, (2, 1, 3)), F.adaptive_avg_pool3d(x, 1)))
case("adaptive_max_pool2d", ["adaptive_max_pool2d"], [f32(1, 2, 6, 6)],
     lambda x: (F.adaptive_max_pool2d(x, (3, 1)), F.adaptive_max_pool2d(x, 1)))
case("adaptive_max_pool1d", ["adaptive_max_pool1d"], [f32(1, 2, 8)], lambda x: F.adaptive_max_pool1d(x, 2))
case("adaptive_max_pool3d", ["adaptive_max_pool3d"], [f32(1, 2, 4, 4, 4)],
     lambda x: (F.adaptive_max_pool3d(x, 2), F.adaptive_max_pool3d(x, 1)))

# ---- nn: normalization


def bn_with_stats(bn):
    with torch.no_grad():
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        if bn.affine:
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.5, 0.5)
    return bn.eval()


case("batch_norm2d", ["batch_norm"], [f32(2, 3, 4, 4)], module=lambda: bn_with_stats(nn.BatchNorm2d(3)))
case("batch_norm1d", ["batch_norm"], [f32(4, 3)], module=lambda: bn_with_stats(nn.BatchNorm1d(3)))
case("batch_norm1d_seq", ["batch_norm"], [f32(2, 3, 5)], module=lambda: bn_with_stats(nn.BatchNorm1d(3)))
case("batch_norm3d", ["batch_norm"], [f32(1, 2, 3, 3, 3)], module=lambda: bn_with_stats(nn.BatchNorm3d(2)))
case("batch_norm_no_affine", ["batch_norm"], [f32(2, 3, 4)],
     module=lambda: bn_with_stats(nn.BatchNorm1d(3, affine=False)))
case("batch_norm_batch_stats", ["batch_norm"], [f32(2, 3, 4, 4)],
     module=lambda: nn.BatchNorm2d(3, track_running_stats=False, affine=False))
case("instance_norm", ["instance_norm"], [f32(2, 3, 4, 4)], module=lambda: nn.InstanceNorm2d(3, affine=True))
case("instance_norm_plain", ["instance_norm"], [f32(2, 3, 5)], module=lambda: nn.InstanceNorm1d(3))
case("instance_norm_running_stats", ["instance_norm"], [f32(2, 3, 4, 4)],
     module=lambda: bn_with_stats(nn.InstanceNorm2d(3, affine=True, track_running_stats=True)))
case("batch_norm_training", ["batch_norm"], [f32(4, 3, 2, 2)], module=lambda: bn_with_stats(nn.BatchNorm2d(3)),
     training=True)
case("layer_norm", ["layer_norm"], [f32(2, 3, 4)], module=lambda: nn.LayerNorm([3, 4]))
case("layer_norm_last", ["layer_norm"], [f32(2, 3, 4)], lambda x: F.layer_norm(x, [4]))
case("layer_norm_affine", ["layer_norm"], [f32(2, 5)],
     module=lambda: With(lambda s, x: F.layer_norm(x, [5], s.w, s.b, 1e-3), w=torch.rand(5) + 0.5,
                         b=torch.randn(5)))
case("group_norm", ["group_norm"], [f32(2, 4, 3, 3)], module=lambda: nn.GroupNorm(2, 4))
case("group_norm_plain", ["group_norm"], [f32(2, 6, 5)], lambda x: F.group_norm(x, 3))
case("group_norm_extremes", ["group_norm"], [f32(2, 4, 3)], lambda x: (F.group_norm(x, 1), F.group_norm(x, 4)))

# ---- nn: linear algebra, embedding, shuffles, softmax

case("linear", ["linear"], [f32(3, 4)], module=lambda: nn.Linear(4, 5))
case("linear_3d_no_bias", ["linear"], [f32(2, 3, 4)], module=lambda: nn.Linear(4, 2, bias=False))
case("linear_1d", ["linear"], [f32(4)], module=lambda: nn.Linear(4, 3))
case("addmm", ["addmm"], [f32(3, 4), f32(4, 5), f32(5)], lambda a, b, c: torch.addmm(c, a, b))
case("addmm_beta_alpha", ["addmm"], [f32(3, 4), f32(4, 5), f32(3, 5)],
     lambda a, b, c: torch.addmm(c, a, b, beta=0.5, alpha=2.0))
case("addmm_beta0", ["addmm"], [f32(3, 4), f32(4, 5), f32(3, 5)],
     lambda a, b, c: torch.addmm(c, a, b, beta=0.0, alpha=1.5))
case("mm", ["mm"], [f32(3, 4), f32(4, 5)], torch.mm)
case("bmm", ["bmm"], [f32(2, 3, 4), f32(2, 4, 5)], torch.bmm)
case("matmul", ["matmul"], [f32(2, 3, 4), f32(4, 5)], torch.matmul)
case("matmul_batched_broadcast", ["matmul"], [f32(2, 1, 3, 4), f32(3, 4, 2)], torch.matmul)
case("matmul_vector", ["matmul"], [f32(3, 4), f32(4)], torch.matmul)
case("matmul_vector_matrix", ["matmul"], [f32(4), f32(4, 3)], torch.matmul)
case("matmul_vector_vector", ["matmul"], [f32(4), f32(4)], torch.matmul)
case("matmul_vector_batched", ["matmul"], [f32(4), f32(2, 4, 3)], torch.matmul)
case("embedding", ["embedding"], [ints(2, 3, high=10)], module=lambda: nn.Embedding(10, 4))
case("embedding_padding_idx", ["embedding"], [ints(2, 3, high=10)], module=lambda: nn.Embedding(10, 4, padding_idx=0))
case("embedding_1d", ["embedding"], [ints(5, high=6)],
     module=lambda: With(lambda s, i: F.embedding(i, s.w), w=torch.randn(6, 3)))
case("pixel_shuffle", ["pixel_shuffle"], [f32(1, 8, 3, 3)], lambda x: F.pixel_shuffle(x, 2))
case("pixel_shuffle_3", ["pixel_shuffle"], [f32(2, 9, 2, 3)], lambda x: F.pixel_shuffle(x, 3))
case("pixel_unshuffle", ["pixel_unshuffle"], [f32(1, 2, 4, 6)], lambda x: F.pixel_unshuffle(x, 2))
case("softmax", ["softmax"], [f32(2, 3, 4)], lambda x: (F.softmax(x, 1), F.softmax(x, -1), F.softmax(x, 0)))
case("softmax_dtype", ["softmax"], [f32(2, 3)], lambda x: F.softmax(x, 1, dtype=torch.float64))
case("softmax_int_input", ["softmax"], [ints(2, 3)], lambda i: F.softmax(i, 1, dtype=torch.float32))
case("log_softmax", ["log_softmax"], [f32(2, 3, 4)], lambda x: (F.log_softmax(x, 1), F.log_softmax(x, -1)))
case("log_softmax_dtype", ["log_softmax"], [f32(2, 3)], lambda x: F.log_softmax(x, 0, dtype=torch.float64))
case("_softmax", ["_softmax"], [f32(2, 3, 4)], lambda x: (torch._softmax(x, 1, False), torch._softmax(x, -1, False)))
case("_log_softmax", ["_log_softmax"], [f32(2, 3, 4)],
     lambda x: (torch._log_softmax(x, 2, False), torch._log_softmax(x, 0, False)))

# ---- nn: dropout (identity in eval; ONNX Dropout in a training export)

case("dropout", ["dropout"], [f32(2, 3, 4)], module=lambda: nn.Dropout(0.5).eval())
case("dropout_functional", ["dropout"], [f32(2, 3)], lambda x: F.dropout(x, 0.3, training=False) * 2)
case("dropout_", ["dropout_"], [f32(2, 3)], lambda x: F.dropout(x * 1, 0.3, training=False, inplace=True))
case("dropout_train_p0", ["dropout"], [f32(2, 3)], lambda x: F.dropout(x, 0.0, training=True) + 1,
     training=True)
case("dropout__train_p0", ["dropout_"], [f32(2, 3)],
     lambda x: F.dropout(x * 1, 0.0, training=True, inplace=True), training=True)
case("feature_dropout", ["feature_dropout"], [f32(2, 3, 4, 4)], module=lambda: nn.Dropout2d(0.2).eval())
case("feature_dropout_", ["feature_dropout_"], [f32(2, 3, 4, 4)],
     lambda x: F.dropout2d(x * 1, 0.2, training=False, inplace=True))
case("alpha_dropout", ["alpha_dropout"], [f32(2, 3)], module=lambda: nn.AlphaDropout(0.2).eval())
case("alpha_dropout_", ["alpha_dropout_"], [f32(2, 3)],
     lambda x: F.alpha_dropout(x * 1, 0.2, training=False, inplace=True))
case("feature_alpha_dropout", ["feature_alpha_dropout"], [f32(2, 3, 4)],
     module=lambda: nn.FeatureAlphaDropout(0.2).eval())
case("feature_alpha_dropout_", ["feature_alpha_dropout_"], [f32(2, 3, 4)],
     lambda x: F.feature_alpha_dropout(x * 1, 0.2, training=False, inplace=True))
case("feature_dropout_train", ["feature_dropout"], [f32(2, 3, 4, 4)],
     lambda x: F.dropout2d(x, 0.0, training=True), training=True,
     opsets=[], fails={13: "in training mode has no ONNX equivalent"})


NEEDS_11 = "needs opset 11 or later"

# ---- nn: resizing (Upsample before opset 10, Resize-10, Resize from 11)

case("upsample_nearest2d_scale", ["upsample_nearest2d"], [f32(1, 2, 3, 4)],
     lambda x: F.interpolate(x, scale_factor=2))
case("upsample_nearest2d_size", ["upsample_nearest2d"], [f32(2, 3, 3, 4)], lambda x: F.interpolate(x, size=(7, 9)))
case("upsample_nearest2d_downsample", ["upsample_nearest2d"], [f32(2, 3, 5, 4)],
     lambda x: (F.interpolate(x, size=(2, 3)), F.interpolate(x, scale_factor=0.5)),
     since=11, fails={9: "downsampling (scale 0.4"})
case("upsample_nearest2d_frac_scale", ["upsample_nearest2d"], [f32(1, 2, 4, 5)],
     lambda x: F.interpolate(x, scale_factor=(1.5, 2.5)))
case("upsample_nearest1d", ["upsample_nearest1d"], [f32(2, 3, 5)],
     lambda x: (F.interpolate(x, scale_factor=3), F.interpolate(x, size=8)))
case("upsample_nearest3d", ["upsample_nearest3d"], [f32(1, 2, 2, 3, 3)],
     lambda x: (F.interpolate(x, scale_factor=2), F.interpolate(x, size=(3, 5, 4))))
case("upsample_nearest2d_per_dim_scales", ["upsample_nearest2d"], [f32(1, 2, 3, 4)],
     lambda x: torch.ops.aten.upsample_nearest2d(x, [6, 8], 2.0, 2.0))
case("upsample_nearest2d_dynamic", ["upsample_nearest2d"], [f32(1, 2, 3, 4)],
     lambda x: F.interpolate(x, scale_factor=2), dynamic={0: [0, 2, 3]})
case("upsample_nearest_exact2d", ["_upsample_nearest_exact2d"], [f32(1, 2, 5, 4)],
     lambda x: (F.interpolate(x, size=(7, 3), mode="nearest-exact"),
                F.interpolate(x, scale_factor=2, mode="nearest-exact")),
     since=11, fails={9: "supported from opset 11"})
case("upsample_nearest_exact1d_3d", ["_upsample_nearest_exact1d", "_upsample_nearest_exact3d"],
     [f32(1, 2, 5), f32(1, 1, 2, 3, 3)],
     lambda x, y: (F.interpolate(x, size=8, mode="nearest-exact"), F.interpolate(y, size=(3, 5, 2), mode="nearest-exact")),
     since=11)

LINEAR_FAILS = {9: NEEDS_11}
case("upsample_bilinear2d", ["upsample_bilinear2d"], [f32(1, 2, 3, 4)],
     lambda x: (F.interpolate(x, scale_factor=2, mode="bilinear"),
                F.interpolate(x, size=(5, 7), mode="bilinear"),
                F.interpolate(x, scale_factor=1.7, mode="bilinear")),
     since=11, fails=LINEAR_FAILS)
case("upsample_bilinear2d_align_corners", ["upsample_bilinear2d"], [f32(1, 2, 3, 4)],
     lambda x: (F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True),
                F.interpolate(x, size=(5, 2), mode="bilinear", align_corners=True)),
     since=11, fails=LINEAR_FAILS)
case("upsample_bilinear2d_downsample", ["upsample_bilinear2d"], [f32(1, 2, 8, 6)],
     lambda x: (F.interpolate(x, size=(3, 4), mode="bilinear"), F.interpolate(x, size=(1, 2), mode="bilinear"),
                F.interpolate(x, scale_factor=0.25, mode="bilinear")),
     since=11)
case("upsample_bicubic2d_to_one", ["upsample_bicubic2d"], [f32(1, 2, 5, 6)],
     lambda x: (F.interpolate(x, size=(1, 3), mode="bicubic"), F.interpolate(x, scale_factor=0.2, mode="bicubic")),
     since=11, atol=1e-4)
case("upsample_linear1d", ["upsample_linear1d"], [f32(2, 3, 5)],
     lambda x: (F.interpolate(x, scale_factor=2, mode="linear"),
                F.interpolate(x, size=9, mode="linear", align_corners=True)),
     since=11, fails=LINEAR_FAILS)
case("upsample_trilinear3d", ["upsample_trilinear3d"], [f32(1, 2, 2, 3, 3)],
     lambda x: (F.interpolate(x, scale_factor=2, mode="trilinear"),
                F.interpolate(x, size=(3, 4, 5), mode="trilinear", align_corners=True)),
     since=11, fails=LINEAR_FAILS)
case("upsample_bicubic2d", ["upsample_bicubic2d"], [f32(1, 2, 4, 5)],
     lambda x: (F.interpolate(x, scale_factor=2, mode="bicubic"),
                F.interpolate(x, size=(6, 3), mode="bicubic", align_corners=True),
                F.interpolate(x, size=(7, 8), mode="bicubic")),
     since=11, fails={9: "supported from opset 11"}, atol=1e-4)
case("upsample_bilinear2d_dynamic", ["upsample_bilinear2d"], [f32(1, 2, 3, 4)],
     lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), dynamic={0: [0, 2, 3]}, since=11)
case("upsample_bilinear2d_size_from_input", ["upsample_bilinear2d", "size"], [f32(1, 2, 3, 4), f32(1, 2, 5, 6)],
     lambda x, y: F.interpolate(x, size=y.shape[2:], mode="bilinear"), dynamic={1: [2, 3]}, since=11)

INTERPOLATE_IR = """
graph(%x : Tensor):
  %size : int[] = prim::Constant[value=[5, 7]]()
  %none : NoneType = prim::Constant()
  %mode : str = prim::Constant[value="{mode}"]()
  {align_line}
  %anti : bool = prim::Constant[value=0]()
  %y : Tensor = aten::__interpolate(%x, %size, %none, %mode, %align, %none, %anti)
  return (%y)
"""
INTERPOLATE_SCALE_IR = """
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %scale : float[] = prim::Constant[value=[2.0, 3.0]]()
  %mode : str = prim::Constant[value="nearest"]()
  %anti : bool = prim::Constant[value=0]()
  %y : Tensor = aten::__interpolate(%x, %none, %scale, %mode, %none, %none, %anti)
  return (%y)
"""


def interpolate_ir(mode, align):
    align_line = ("%align : NoneType = prim::Constant()" if align is None
                  else f"%align : bool = prim::Constant[value={align}]()")
    return INTERPOLATE_IR.format(mode=mode, align_line=align_line)


case("interpolate_nearest", ["__interpolate"], [f32(1, 2, 3, 4)], ir=interpolate_ir("nearest", None))
case("interpolate_nearest_scale", ["__interpolate"], [f32(1, 2, 3, 4)], ir=INTERPOLATE_SCALE_IR)
case("interpolate_bilinear_align", ["__interpolate"], [f32(1, 2, 3, 4)],
     ir=interpolate_ir("bilinear", 1), since=11, fails=LINEAR_FAILS)
case("interpolate_bicubic", ["__interpolate"], [f32(1, 2, 3, 4)],
     ir=interpolate_ir("bicubic", 0), since=11, atol=1e-4)
case("interpolate_area", ["__interpolate"], [f32(1, 2, 3, 4)],
     ir=interpolate_ir("area", None), opsets=[], fails={13: "'area' is adaptive_avg_pool"})



def s_interpolate_run_time_scale(x: torch.Tensor):
    # torchvision's GeneralizedRCNNTransform.resize in script mode: the factor comes from the
    # image's size, as a number taken from a tensor at run time
    size = torch.tensor(x.shape[-2:]).to(torch.float32)
    scale = float(torch.min(20.0 / size.min(), 32.0 / size.max()))
    return (F.interpolate(x, scale_factor=scale, mode="bilinear", recompute_scale_factor=True, align_corners=False),
            F.interpolate(x, scale_factor=scale, mode="nearest"),
            F.interpolate(x, scale_factor=[scale, 1.5], mode="bilinear", align_corners=True))


case("interpolate_run_time_scale", ["upsample_bilinear2d", "upsample_nearest2d"], [f32(1, 3, 10, 15)], s_interpolate_run_time_scale,
     script=True, dynamic={0: [2, 3]}, since=11, atol=1e-4)

GRID_MODES = [(m, p, a) for m in ("bilinear", "nearest", "bicubic") for p in ("zeros", "border", "reflection")
              for a in (False, True)]
case("grid_sampler", ["grid_sampler"], [f32(1, 2, 4, 5), f32(1, 3, 6, 2, low=-1.2, high=1.2)],
     lambda x, grid: tuple(F.grid_sample(x, grid, mode=m, padding_mode=p, align_corners=a)
                           for m, p, a in GRID_MODES),
     since=16, fails={14: "supported from opset 16"}, atol=1e-4)
case("grid_sampler_3d", ["grid_sampler"], [f32(1, 2, 3, 4, 5), f32(1, 2, 3, 4, 3, low=-1.2, high=1.2)],
     lambda x, grid: tuple(F.grid_sample(x, grid, mode=m, padding_mode=p, align_corners=a)
                           for m in ("bilinear", "nearest") for p in ("zeros", "border", "reflection")
                           for a in (False, True)),
     opsets=[o for o in NEW_OPSETS if o >= 20], fails={17: "4-d input only before opset 20", 18: "4-d input only"},
     atol=1e-4)
case("affine_grid", ["affine_grid_generator"], [f32(2, 2, 3), f32(2, 3, 4)],
     lambda t2, t3: (F.affine_grid(t2, [2, 3, 4, 5], align_corners=False), F.affine_grid(t2, [2, 3, 4, 5], align_corners=True),
                     F.affine_grid(t3, [2, 1, 3, 4, 5], align_corners=False)),
     opsets=[o for o in NEW_OPSETS if o >= 20], atol=1e-5)

# ---- nn: padding (Pad attributes before opset 11, inputs from 11)

case("pad_constant", ["pad"], [f32(2, 3, 4)],
     lambda x: (F.pad(x, (1, 2)), F.pad(x, (1, 0, 2, 1), value=1.5), F.pad(x, (0, 1, 1, 0, 2, 0))))
case("pad_constant_negative", ["pad"], [f32(2, 3, 5)], lambda x: F.pad(x, (-1, 2, 1, -1)))
case("pad_int64", ["pad"], [ints(2, 3)], lambda x: F.pad(x, (1, 1), value=7))
case("pad_reflect", ["pad"], [f32(1, 2, 4, 5)], lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect"))
case("pad_replicate", ["pad"], [f32(1, 2, 3, 4, 5), f32(2, 3, 4)],
     lambda x, y: (F.pad(x, (1, 2, 0, 1, 2, 0), mode="replicate"), F.pad(y, (3, 1), mode="replicate")))
case("pad_circular", ["pad"], [f32(1, 2, 3, 4), f32(2, 3, 4)],
     lambda x, y: (F.pad(x, (1, 2, 2, 1), mode="circular"), F.pad(y, (0, 3), mode="circular")))
case("pad_reflect_1d", ["pad"], [f32(2, 3, 6)], lambda x: F.pad(x, (2, 3), mode="reflect"))
case("pad_dynamic_amount", ["pad", "size"], [f32(2, 3, 4)], lambda x: F.pad(x, (0, x.size(2) // 2, 1, 0)),
     dynamic={0: [2]}, since=11, fails={9: "pads computed at run time need opset 11"})
case("constant_pad_nd", ["constant_pad_nd"], [f32(2, 3, 4)],
     lambda x: (torch.constant_pad_nd(x, [1, 2], 0.5), torch.constant_pad_nd(x, [1, 0, 0, 2])))
case("reflection_pad1d", ["reflection_pad1d"], [f32(2, 3, 5)], lambda x: torch._C._nn.reflection_pad1d(x, [2, 1]))
case("reflection_pad2d", ["reflection_pad2d"], [f32(1, 2, 4, 5)], lambda x: torch._C._nn.reflection_pad2d(x, [1, 2, 3, 0]))
case("reflection_pad3d", ["reflection_pad3d"], [f32(1, 2, 3, 4, 4)],
     lambda x: torch._C._nn.reflection_pad3d(x, [1, 1, 2, 0, 1, 2]))
case("replication_pad1d", ["replication_pad1d"], [f32(2, 3, 5)], lambda x: torch._C._nn.replication_pad1d(x, [3, 1]))
case("replication_pad2d", ["replication_pad2d"], [f32(1, 2, 3, 4)],
     lambda x: torch._C._nn.replication_pad2d(x, [1, 2, 0, 3]))
case("replication_pad3d", ["replication_pad3d"], [f32(1, 2, 2, 3, 3)],
     lambda x: torch._C._nn.replication_pad3d(x, [1, 0, 2, 1, 0, 2]))
case("pad_circular_negative", ["pad"], [f32(1, 2, 4, 5), f32(2, 3, 6)],
     lambda x, y: (F.pad(x, (-1, 2, 1, -1), mode="circular"), F.pad(y, (-2, -1), mode="circular"),
                   F.pad(y, (3, -2), mode="circular")))
case("pad_circular_op", ["_pad_circular"], [f32(1, 2, 3, 4)], lambda x: torch._C._nn._pad_circular(x, [1, 2, 3, 1]))

# ---- nn: max pooling with PyTorch's per-plane indices

case("max_pool2d_with_indices", ["max_pool2d_with_indices"], [f32(2, 3, 6, 7)],
     lambda x: F.max_pool2d(x, 2, return_indices=True))
case("max_pool2d_with_indices_pad_ceil", ["max_pool2d_with_indices"], [f32(1, 2, 7, 7)],
     lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True))
case("max_pool2d_with_indices_dilation", ["max_pool2d_with_indices"], [f32(1, 2, 7, 7)],
     lambda x: F.max_pool2d(x, 2, 1, dilation=2, return_indices=True), since=11, fails={9: "dilation needs opset 10"})
case("max_pool1d_with_indices", ["max_pool1d_with_indices"], [f32(2, 3, 9)],
     lambda x: F.max_pool1d(x, 3, 2, return_indices=True))
case("max_pool3d_with_indices", ["max_pool3d_with_indices"], [f32(1, 2, 4, 5, 4)],
     lambda x: F.max_pool3d(x, 2, return_indices=True))
case("max_pool2d_with_indices_unbatched", ["max_pool2d_with_indices"], [f32(3, 6, 6)],
     lambda x: F.max_pool2d(x, 2, return_indices=True))
case("max_pool2d_with_indices_dynamic", ["max_pool2d_with_indices"], [f32(2, 3, 6, 8)],
     lambda x: F.max_pool2d(x, 2, return_indices=True), dynamic={0: [0, 2, 3]})
case("adaptive_max_pool2d_indices", ["adaptive_max_pool2d"], [f32(2, 3, 6, 4)],
     lambda x: (F.adaptive_max_pool2d(x, (3, 1), return_indices=True), F.adaptive_max_pool2d(x, 1, return_indices=True),
                F.adaptive_max_pool2d(x, (6, 4), return_indices=True)))
case("adaptive_max_pool1d_3d_indices", ["adaptive_max_pool1d", "adaptive_max_pool3d"], [f32(2, 3, 8), f32(1, 2, 4, 4, 6)],
     lambda x, y: (F.adaptive_max_pool1d(x, 4, return_indices=True), F.adaptive_max_pool3d(y, (2, 1, 3), return_indices=True),
                   F.adaptive_max_pool3d(y, 1, return_indices=True)))
case("adaptive_max_pool2d_indices_unbatched_dynamic", ["adaptive_max_pool2d"], [f32(3, 5, 4)],
     lambda x: F.adaptive_max_pool2d(x, 1, return_indices=True), dynamic={0: [1, 2]})
# Uneven windows with indices: the first maximum in row-major order, as PyTorch (grid inputs tie).
case("adaptive_max_pool_uneven_indices", ["adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"],
     [f32(2, 3, 7), grid(2, 3, 7, 6, low=-1, high=1), f32(1, 2, 5, 7, 3), grid(3, 5, 4, low=0, high=1)],
     lambda x, y, z, w: (F.adaptive_max_pool1d(x, 3, return_indices=True), F.adaptive_max_pool1d(x, 9, return_indices=True),
                         F.adaptive_max_pool2d(y, (3, 4), return_indices=True),
                         F.adaptive_max_pool2d(y, (7, 3), return_indices=True),
                         F.adaptive_max_pool3d(z, (2, 3, 2), return_indices=True),
                         F.adaptive_max_pool2d(w, (3, 3), return_indices=True)))
case("max_unpool2d", ["max_unpool2d", "max_pool2d_with_indices"], [f32(2, 3, 6, 7)],
     lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2, output_size=(6, 7)))
case("max_unpool1d_3d", ["max_unpool2d", "max_unpool3d"], [f32(2, 3, 8), f32(1, 2, 4, 4, 6)],
     lambda x, y: (F.max_unpool1d(*F.max_pool1d(x, 2, return_indices=True), 2),
                   F.max_unpool3d(*F.max_pool3d(y, 2, return_indices=True), 2)))
case("max_unpool2d_unbatched", ["max_unpool2d"], [f32(3, 4, 4)],
     lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2))

case("bilinear", ["bilinear"], [f32(3, 4), f32(3, 5)],
     module=lambda: With(lambda s, x, y: (F.bilinear(x, y, s.w, s.b), F.bilinear(x[None], y[None], s.w)),
                         w=torch.randn(6, 4, 5), b=torch.randn(6)))

case("stft", ["stft"], [f32(2, 64)],
     module=lambda: With(lambda s, x: (
         torch.stft(x, 16, hop_length=4, window=s.hann, center=False, return_complex=False),
         torch.stft(x, 16, hop_length=5, win_length=10, window=s.hann10, center=True, normalized=True,
                    return_complex=False),
         torch.stft(x[0], 8, center=True, pad_mode="constant", onesided=False, return_complex=False),
         torch.stft(x, 12, hop_length=3, return_complex=False, center=False)),
         hann=torch.hann_window(16), hann10=torch.hann_window(10)),
     since=11, atol=1e-4)

# ---- nn: losses (explicit aten calls: F.*_loss add broadcast_tensors around them)

LOSS_OPS = (13, 14, 16, 17)
for r, name in enumerate(("none", "mean", "sum")):
    case(f"nll_loss_{name}", ["nll_loss"], [f32(4, 5), ints(4, high=5)],
         lambda x, t, r=r: torch._C._nn.nll_loss(F.log_softmax(x, 1), t, None, r, -100),
         opsets=LOSS_OPS + (11,), fails={11: "supported from opset 12"})
    case(f"cross_entropy_{name}", ["cross_entropy_loss"], [f32(3, 4, 2, 3), ints(3, 2, 3, high=4)],
         lambda x, t, r=r: F.cross_entropy(x, t, reduction=name), opsets=LOSS_OPS)
    case(f"bce_with_logits_{name}", ["binary_cross_entropy_with_logits"], [f32(3, 4), f32(3, 4, low=0, high=1)],
         lambda x, t, r=r: torch.binary_cross_entropy_with_logits(x, t, None, None, r))
    case(f"mse_l1_{name}", ["mse_loss", "l1_loss"], [f32(3, 4), f32(3, 4)],
         lambda x, t, r=r: (torch._C._nn.mse_loss(x, t, r), torch._C._nn.l1_loss(x, t, r)))
    case(f"smooth_l1_huber_{name}", ["smooth_l1_loss", "huber_loss"], [f32(3, 4), f32(3, 4)],
         lambda x, t, r=r: (torch._C._nn.smooth_l1_loss(x, t, r, 0.5), torch._C._nn.huber_loss(x, t, r, 0.7),
                            torch._C._nn.smooth_l1_loss(x, t, r, 0.0)))
    case(f"bce_{name}", ["binary_cross_entropy"], [f32(3, 4, low=0.02, high=0.98), f32(3, 4, low=0, high=1)],
         lambda x, t, r=r: torch._C._nn.binary_cross_entropy(x, t, None, r))
    case(f"kl_div_{name}", ["kl_div"], [f32(3, 4), f32(3, 4, low=0, high=1)],
         lambda x, t, r=r: (torch.kl_div(x, t, r, log_target=False), torch.kl_div(x, t.log(), r, log_target=True)))
    case(f"soft_margin_{name}", ["soft_margin_loss"], [f32(3, 4), grid(3, 4, low=-1, high=1)],
         lambda x, t, r=r: torch._C._nn.soft_margin_loss(x, t.sign() + (t == 0).float(), r))

    case(f"margin_losses_{name}", ["margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss"],
         [f32(4, 5), f32(4, 5), grid(4, low=-1, high=1)],
         lambda x, y, t, r=r: (torch.margin_ranking_loss(x[:, 0], y[:, 0], t.sign() + (t == 0).float(), 0.3, r),
                               torch.hinge_embedding_loss(x, (t.sign() + (t == 0).float())[:, None].expand(4, 5), 0.5, r),
                               torch.cosine_embedding_loss(x, y, t.sign() + (t == 0).float(), 0.2, r)))
    case(f"poisson_nll_{name}", ["poisson_nll_loss"], [f32(3, 4, low=0.1, high=2), f32(3, 4, low=0, high=4)],
         lambda x, t, r=r: (torch.poisson_nll_loss(x, t, True, False, 1e-8, r),
                            torch.poisson_nll_loss(x, t, False, True, 1e-8, r)))
    case(f"triplet_margin_{name}", ["triplet_margin_loss"], [f32(4, 5), f32(4, 5), f32(4, 5)],
         lambda a, p, n, r=r: (torch.triplet_margin_loss(a, p, n, 1.0, 2.0, 1e-6, False, r),
                               torch.triplet_margin_loss(a, p, n, 0.5, 1.0, 1e-6, True, r),
                               torch.triplet_margin_loss(a, p, n, 2.0, 3.0, 1e-6, False, r)))

    case(f"cross_entropy_smoothing_{name}", ["cross_entropy_loss"], [f32(3, 4, 2, 3), ints(3, 2, 3, high=4)],
         lambda x, t, r=r: F.cross_entropy(x, t, reduction=name, label_smoothing=0.2), opsets=LOSS_OPS)
    case(f"multi_margin_{name}", ["multi_margin_loss"], [f32(4, 5), ints(4, high=5)],
         module=lambda r=r: With(lambda s, x, t, r=r: (torch._C._nn.multi_margin_loss(x, t, 1, 1.0, None, r),
                                                       torch._C._nn.multi_margin_loss(x, t, 2, 0.5, s.w, r),
                                                       torch._C._nn.multi_margin_loss(x[0], t[0], 1, 1.0, None, r)),
                                 w=torch.rand(5) + 0.5), since=11)
    case(f"multilabel_margin_{name}", ["multilabel_margin_loss"], [f32(3, 5)],
         module=lambda r=r: With(lambda s, x, r=r: (torch._C._nn.multilabel_margin_loss(x, s.t, r),
                                                    torch._C._nn.multilabel_margin_loss(x[1], s.t[1], r)),
                                 t=torch.tensor([[3, 0, -1, 1, 2], [1, -1, 0, 0, 0], [4, 2, 1, 0, 3]])), since=11)

case("cross_entropy_smoothing_weight_ignore", ["cross_entropy_loss"], [f32(6, 5), ints(6, high=5)],
     module=lambda: With(lambda s, x, t: (F.cross_entropy(x, t, s.w, ignore_index=2, label_smoothing=0.1),
                                          F.cross_entropy(x, t, s.w, ignore_index=2, reduction="none",
                                                          label_smoothing=0.3),
                                          F.cross_entropy(x[0], t[0], label_smoothing=0.1)),
                         w=torch.rand(5) + 0.5),
     opsets=LOSS_OPS)
case("nll_loss_weight_ignore", ["nll_loss_nd"], [f32(6, 5), ints(6, high=5)],
     module=lambda: With(lambda s, x, t: (F.nll_loss(x, t, s.w, ignore_index=2),
                                          F.nll_loss(x, t, s.w, ignore_index=2, reduction="none")),
                         w=torch.rand(5) + 0.5),
     opsets=LOSS_OPS)
case("nll_loss2d", ["nll_loss2d"], [f32(2, 3, 4, 5), ints(2, 4, 5, high=3)],
     lambda x, t: torch._C._nn.nll_loss2d(x, t, None, 1, -100), opsets=LOSS_OPS)
case("nll_loss_nd", ["nll_loss_nd"], [f32(2, 3, 4), ints(2, 4, high=3)],
     lambda x, t: F.nll_loss(x, t), opsets=LOSS_OPS)
case("nll_loss_unbatched", ["nll_loss_nd"], [f32(5), ints(high=5)],
     lambda x, t: (F.nll_loss(x, t), F.nll_loss(x, t, reduction="none")), opsets=LOSS_OPS)
case("cross_entropy_weight_ignore", ["cross_entropy_loss"], [f32(6, 5), ints(6, high=5)],
     module=lambda: With(lambda s, x, t: F.cross_entropy(x, t, s.w, ignore_index=1), w=torch.rand(5) + 0.5),
     opsets=LOSS_OPS)
case("cross_entropy_probs", ["cross_entropy_loss"], [f32(3, 4, 2), f32(3, 4, 2, low=0, high=1)],
     module=lambda: With(lambda s, x, t: (F.cross_entropy(x, t), F.cross_entropy(x, t, s.w, reduction="sum"),
                                          F.cross_entropy(x, t, label_smoothing=0.2, reduction="none")),
                         w=torch.rand(4) + 0.5),
     opsets=LOSS_OPS)
case("cross_entropy_smoothing_indices", ["cross_entropy_loss"], [f32(3, 4), ints(3, high=4)],
     lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1), opsets=LOSS_OPS)
case("bce_with_logits_weights", ["binary_cross_entropy_with_logits"], [f32(3, 4), f32(3, 4, low=0, high=1)],
     module=lambda: With(lambda s, x, t: (F.binary_cross_entropy_with_logits(x, t, s.w, pos_weight=s.pw),
                                          F.binary_cross_entropy_with_logits(x * 30, t, pos_weight=s.pw,
                                                                             reduction="sum")),
                         w=torch.rand(4), pw=torch.rand(4) + 0.5))
# Integer weights are promoted to the input's dtype (PyTorch's test_binary_cross_entropy_with_logits).
case("bce_with_logits_int_weights", ["binary_cross_entropy_with_logits"], [f32(3, 4), f32(3, 4, low=0, high=1)],
     module=lambda: With(lambda s, x, t: F.binary_cross_entropy_with_logits(x, t, s.w, pos_weight=s.pw),
                         w=torch.tensor([3]), pw=torch.tensor([2, 0, 1, 3])))
case("bce_weight", ["binary_cross_entropy"], [f32(3, 4, low=0.02, high=0.98), f32(3, 4, low=0, high=1)],
     module=lambda: With(lambda s, x, t: torch._C._nn.binary_cross_entropy(x, t, s.w, 1), w=torch.rand(4)))
case("kl_div_zero_target", ["kl_div"], [f32(3, 4), f32(3, 4, low=0, high=1)],
     lambda x, t: torch.kl_div(x, torch.relu(t - 0.5), 2))

# ---- nn: native_* ops, embedding bags, im2col, conv_tbc, convolution, weight norm, shuffles

case("native_layer_norm", ["native_layer_norm"], [f32(2, 3, 4)],
     lambda x: torch.native_layer_norm(x, [4], None, None, 1e-5))
case("native_layer_norm_affine", ["native_layer_norm"], [f32(2, 3, 4), f32(3, 4), f32(3, 4)],
     lambda x, w, b: torch.native_layer_norm(x, [3, 4], w, b, 1e-3))
case("native_group_norm", ["native_group_norm"], [f32(2, 6, 3, 2), f32(6), f32(6)],
     lambda x, w, b: torch.native_group_norm(x, w, b, 2, 6, 6, 3, 1e-5))
case("native_group_norm_plain", ["native_group_norm"], [f32(2, 4, 5)],
     lambda x: torch.native_group_norm(x, None, None, 2, 4, 5, 2, 1e-5))
case("native_batch_norm_eval", ["native_batch_norm"], [f32(2, 3, 4)],
     module=lambda: With(lambda s, x: torch.native_batch_norm(x, s.w, s.b, s.rm, s.rv, False, 0.1, 1e-5),
                         w=torch.rand(3) + 0.5, b=torch.randn(3), rm=torch.randn(3), rv=torch.rand(3) + 0.5))
case("native_batch_norm_batch_stats", ["native_batch_norm"], [f32(4, 3, 2, 2), f32(3), f32(3)],
     lambda x, w, b: torch.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5))
case("native_dropout_eval", ["native_dropout"], [f32(2, 3)], lambda x: torch.native_dropout(x, 0.5, False),
     since=12, fails={11: "supported from opset 12"})
case("native_dropout_train_p0", ["native_dropout"], [f32(2, 3)], lambda x: torch.native_dropout(x, 0.0, True),
     training=True, since=12)
case("weight_norm", ["_weight_norm"], [f32(4, 3, 2), f32(4, 1, 1, low=0.5, high=2)],
     lambda v, g: torch._weight_norm(v, g, 0))
case("weight_norm_dims", ["_weight_norm"], [f32(4, 3), f32(1, 3, low=0.5, high=2), f32(1, 1)],
     lambda v, g, g_all: (torch._weight_norm(v, g, 1), torch._weight_norm(v, g_all, -1)))
case("channel_shuffle", ["channel_shuffle"], [f32(2, 6, 3, 2)],
     lambda x: (torch.channel_shuffle(x, 2), torch.channel_shuffle(x, 3)))
case("channel_shuffle_3d_input", ["channel_shuffle"], [f32(2, 6, 5)], lambda x: torch.channel_shuffle(x, 3))
case("native_channel_shuffle", ["native_channel_shuffle"], [f32(1, 4, 2, 2)],
     lambda x: torch.native_channel_shuffle(x, 2))
case("im2col", ["im2col"], [f32(2, 3, 5, 6)],
     lambda x: (F.unfold(x, 2), F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))), since=11,
     fails={9: "supported from opset 10"})
case("im2col_unbatched_dynamic", ["im2col"], [f32(3, 5, 6)], lambda x: F.unfold(x, 3, stride=2),
     dynamic={0: [1, 2]}, since=11)
case("col2im", ["col2im"], [f32(2, 12, 12), f32(2, 18, 12)],
     lambda x, y: (F.fold(x, (4, 5), 2), F.fold(y, (5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))),
     opsets=NEW_OPSETS)
case("col2im_unbatched", ["col2im"], [f32(12, 12)], lambda x: F.fold(x, (4, 5), 2), opsets=NEW_OPSETS)
case("conv_tbc", ["conv_tbc"], [f32(7, 2, 3), f32(3, 3, 4), f32(4)],
     lambda x, w, b: (torch.conv_tbc(x, w, b, 1), torch.conv_tbc(x, w, b, 0)), atol=1e-4)
CONVOLUTION_IR = """
graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %stride : int[] = prim::Constant[value=[2, 1]]()
  %pad : int[] = prim::Constant[value=[1, 0]]()
  %dil : int[] = prim::Constant[value=[1, 1]]()
  %outpad : int[] = prim::Constant[value=[0, 0]]()
  %transposed : bool = prim::Constant[value=0]()
  %groups : int = prim::Constant[value=2]()
  %y : Tensor = aten::convolution(%x, %w, %b, %stride, %pad, %dil, %transposed, %outpad, %groups)
  return (%y)
"""
case("convolution", ["convolution"], [f32(1, 4, 6, 6), f32(6, 2, 3, 3), f32(6)], ir=CONVOLUTION_IR, atol=1e-4)

EMB_W = dict(w=torch.arange(24.0).reshape(8, 3) / 7 - 1)
case("embedding_bag_sum_mean", ["embedding_bag"], [ints(7, high=8)],
     module=lambda: With(lambda s, i: (F.embedding_bag(i, s.w, s.off, mode="sum"),
                                       F.embedding_bag(i, s.w, s.off, mode="mean")),
                         off=torch.tensor([0, 2, 2, 5]), **EMB_W))
case("embedding_bag_max", ["embedding_bag"], [ints(7, high=8)],
     module=lambda: With(lambda s, i: F.embedding_bag(i, s.w, s.off, mode="max"), off=torch.tensor([0, 3, 4]), **EMB_W))
case("embedding_bag_last_offset_psw", ["embedding_bag"], [ints(6, high=8), f32(6)],
     module=lambda: With(lambda s, i, p: F.embedding_bag(i, s.w, s.off, mode="sum", per_sample_weights=p,
                                                         include_last_offset=True),
                         off=torch.tensor([0, 1, 4, 6]), **EMB_W))
case("embedding_bag_padding_idx", ["embedding_bag"], [ints(7, high=4)],
     module=lambda: With(lambda s, i: F.embedding_bag(i, s.w, s.off, mode="mean", padding_idx=1),
                         off=torch.tensor([0, 3, 5]), **EMB_W))
case("embedding_bag_dynamic", ["embedding_bag"], [ints(7, high=8)],
     module=lambda: With(lambda s, i: F.embedding_bag(i, s.w, s.off, mode="mean"), off=torch.tensor([0, 2, 2, 5]),
                         **EMB_W), dynamic={0: [0]}, since=11)
case("embedding_renorm_p1", ["embedding_renorm_"], [ints(4, high=8)],
     module=lambda: With(lambda s, i: torch.embedding_renorm_(s.w * 1, i, 1.2, 1.0), **EMB_W))
case("embedding_renorm_functional", ["embedding_renorm"], [ints(4, high=8)],
     module=lambda: With(lambda s, i: torch.ops.aten.embedding_renorm(s.w, i, 1.0, 2.0), **EMB_W))

# ---- opset 8, torch.onnx 1.13's lowest for these: Upsample-7 takes the scales as an attribute;
# MatMul-1/Gemm-7 take floats only, so integer products are computed in float

case("upsample_nearest_opset8", ["upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d"],
     [f32(2, 3, 5), f32(1, 2, 3, 4), f32(1, 2, 2, 3, 3)],
     lambda x, y, z: (F.interpolate(x, scale_factor=3), F.interpolate(y, size=(6, 12)),
                      F.interpolate(y, scale_factor=(1.5, 2.5)), F.interpolate(z, scale_factor=2)),
     opsets=[8])
case("interpolate_nearest_opset8", ["__interpolate"], [f32(1, 2, 3, 4)], ir=INTERPOLATE_SCALE_IR, opsets=[8])
case("upsample_bilinear2d_opset8", ["upsample_bilinear2d"], [f32(1, 2, 3, 4)],
     lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), opsets=[], fails={8: NEEDS_11})
case("matmul_opset8", ["mm", "bmm", "matmul"], [f32(3, 4), f32(4, 5), f32(2, 3, 4), f32(2, 4, 5)],
     lambda a, b, c, d: (torch.mm(a, b), torch.bmm(c, d), torch.matmul(c, b)), opsets=[8])
case("matmul_int_opset8", ["mm", "bmm", "matmul"],
     [ints(3, 4, low=-4, high=4), ints(4, 5, low=-4, high=4), ints(2, 3, 4, low=-4, high=4),
      ints(2, 4, 5, low=-4, high=4)],
     lambda a, b, c, d: (torch.mm(a, b), torch.bmm(c, d), torch.matmul(c, b)), opsets=[8, 9])
case("addmm_opset8", ["addmm"], [f32(3, 5), f32(3, 4), f32(4, 5)],
     lambda s, a, b: (torch.addmm(s, a, b), torch.addmm(s, a, b, beta=0.5, alpha=2)), opsets=[8])
case("addmm_int_opset8", ["addmm"], [ints(3, 5, low=-4, high=4), ints(3, 4, low=-4, high=4), ints(4, 5, low=-4, high=4)],
     lambda s, a, b: torch.addmm(s, a, b, beta=2, alpha=3), opsets=[8])

UNREACHABLE.update({
    "aten::get_pool_ceil_padding": "torch 1.13 has no aten::get_pool_ceil_padding operator (torch.onnx 1.13 "
                                   "registers its pooling helper under that name), so no loadable graph contains "
                                   "it; the mapping computes what that helper computes",
})
