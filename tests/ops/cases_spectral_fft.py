"""Rows for the spectral pack's torch.fft mappings (plugins/spectral/fft.cpp): the 1-D, 2-D and n-D
transforms and the shifts, on real and complex inputs, with n/s, dim and every norm.

A node that reads or makes a complex value is converted by the op's entry for complex values,
declared "fft_x[complex]"; irfft/hfft of a real tensor (real in, real out) and the shifts of a real
tensor take the op's real entry, declared "fft_x". Complex inputs and outputs are compared as
their real pairs (torch.view_as_real). Each transform is a MatMul with a constant basis below
opset 17 (static lengths) and ONNX DFT from 17 (irfft: the basis at every opset), hence 11, 13, 17.
"""
import torch
from op_framework import c64, c128, case, f32, f64, ints

FFT = [11, 13, 17]  # the transforms: registered from 11; 17 is ONNX DFT
SHIFT = [9, 11, 13, 17]  # the shifts: Slice and Concat at every opset
NORMS = ("backward", "forward", "ortho")


def rows(id, op, inputs, fn, opsets=FFT, **kw):
    # Transforms sum many products: float32 rounding (ONNX Runtime's DFT, the MatMul basis) leaves
    # ~1e-5 on outputs that should be exactly 0 (the Nyquist bin's imaginary part).
    kw.setdefault("atol", 1e-4)
    case(id, [op], inputs, fn, opsets=opsets, **kw)


# ---------------------------------------------------------------- fft / ifft

rows("fft_real", "fft_fft[complex]", [f32(3, 8)], lambda x: torch.fft.fft(x))
rows("fft_real_1d", "fft_fft[complex]", [f32(8)], lambda x: torch.fft.fft(x))  # no batch dim: DFT's axis 0
rows("fft_real_n_dim0", "fft_fft[complex]", [f32(5, 3)], lambda x: torch.fft.fft(x, n=4, dim=0))
rows("fft_int", "fft_fft[complex]", [ints(2, 6, low=-4, high=5)], lambda x: torch.fft.fft(x))
rows("fft_complex", "fft_fft[complex]", [c64(3, 8)], lambda z: torch.fft.fft(z))
rows("fft_complex_1d", "fft_fft[complex]", [c64(7)], lambda z: torch.fft.fft(z))
rows("fft_complex_n_short", "fft_fft[complex]", [c64(2, 3, 8)], lambda z: torch.fft.fft(z, n=5, dim=1))
rows("fft_complex_n_long", "fft_fft[complex]", [c64(4, 6)], lambda z: torch.fft.fft(z, n=9, dim=-1))
rows("fft_complex128", "fft_fft[complex]", [c128(2, 6)], lambda z: torch.fft.fft(z, dim=0))
for norm in NORMS:
    rows(f"fft_norm_{norm}", "fft_fft[complex]", [c64(3, 6), f32(2, 5)],
         lambda z, x, norm=norm: (torch.fft.fft(z, norm=norm), torch.fft.fft(x, n=7, norm=norm)))
    rows(f"ifft_norm_{norm}", "fft_ifft[complex]", [c64(3, 6), f32(2, 5)],
         lambda z, x, norm=norm: (torch.fft.ifft(z, norm=norm), torch.fft.ifft(x, n=4, dim=0, norm=norm)))
rows("ifft_real", "fft_ifft[complex]", [f32(4, 6)], lambda x: torch.fft.ifft(x))
rows("ifft_complex_n", "fft_ifft[complex]", [c64(5, 4)], lambda z: torch.fft.ifft(z, n=3, dim=0))
rows("fft_ifft_roundtrip", "fft_ifft[complex]", [c64(2, 8)], lambda z: torch.fft.ifft(torch.fft.fft(z)))

# ---------------------------------------------------------------- rfft / irfft

rows("rfft", "fft_rfft[complex]", [f32(3, 8)], lambda x: torch.fft.rfft(x))
rows("rfft_odd", "fft_rfft[complex]", [f32(2, 7)], lambda x: torch.fft.rfft(x))
rows("rfft_1d_n_long", "fft_rfft[complex]", [f32(6)], lambda x: torch.fft.rfft(x, n=11))
rows("rfft_n_short_dim0", "fft_rfft[complex]", [f32(8, 3)], lambda x: torch.fft.rfft(x, n=5, dim=0))
rows("rfft_float64", "fft_rfft[complex]", [f64(2, 10)], lambda x: torch.fft.rfft(x, norm="ortho"))
for norm in NORMS:
    rows(f"rfft_norm_{norm}", "fft_rfft[complex]", [f32(3, 6)], lambda x, norm=norm: torch.fft.rfft(x, norm=norm))
    rows(f"irfft_norm_{norm}", "fft_irfft[complex]", [c64(3, 5)],
         lambda z, norm=norm: (torch.fft.irfft(z, norm=norm), torch.fft.irfft(z, n=7, norm=norm)))
