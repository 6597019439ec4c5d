"""Rows for the spectral pack's complex values (real pairs): views, parts, arithmetic, creation,
padding, stft/istft, and the structural ops other packs lift to complex values (componentwise)."""
import torch
import torch.nn.functional as F
from op_framework import c64, c128, case, f32, grid, ints, pos

C = "[complex]"

# ---- views and parts

case("view_as_real_c", ["view_as_real" + C], [c64(2, 3)], lambda z: torch.view_as_real(z * 2))
case("view_as_complex_c", ["view_as_complex" + C], [f32(3, 4, 2)], lambda x: torch.view_as_complex(x * 2))
case("real_imag_c", ["real" + C, "imag" + C], [c64(2, 5)], lambda z: (z.real, z.imag))
case("abs_angle_c", ["abs" + C, "angle" + C], [c64(3, 7)], lambda z: (z.abs(), z.angle()))
case("angle_axes_c", ["angle" + C, "complex" + C], [grid(4, 5), grid(4, 5)],
     lambda re, im: torch.complex(re, im).angle())
case("complex_polar_c", ["complex" + C, "polar" + C], [f32(2, 4), f32(4), pos(2, 4), f32(2, 4)],
     lambda a, b, r, t: (torch.view_as_real(torch.complex(a, b)), torch.view_as_real(torch.polar(r, t))))
case("conj_c", ["_conj" + C, "resolve_conj" + C, "conj_physical" + C], [c64(3, 2)],
     lambda z: (torch.view_as_real(z.conj().resolve_conj() * 1), torch.conj_physical(z)))
case("conj_scripted_c", ["conj" + C], [c64(3, 2)], ir="""graph(%z : Tensor):
  %c : Tensor = aten::conj(%z)
  %r : Tensor = aten::resolve_conj(%c)
  return (%r)""")
case("complex128_c", ["abs" + C, "mul" + C], [c128(2, 3)], lambda z: (z * z).abs())

# ---- arithmetic (complex with complex, real tensors and numbers)

case("add_sub_c", ["add" + C, "sub" + C], [c64(2, 3), c64(3), f32(2, 3)],
     lambda z, w, x: (z + w, z - x, x - z, torch.add(z, w, alpha=2), z + 1.5, torch.sub(z, w, alpha=-0.5)))
case("add_sub_inplace_c", ["add_" + C, "sub_" + C], [c64(2, 3), c64(2, 3)],
     lambda z, w: ((z * 1).add_(w), (z * 1).sub_(w, alpha=3)))
case("mul_div_c", ["mul" + C, "div" + C], [c64(2, 3), c64(2, 3), f32(3)],
     lambda z, w, x: (z * w, z * x, x * z, z * 2.5, z / w, z / x, x / z, z / 4))
case("mul_div_inplace_c", ["mul_" + C, "div_" + C], [c64(4), c64(4), pos(4)],
     lambda z, w, x: ((z * 1).mul_(w), (z * 1).div_(x), (z * 1).div_(w)))
case("pow_c", ["pow" + C], [c64(2, 5), f32(2, 5)], lambda z, p: (z ** 2, z ** 0.5, z ** 3, z ** p), rtol=1e-3, atol=1e-4)
case("pow_inplace_c", ["pow_" + C], [c64(5)], lambda z: (z * 1).pow_(2))
case("neg_exp_c", ["neg" + C, "exp" + C], [c64(3, 3)], lambda z: (-z, torch.exp(z * 0.5)))
case("neg_exp_inplace_c", ["neg_" + C, "exp_" + C], [c64(3)], lambda z: ((z * 1).neg_(), (z * 1).exp_()))
case("matmul_c", ["matmul" + C], [c64(2, 3, 4), c64(4, 5)], lambda a, b: (a @ b, b.t() @ a.transpose(1, 2)))

# ---- creation and padding

case("zeros_ones_full_c", ["zeros" + C, "ones" + C, "full" + C], [f32(2, 3)],
     lambda x: (torch.zeros(x.shape, dtype=torch.complex64) + x, torch.ones(x.shape[1], dtype=torch.complex64) * x,
                torch.full(x.shape, 2.5, dtype=torch.complex64) - x))
case("like_c", ["zeros_like" + C, "ones_like" + C, "full_like" + C], [c64(2, 3)],
     lambda z: (torch.zeros_like(z) + z, torch.ones_like(z) * z, torch.full_like(z, -1.0) * z))
case("pad_c", ["pad" + C, "constant_pad_nd" + C], [c64(2, 3, 4)],
     lambda z: (F.pad(z, [1, 2]), F.pad(z, [0, 1, 2, 0], mode="reflect"), torch.constant_pad_nd(z, [1, -1, 0, 2])),
     since=11)