rows("irfft", "fft_irfft[complex]", [c64(3, 5)], lambda z: torch.fft.irfft(z))  # n = 2*(5-1)
rows("irfft_n_odd_long", "fft_irfft[complex]", [c64(2, 4)], lambda z: torch.fft.irfft(z, n=9))
rows("irfft_n_short_dim0", "fft_irfft[complex]", [c64(6, 3)], lambda z: torch.fft.irfft(z, n=4, dim=0))
rows("irfft_1d", "fft_irfft[complex]", [c64(5)], lambda z: torch.fft.irfft(z))
rows("irfft_real", "fft_irfft", [f32(3, 5)], lambda x: torch.fft.irfft(x, n=7))  # real in, real out
rows("rfft_irfft_roundtrip", "fft_irfft[complex]", [f32(2, 9)], lambda x: torch.fft.irfft(torch.fft.rfft(x), n=9))

# ---------------------------------------------------------------- hfft / ihfft

rows("hfft", "fft_hfft[complex]", [c64(3, 5)], lambda z: torch.fft.hfft(z))
rows("hfft_n_dim0_ortho", "fft_hfft[complex]", [c64(4, 3)], lambda z: torch.fft.hfft(z, n=5, dim=0, norm="ortho"))
rows("hfft_forward", "fft_hfft[complex]", [c64(2, 6)], lambda z: torch.fft.hfft(z, n=8, norm="forward"))
rows("hfft_real", "fft_hfft", [f32(2, 5)], lambda x: torch.fft.hfft(x))
for norm in NORMS:
    rows(f"ihfft_norm_{norm}", "fft_ihfft[complex]", [f32(3, 8)],
         lambda x, norm=norm: (torch.fft.ihfft(x, norm=norm), torch.fft.ihfft(x, n=5, dim=0, norm=norm)))

# ---------------------------------------------------------------- 2-D

rows("fft2_real", "fft_fft2[complex]", [f32(2, 4, 6)], lambda x: torch.fft.fft2(x))
rows("fft2_complex_s", "fft_fft2[complex]", [c64(2, 4, 6)], lambda z: torch.fft.fft2(z, s=(3, 8)))
rows("fft2_complex_dims_ortho", "fft_fft2[complex]", [c64(3, 4, 5)],
     lambda z: torch.fft.fft2(z, s=(2, -1), dim=(2, 0), norm="ortho"))
rows("ifft2", "fft_ifft2[complex]", [c64(2, 4, 6)],
     lambda z: (torch.fft.ifft2(z), torch.fft.ifft2(z, s=(5, 3), norm="forward")))
rows("ifft2_real", "fft_ifft2[complex]", [f32(4, 6)], lambda x: torch.fft.ifft2(x, norm="ortho"))
rows("rfft2", "fft_rfft2[complex]", [f32(2, 4, 6)], lambda x: (torch.fft.rfft2(x), torch.fft.rfft2(x, s=(3, 7))))
rows("rfft2_dims_forward", "fft_rfft2[complex]", [f32(5, 4, 3)],
     lambda x: torch.fft.rfft2(x, dim=(-1, 0), norm="forward"))
rows("irfft2", "fft_irfft2[complex]", [c64(2, 4, 4)], lambda z: (torch.fft.irfft2(z), torch.fft.irfft2(z, s=(3, 5))))
rows("irfft2_dims_ortho", "fft_irfft2[complex]", [c64(4, 3, 5)],
     lambda z: torch.fft.irfft2(z, dim=(2, 0), norm="ortho"))
rows("irfft2_real", "fft_irfft2", [f32(3, 4)], lambda x: torch.fft.irfft2(x))
rows("rfft2_irfft2_roundtrip", "fft_irfft2[complex]", [f32(2, 4, 7)],
     lambda x: torch.fft.irfft2(torch.fft.rfft2(x), s=(4, 7)))
rows("hfft2", "fft_hfft2[complex]", [c64(3, 4)], lambda z: (torch.fft.hfft2(z), torch.fft.hfft2(z, s=(2, 5))))
rows("hfft2_real", "fft_hfft2", [f32(3, 4)], lambda x: torch.fft.hfft2(x, norm="ortho"))
rows("ihfft2", "fft_ihfft2[complex]", [f32(3, 6)],
     lambda x: (torch.fft.ihfft2(x), torch.fft.ihfft2(x, s=(4, 5), norm="forward")))

# ---------------------------------------------------------------- n-D

rows("fftn_complex", "fft_fftn[complex]", [c64(2, 3, 4)], lambda z: torch.fft.fftn(z))
rows("fftn_real_s", "fft_fftn[complex]", [f32(2, 3, 4)], lambda x: torch.fft.fftn(x, s=(5, 3)))  # the last 2 dims
rows("fftn_dims_forward", "fft_fftn[complex]", [c64(3, 2, 5)], lambda z: torch.fft.fftn(z, dim=(0, 2), norm="forward"))
rows("ifftn", "fft_ifftn[complex]", [c64(2, 3, 4)],
     lambda z: (torch.fft.ifftn(z), torch.fft.ifftn(z, s=(2, -1, 6), norm="ortho")))