case("pad_value_c", ["constant_pad_nd" + C], [c64(2, 3)], lambda z: torch.constant_pad_nd(z, [1, 1], 2.0), since=11,
     opsets=[], fails={11: "only 0", 13: "only 0", 17: "only 0"})

# ---- structural ops, lifted to complex values by their packs

case("shape_ops_c", ["view" + C, "reshape" + C, "flatten" + C, "unflatten" + C, "squeeze" + C, "unsqueeze" + C,
                     "transpose" + C, "t" + C, "permute" + C, "movedim" + C],
     [c64(2, 3, 4)],
     lambda z: (z.view(6, 4), z.reshape(4, 6), z.flatten(), z.flatten(1).unflatten(1, (4, 3)), z[:1].squeeze(0),
                z.unsqueeze(1), z.transpose(0, 2), z[0].t(), z.permute(2, 0, 1), torch.movedim(z, 0, -1)))
case("index_ops_c", ["select" + C, "slice" + C, "narrow" + C, "index" + C, "index_select" + C, "gather" + C],
     [c64(3, 5), ints(2, low=0, high=3)],
     lambda z, i: (z[1], z[:, 1:4], z.narrow(1, 2, 2), z[i], z.index_select(1, i), z.gather(1, i.expand(3, 2))))
case("join_split_c", ["cat" + C, "stack" + C, "unbind" + C, "split" + C, "split_with_sizes" + C, "chunk" + C],
     [c64(4, 3), c64(4, 3)],
     lambda a, b: (torch.cat([a, b], 1), torch.stack([a, b]), *a.unbind(1), *a.split(2), *a.split([1, 3]),
                   *b.chunk(2, 1)))
case("repeat_ops_c", ["expand" + C, "expand_as" + C, "repeat" + C, "flip" + C, "roll" + C, "diagonal" + C,
                      "reshape_as" + C, "view_as" + C],
     [c64(3, 1), c64(3, 4)],
     lambda a, b: (a.expand(3, 4), a.expand_as(b), a.repeat(2, 3), b.flip(1), b.roll(1, 1), b.diagonal(),
                   b.reshape_as(b.t()), b.view_as(b)))
case("reduce_ops_c", ["sum" + C, "mean" + C, "cumsum" + C], [c64(3, 4)],
     lambda z: (z.sum(), z.sum(1), z.mean(0, keepdim=True), z.cumsum(1)))
case("numel_size_c", ["numel" + C, "size" + C, "clone" + C, "contiguous" + C],
     [c64(3, 4)], lambda z: (torch.ones(1) * z.numel() * z.size(1) * z.dim(), z.clone(), z.transpose(0, 1).contiguous(),
                             z.detach()))

# ---- stft / istft (complex and real pairs; a Conv or ConvTranspose with the windowed basis)

WINDOW = torch.hann_window(16)


def stft_c(x):
    return torch.stft(x, 16, 4, window=WINDOW, return_complex=True)


case("stft_complex", ["stft" + C], [f32(2, 64)], stft_c, since=11, rtol=1e-3, atol=1e-4)
case("stft_complex_options", ["stft" + C], [f32(64)],
     lambda x: (torch.stft(x, 16, 5, win_length=12, window=torch.hamming_window(12), center=True, pad_mode="constant",
                           normalized=True, return_complex=True),
                torch.stft(x, 16, center=False, onesided=False, return_complex=True)),
     since=11, rtol=1e-3, atol=1e-4)
case("stft_real_pair", ["stft"], [f32(2, 64)],
     lambda x: torch.stft(x, 16, 4, window=WINDOW, return_complex=False), since=11, rtol=1e-3, atol=1e-4)
case("istft_c", ["istft" + C], [f32(2, 64)],
     lambda x: (torch.istft(stft_c(x), 16, 4, window=WINDOW), torch.istft(stft_c(x), 16, 4, window=WINDOW, length=60),
                torch.istft(stft_c(x), 16, 4, window=WINDOW, length=70)),
     since=11, rtol=1e-3, atol=1e-4)
case("istft_unbatched_c", ["istft" + C], [c64(9, 7)],
     lambda z: torch.istft(z, 16, 4, center=False, normalized=True), since=11, rtol=1e-3, atol=1e-4)
case("istft_length_runtime_c", ["istft" + C], [f32(2, 64)],
     lambda x: torch.istft(stft_c(x), 16, 4, window=WINDOW, length=x.shape[1] - 3), since=11, dynamic={0: [1]},
     rtol=1e-3, atol=1e-4)
def s_is_complex(x: torch.Tensor) -> torch.Tensor:
    z = torch.view_as_complex(x)
    k = 1
    if z.is_complex():
        k = 2
    return torch.view_as_real(z * k)


case("is_complex_c", ["is_complex" + C, "view_as_complex" + C], [f32(2, 3, 2)], s_is_complex, script=True)