rows("ifftn_real_dim", "fft_ifftn[complex]", [f32(3, 4, 2)], lambda x: torch.fft.ifftn(x, dim=(1,)))
rows("rfftn", "fft_rfftn[complex]", [f32(2, 3, 6)], lambda x: (torch.fft.rfftn(x), torch.fft.rfftn(x, s=(4, 5))))
rows("rfftn_dims_ortho", "fft_rfftn[complex]", [f32(4, 3, 5)],
     lambda x: torch.fft.rfftn(x, dim=(2, 0), norm="ortho"))
rows("irfftn", "fft_irfftn[complex]", [c64(2, 3, 4)],
     lambda z: (torch.fft.irfftn(z), torch.fft.irfftn(z, s=(4, 7), norm="forward")))
rows("irfftn_dims", "fft_irfftn[complex]", [c64(3, 4, 2)], lambda z: torch.fft.irfftn(z, s=(5, 3), dim=(1, 0)))
rows("irfftn_real", "fft_irfftn", [f32(2, 3, 4)], lambda x: torch.fft.irfftn(x, norm="ortho"))
rows("rfftn_irfftn_roundtrip", "fft_irfftn[complex]", [f32(3, 4, 5)],
     lambda x: torch.fft.irfftn(torch.fft.rfftn(x), s=(3, 4, 5)))
rows("hfftn", "fft_hfftn[complex]", [c64(2, 3, 4)], lambda z: (torch.fft.hfftn(z), torch.fft.hfftn(z, dim=(0, 2))))
rows("hfftn_real", "fft_hfftn", [f32(3, 4)], lambda x: torch.fft.hfftn(x, s=(3, 5), norm="forward"))
rows("ihfftn", "fft_ihfftn[complex]", [f32(2, 3, 4)],
     lambda x: (torch.fft.ihfftn(x), torch.fft.ihfftn(x, s=(4, 3), norm="ortho")))

# ---------------------------------------------------------------- fftshift / ifftshift


def shifts(id, op, inputs, fn, opsets=SHIFT, **kw):
    """Rows of shifts alone: they move values, exactly (the default tolerance)."""
    case(id, [op], inputs, fn, opsets=opsets, **kw)


shifts("fftshift_real", "fft_fftshift", [f32(4, 5)],
       lambda x: (torch.fft.fftshift(x), torch.fft.fftshift(x, dim=1), torch.fft.fftshift(x, dim=(0,))))
shifts("ifftshift_real", "fft_ifftshift", [f32(3, 5, 2)],
       lambda x: (torch.fft.ifftshift(x), torch.fft.ifftshift(x, dim=(-1, 1))))
shifts("fftshift_complex", "fft_fftshift[complex]", [c64(3, 4)],
       lambda z: (torch.fft.fftshift(z), torch.fft.fftshift(z, dim=-1)))
shifts("ifftshift_complex", "fft_ifftshift[complex]", [c64(5, 1, 4)],
       lambda z: (torch.fft.ifftshift(z), torch.fft.ifftshift(z, dim=0)))
shifts("fftshift_dynamic", "fft_fftshift", [f32(3, 5)],
       lambda x: (torch.fft.fftshift(x), torch.fft.ifftshift(x, dim=1)), opsets=[11, 13, 17], dynamic={0: [0, 1]})
rows("fftshift_of_fft", "fft_fftshift[complex]", [f32(2, 7)], lambda x: torch.fft.fftshift(torch.fft.fft(x), dim=-1))

# ---------------------------------------------------------------- script mode, run-time lengths


def s_rfft_irfft(x):
    return torch.fft.irfft(torch.fft.rfft(x, n=6, norm="ortho"), n=6, norm="ortho")


def s_fft2_shift(x):
    return torch.fft.fftshift(torch.fft.fft2(x, s=[4, 3]), dim=[-2, -1])


case("rfft_irfft_script", ["fft_rfft[complex]", "fft_irfft[complex]"], [f32(2, 8)], s_rfft_irfft, script=True,
     opsets=FFT, atol=1e-4)
case("fft2_fftshift_script", ["fft_fft2[complex]", "fft_fftshift[complex]"], [f32(3, 5)], s_fft2_shift, script=True,
     opsets=FFT, atol=1e-4)
# The signal's length known only at run time: with n given, the signal is zero-padded by n and cut
# to n (exactly n samples, whatever the run-time length); without n, the length must be static.
rows("fft_dynamic_length", "fft_fft[complex]", [f32(2, 10)], lambda x: torch.fft.fft(x, n=8), dynamic={0: [1]})
rows("rfft_irfft_dynamic_length", "fft_irfft[complex]", [f32(3, 7)],
     lambda x: torch.fft.irfft(torch.fft.rfft(x, n=12), n=12), dynamic={0: [0, 1]})
rows("fft_dynamic_no_n", "fft_fft[complex]", [f32(2, 6)], lambda x: torch.fft.fft(x), opsets=[],
     fails={o: "needs the size of dim 1 known at export time" for o in FFT}, dynamic={0: [1]})
